"""Read-side queries that build the page contexts (the JSON twins) of agents, sessions and refs."""

from __future__ import annotations

import os
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings
from django.db.models import F, Q, QuerySet
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _

from agentfs.layout import REFS_DIR
from agentfs.paths import UnsafePath, check_relative
from agentfs.refs import PLAIN_REF, ref_relative, ref_url_name
from agentfs.row_fields import WAIT
from canvases.mermaid.vocabulary import STATUS_VOCABULARY
from sessions import counters, search
from sessions.canvas_search import canvas_hits
from sessions.compression import compression
from sessions.instants import parse_instant
from sessions.keyset import LAST, SESSION_PAGE_SIZE, session_page
from sessions.models import Agent, AgentSession, Canvas, CanvasNode, Ref, Row
from sessions.page_types import (
    AgentCanvasItem,
    AgentDetail,
    AgentSessionItem,
    AgentSummary,
    RefPlace,
    RowItem,
    SearchPage,
    SessionTimeline,
    UnplacedPage,
)
from sessions.reader_words import line_problem_item, refusal_words, refused_item

UNMAPPED = Q(node_id__isnull=True) | Q(node_id=WAIT)


def agent_summary(agent: Agent, unplaced: counters.Unplaced | None = None) -> AgentSummary:
    unplaced = unplaced if unplaced is not None else counters.unplaced_counts(agent)
    return {
        "slug": agent.slug,
        "name": agent.name,
        "path": agent.path,
        "variant": agent.variant,
        "sessions": agent.sessions_count,
        "canvases": agent.canvases_count,
        "rows": agent.rows_count,
        "unmapped_rows": unplaced.null + unplaced.wait,
        "problems": agent.problems_count,
        "refs": agent.refs_count,
        "refs_bytes": agent.refs_bytes,
        "summary_bytes": agent.summary_bytes,
        "canvas_bytes": agent.canvas_bytes,
        # The headline figure of the design: how much smaller each layer is than the one below.
        "compression": compression(agent.refs_bytes, agent.summary_bytes, agent.canvas_bytes),
        "active_canvas": agent.active_mmd_file or None,
        "ingested_at": agent.ingested_at,
    }


def agent_get(slug: str) -> Agent:
    return get_object_or_404(Agent, slug=slug)


def session_get(agent: str, session: str) -> AgentSession:
    """The session a URL names (404 otherwise), its ``agent`` loaded in the same query."""
    sessions = AgentSession.objects.select_related("agent")
    return get_object_or_404(sessions, agent__slug=agent, session_id=session)


def placed_node_ids(agent: Agent) -> set[str]:
    """Every node id drawn on a canvas of the agent, plus the row form of the Go port's ``n_`` ids."""
    return set(counters.placed_keys(agent))


def unplaced_rows(agent: Agent) -> QuerySet[Row]:
    """Rows on no canvas of the agent, in file order, from the partial index on ``placed``."""
    return Row.objects.filter(agent=agent, placed=False).order_by("session_id", "line_no")


UNPLACED_PAGE = 50


def unplaced_page(agent: Agent, after: str = "") -> UnplacedPage:
    """One page of unplaced rows after the cursor ``<session pk>.<line_no>`` (keyset paging:
    two index range scans, whatever the page number)."""
    session_pk, line_no = 0, 0
    with suppress(ValueError):
        session_pk, line_no = (int(x) for x in after.split(".", 1))
    base = unplaced_rows(agent).select_related("session")
    rows: list[Row] = []
    if session_pk:  # the first page has no session to finish: one round trip less
        rows = list(base.filter(session_id=session_pk, line_no__gt=line_no)[: UNPLACED_PAGE + 1])
    if len(rows) <= UNPLACED_PAGE:
        rows += base.filter(session_id__gt=session_pk)[: UNPLACED_PAGE + 1 - len(rows)]
    more = None
    if len(rows) > UNPLACED_PAGE:
        rows = rows[:UNPLACED_PAGE]
        more = f"{rows[-1].session_id}.{rows[-1].line_no}"
    return {"unplaced": rows_json(agent, rows), "unplaced_more": more}


