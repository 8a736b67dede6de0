"""Read-side queries that build the page contexts (the JSON twins) of agents, sessions and refs."""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import Any

from django.core.paginator import Paginator
from django.db.models import Q, QuerySet
from django.shortcuts import get_object_or_404

from canvases.models import Canvas, CanvasNode
from sessions.memory.layout import folder_refusals
from sessions.memory.paths import UnsafePath
from sessions.memory.refs import resolve_ref
from sessions.models import Agent, AgentSession, Ref, Row

UNMAPPED = Q(node_id__isnull=True) | Q(node_id="wait")


def ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 1) if denominator else None


def agent_summary(agent: Agent) -> dict[str, Any]:
    return {
        "slug": agent.slug,
        "name": agent.name,
        "path": agent.path,
        "variant": agent.variant,
        "sessions": agent.sessions_count,
        "canvases": agent.canvases_count,
        "rows": agent.rows_count,
        "unmapped_rows": agent.unmapped_count,
        "problems": agent.problems_count,
        "refs": agent.refs_count,
        "refs_bytes": agent.refs_bytes,
        "summary_bytes": agent.summary_bytes,
        "canvas_bytes": agent.canvas_bytes,
        # The headline figure of the design: how much smaller each layer is than the one below.
        "compression": {
            "refs_to_summaries": ratio(agent.refs_bytes, agent.summary_bytes),
            "summaries_to_canvas": ratio(agent.summary_bytes, agent.canvas_bytes),
            "refs_to_canvas": ratio(agent.refs_bytes, agent.canvas_bytes),
        },
        "active_canvas": agent.active_mmd_file or None,
        "ingested_at": agent.ingested_at,
    }


def agents_list() -> dict[str, Any]:
    return {"agents": [agent_summary(a) for a in Agent.objects.all()]}


def agent_get(slug: str) -> Agent:
    return get_object_or_404(Agent, slug=slug)


def placed_node_ids(agent: Agent) -> set[str]:
    """Every node id drawn on a canvas of the agent, plus the row form of the Go port's ``n_`` ids."""
    ids = set(CanvasNode.objects.filter(agent=agent).values_list("node_id", flat=True))
    ids.update(i[2:] for i in list(ids) if i.startswith("n_"))
    return ids


def unplaced_rows(agent: Agent) -> QuerySet[Row]:
    return Row.objects.filter(agent=agent).filter(UNMAPPED | ~Q(node_id__in=placed_node_ids(agent)))


def rows_json(agent: Agent, rows: list[Row]) -> list[dict[str, Any]]:
    """Rows as JSON, each with where its ref is and whether that file is indexed."""
    refs = {row.pk: ref_locate(agent, row.result_ref) for row in rows}
    names = {r["name"] for r in refs.values() if r and r["name"]}
    present = set(Ref.objects.filter(agent=agent, name__in=names).values_list("name", flat=True))
    out = []
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


def ref_locate(agent: Agent, result_ref: str | None) -> dict | None:
    """Where a row's ``result_ref`` points inside the agent folder, or why it is refused."""
    if not result_ref:
        return None
    agent_dir = Path(agent.path)
    try:
        path = resolve_ref(agent_dir, result_ref)
        name = path.relative_to(agent_dir.resolve()).as_posix()
    except (UnsafePath, ValueError) as exc:
        return {"name": None, "url_name": None, "exists": False, "error": f"refused: {exc}"}
    return {"name": name, "url_name": ref_url_name(name), "exists": False, "error": None}


def ref_url_name(name: str) -> str:
    return name[5:] if name.startswith("refs/") else name


def agent_detail(agent: Agent) -> dict[str, Any]:
    canvases = []
    for canvas in Canvas.objects.filter(agent=agent).order_by("filename"):
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
    sessions = [
        {
            "id": s.session_id,
            "file": s.relpath,
            "session_key": s.session_key or None,
            "rows": s.rows_count,
            "problems": list(s.problems),
            "first": s.first_timestamp,
            "last": s.last_timestamp,
        }
        for s in agent.sessions.all()
    ]
    unplaced = unplaced_rows(agent)
    return {
        "agent": agent_summary(agent),
        "state": {"data": agent.state_data, "error": agent.state_error or None},
        "registry_error": agent.registry_error or None,
        "refused_links": folder_refusals(Path(agent.path)),
        "canvases": canvases,
        "sessions": sessions,
        "unplaced_rows": unplaced.count(),
        "unplaced_by_kind": {
            "null": unplaced.filter(node_id__isnull=True).count(),
            "wait": unplaced.filter(node_id="wait").count(),
            "dangling": unplaced.exclude(UNMAPPED).count(),
        },
    }


SESSION_PAGE_SIZE = 50


def session_rows(agent: Agent, session: AgentSession, params: dict[str, str]) -> dict[str, Any]:
    rows = Row.objects.filter(session=session).select_related("session").order_by("line_no")
    node = params.get("node", "").strip()
    if node:
        rows = rows.filter(node_id=node)
    if params.get("unmapped"):
        rows = rows.filter(UNMAPPED)
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
    paginator = Paginator(rows, SESSION_PAGE_SIZE)
    page = paginator.get_page(params.get("page") or 1)
    return {
        "agent": agent.slug,
        "session": {
            "id": session.session_id,
            "file": session.relpath,
            "session_key": session.session_key or None,
            "rows": session.rows_count,
            "problems": session.problems,
        },
        "filters": {
            k: params.get(k, "")
            for k in ("node", "unmapped", "offloaded", "min_score", "max_score")
        },
        "page": page.number,
        "pages": paginator.num_pages,
        "count": paginator.count,
        "rows": rows_json(agent, list(page.object_list)),
    }


def search(query: str, limit: int = 50) -> dict[str, Any]:
    query = query.strip()
    if len(query) < 2:
        return {"q": query, "nodes": [], "rows": []}
    nodes = (
        CanvasNode.objects.filter(
            Q(title__icontains=query) | Q(summary__icontains=query) | Q(node_id__iexact=query)
        )
        .select_related("canvas", "agent")
        .order_by("agent__slug", "canvas__filename", "position")[:limit]
    )
    rows = (
        Row.objects.filter(Q(tool_call__icontains=query) | Q(summary__icontains=query))
        .select_related("agent", "session")
        .order_by("agent__slug", "session__session_id", "line_no")[:limit]
    )
    return {
        "q": query,
        "nodes": [
            {
                "agent": n.agent.slug,
                "canvas": n.canvas.filename,
                "node_id": n.node_id,
                "title": n.title,
                "status": n.status,
                "summary": n.summary,
            }
            for n in nodes
        ],
        "rows": [
            {
                "agent": r.agent.slug,
                "session": r.session.session_id,
                "line_no": r.line_no,
                "node_id": r.node_id,
                "tool_call": r.tool_call,
                "summary": r.summary,
            }
            for r in rows
        ],
    }