def rows_json(agent: Agent, rows: list[Row]) -> list[RowItem]:
    """Rows as JSON, each with where its ref is and whether that file is indexed."""
    locator = RefLocator(agent)
    refs = {row.pk: locator.locate(row.result_ref) for row in rows}
    names = {r["name"] for r in refs.values() if r and r["name"]}
    # No ordering: Ref's default one joins the agents table for nothing.
    present = set(
        Ref.objects.filter(agent=agent, name__in=names).order_by().values_list("name", flat=True)
    )
    out: list[RowItem] = []
    for row in rows:
        ref = refs[row.pk]
        if ref and ref["name"]:
            ref["exists"] = ref["name"] in present
        out.append(
            {
                "id": row.pk,
                "session": row.session.session_id,
                "line_no": row.line_no,
                "tool_call_id": row.tool_call_id,
                "tool_call": row.tool_call,
                "summary": row.summary,
                "score": row.score,
                "node_id": row.node_id,
                "offloaded": row.offloaded or None,
                "timestamp": row.timestamp,
                "result_ref": row.result_ref,
                "ref": ref,
                "extra": row.extra,
            }
        )
    return out


class RefLocator:
    """Where rows' ``result_ref`` point inside an agent folder, or why they are refused.

    The same answer as ``agentfs.refs.resolve_ref`` (its mapping, then ``confine``),
    but each folder on the way is resolved once per page instead of once per row: a path
    resolution is ~20 system calls, and a page lists up to 200 rows.
    """

    def __init__(self, agent: Agent) -> None:
        self.root = Path(agent.path).resolve()
        self._dirs: dict[PurePosixPath, tuple[str, str] | None] = {}

    def _folder(self, relative: PurePosixPath) -> tuple[str, str] | None:
        """The folder's resolved path and its name inside the agent folder, or None when a link
        takes it outside (resolved and confined once per page)."""
        if relative not in self._dirs:
            folder = (self.root / relative).resolve()
            inside = folder == self.root or folder.is_relative_to(self.root)
            name = folder.relative_to(self.root).as_posix() if inside else ""
            prefix = "" if name == "." else name + "/"
            self._dirs[relative] = (str(folder), prefix) if inside else None
        return self._dirs[relative]

    def locate(self, result_ref: str | None) -> RefPlace | None:
        if not result_ref:
            return None
        try:
            plain = PLAIN_REF.match(result_ref)
            if plain:  # the plugin's own form: no need to parse it as a path
                relative, folder, name = result_ref, PurePosixPath(REFS_DIR), plain.group(1)
            else:
                relative = ref_relative(result_ref)
                pure = check_relative(relative)
                folder, name = pure.parent, pure.name
            found = self._folder(folder)
            if found is None:
                raise _outside(relative)
            real_folder, prefix = found
            full = os.path.join(real_folder, name)
            if os.path.islink(full):  # the rare case: confine what the link names
                path = Path(full).resolve()
                if not path.is_relative_to(self.root):
                    raise _outside(relative)
                name = path.relative_to(self.root).as_posix()
            else:
                name = prefix + name
        except (UnsafePath, ValueError) as exc:
            refused = {"why": refusal_words(exc)}
            return {"name": None, "url_name": None, "exists": False, "error": _("refused: %(why)s") % refused}
        return {"name": name, "url_name": ref_url_name(name), "exists": False, "error": None}


def _outside(relative: str) -> UnsafePath:
    return UnsafePath("path_leaves", path=relative)


def ref_locate(agent: Agent, result_ref: str | None) -> RefPlace | None:
    """Where one row's ``result_ref`` points (see ``RefLocator``)."""
    return RefLocator(agent).locate(result_ref)


AGENT_CANVASES = 25


def agent_detail(agent: Agent, canvases_before: str = "") -> AgentDetail:
    """The agent page. Canvases newest first, a page at a time (a year of them is thousands)."""
    listed = Canvas.objects.filter(agent=agent).defer("text").order_by("-filename")
    if canvases_before:
        listed = listed.filter(filename__lt=canvases_before)
    page = list(listed[: AGENT_CANVASES + 1])
    canvases_more = page[AGENT_CANVASES - 1].filename if len(page) > AGENT_CANVASES else None
    canvases: list[AgentCanvasItem] = []
    for canvas in page[:AGENT_CANVASES]:
        canvases.append(
            {
                "file": canvas.filename,
                "number": canvas.number,
                "label": canvas.label,
                "task_goal": canvas.task_goal,
                "progress": canvas.progress,
                "status_counts": canvas.status_counts,
                "nodes": canvas.node_count,
                "updated": canvas.updated_time,
                "active": canvas.filename == agent.active_mmd_file,
                "has_errors": canvas.has_errors,
                "problems": len(canvas.problems),
                "size": canvas.size,
            }
        )
    sessions: list[AgentSessionItem] = [
        {
            "id": s.session_id,
            "file": s.relpath,
            "session_key": s.session_key or None,
            "rows": s.rows_count,
            "problems": [line_problem_item(p) for p in s.problems],
            "first": s.first_timestamp,
            "last": s.last_timestamp,
        }
        for s in agent.sessions.all()
    ]
    sessions.sort(key=lambda s: s["id"])
    sessions.sort(key=_last_activity, reverse=True)  # newest first; stable: ties stay by id
    unplaced = counters.unplaced_counts(agent)
    state = refused_item(agent.state_problem or agent.state_error)
    registry = refused_item(agent.registry_problem or agent.registry_error)
    return {
        "agent": agent_summary(agent, unplaced),
        "state": {
            "data": agent.state_data,
            "error": state["text"] or None,
            "error_code": state["code"],
        },
        "registry_error": registry["text"] or None,
        "registry_error_code": registry["code"],
        "refused_links": [refused_item(stored) for stored in agent.refused_links],
        "canvases": canvases,
        "canvases_more": canvases_more,
        "sessions": sessions,
        "unplaced_rows": unplaced.total,
        "unplaced_by_kind": {
            "null": unplaced.null,
            "wait": unplaced.wait,
            "dangling": unplaced.dangling,
        },
    }


_NO_TIME = datetime.min.replace(tzinfo=UTC)


def _last_activity(session: AgentSessionItem) -> datetime:
    """A session's last stamp as an instant (any offset); no usable stamp sorts oldest."""
    return parse_instant(session["last"]) or parse_instant(session["first"]) or _NO_TIME


def session_rows(agent: Agent, session: AgentSession, params: dict[str, str]) -> SessionTimeline:
    """A session's timeline, a page at a time, keyset-paged by ``line_no`` (see ``_session_page``).

    The total of a filtered view is counted on its first page (and old ``?page=`` links) only:
    counting the matches again on every page was a scan of the session per click.
    """
    rows = Row.objects.filter(session=session).select_related("session").order_by("line_no")
    unfiltered = rows
    node = params.get("node", "").strip()
    if node:
        # through (agent, node_id, session, line_no): the node's rows, in order
        rows = rows.filter(agent=agent, node_id=node)
    if params.get("unmapped"):
        rows = rows.filter(UNMAPPED, agent=agent)
    offloaded = params.get("offloaded", "")
    if offloaded == "deleted":
        rows = rows.filter(offloaded="deleted")
    elif offloaded == "offloaded":
        rows = rows.exclude(offloaded="")
    elif offloaded == "none":
        rows = rows.filter(offloaded="")
    for key, lookup in (("min_score", "score__gte"), ("max_score", "score__lte")):
        if params.get(key):
            with suppress(ValueError):
                rows = rows.filter(**{lookup: float(params[key])})
    page = session_page(rows, params)
    count: int | None = None
    if rows.query.where == unfiltered.query.where:  # no filter: the count kept at ingest
        count = session.rows_count
    elif page.number is not None:
        count = rows.count()
    pages = max(1, -(-count // SESSION_PAGE_SIZE)) if count is not None else None
    number = pages if page.number == LAST else page.number
    return {
        "agent": agent.slug,
        "session": {
            "id": session.session_id,
            "file": session.relpath,
            "session_key": session.session_key or None,
            "rows": session.rows_count,
            "problems": [line_problem_item(p) for p in session.problems],
        },
        "filters": {
            k: params.get(k, "")
            for k in ("node", "unmapped", "offloaded", "min_score", "max_score")
        },
        "page": number,
        "pages": pages,
        "count": count,
        "before": page.before,
        "after": page.after,
        "rows": rows_json(agent, page.rows),
    }


def search_context(params: dict[str, str]) -> SearchPage:
    """The search page: hits per kind, newest first, each with the cursor of its "more" link."""
    query = params.get("q", "").strip()
    agent = Agent.objects.filter(slug=params["agent"]).first() if params.get("agent") else None
    session = None
    if agent is not None and params.get("session"):
        session = AgentSession.objects.filter(agent=agent, session_id=params["session"]).first()
    status = params.get("status", "").strip()
    filters = search.Filters(
        agent_id=agent.pk if agent else None,
        session_pk=session.pk if session else None,
        status=status,
    )
    unknown = [
        name
        for name, given, found in (("agent", "agent", agent), ("session", "session", session))
        if params.get(given) and found is None
    ]

    def cursor(name: str) -> int | None:
        with suppress(ValueError):
            return int(params.get(name, ""))
        return None

    kinds = tuple(
        k for k in ("canvases", "nodes", "rows", "refs") if params.get("only", k) == k
    )
    found = (
        search.search_ids(
            query,
            filters,
            rows_before=cursor("rows_before"),
            nodes_before=cursor("nodes_before"),
            refs_before=cursor("refs_before"),
            kinds=kinds,
        )
        if not unknown
        else search.search_ids("", filters)
    )
    nodes = _in_order(
        CanvasNode.objects.filter(pk__in=found["nodes"].ids).values(
            "id",
            "node_id",
            "title",
            "status",
            "summary",
            agent_slug=F("agent__slug"),
            canvas_file=F("canvas__filename"),
        ),
        found["nodes"].ids,
    )
    rows = _in_order(
        Row.objects.filter(pk__in=found["rows"].ids).values(
            "id",
            "line_no",
            "node_id",
            "tool_call",
            "summary",
            "timestamp",
            agent_slug=F("agent__slug"),
            session_name=F("session__session_id"),
        ),
        found["rows"].ids,
    )
    refs = _in_order(
        Ref.objects.filter(pk__in=found["refs"].ids).values(
            "id", "name", "tool", "timestamp", agent_slug=F("agent__slug")
        ),
        found["refs"].ids,
    )
    return {
        "q": query,
        "filters": {
            "agent": agent.slug if agent else "",
            "session": session.session_id if session else "",
            "status": status,
        },
        "unknown_filters": unknown,
        "choices": {
            "agents": list(Agent.objects.values_list("slug", flat=True)),
            "sessions": list(
                AgentSession.objects.filter(agent=agent).values_list("session_id", flat=True)
            )
            if agent
            else [],
            "statuses": list(SEARCH_STATUSES),
        },
        "nodes": [
            {
                "id": n["id"],
                "node_id": n["node_id"],
                "title": n["title"],
                "status": n["status"],
                "summary": n["summary"],
                "agent": n["agent_slug"],
                "canvas": n["canvas_file"],
            }
            for n in nodes
        ],
        "rows": [
            {
                "id": r["id"],
                "line_no": r["line_no"],
                "node_id": r["node_id"],
                "tool_call": r["tool_call"],
                "summary": r["summary"],
                "timestamp": r["timestamp"],
                "agent": r["agent_slug"],
                "session": r["session_name"],
            }
            for r in rows
        ],
        "refs": [
            {
                "id": r["id"],
                "name": r["name"],
                "tool": r["tool"],
                "timestamp": r["timestamp"],
                "agent": r["agent_slug"],
                "url_name": ref_url_name(r["name"]),
            }
            for r in refs
        ],
        "canvases": [
            {"agent": h.agent, "canvas": h.canvas, "places": h.places}
            for h in canvas_hits(query, agent_id=filters.agent_id)
        ]
        if "canvases" in kinds and not (unknown or session or status)
        else [],
        "short_query": 0 < len(query) < search.MIN_QUERY_CHARS,
        "refs_indexed": settings.MEMVIZ_INDEX_REF_TEXT,
        "more": {name: f.before for name, f in found.items()},
        "partial": {name: f.partial for name, f in found.items()},
    }


SEARCH_STATUSES = STATUS_VOCABULARY


def _in_order(values: QuerySet, ids: list[int]) -> list[dict[str, Any]]:
    by_pk = {item["id"]: item for item in values}
    return [by_pk[pk] for pk in ids if pk in by_pk]
