"""The debugging pages that list: every session with its findings (the sessions page), the
agent page's session badges, and a session's run report (JSON, and the markdown's data)."""

# No `from __future__ import annotations`: the TypedDicts are read at run time (tests).
from datetime import UTC, datetime
from typing import TypedDict

from django.utils import timezone

from canvases.mermaid import render_body
from debugging import debug_selectors as ds
from debugging.diagnosis_labels import titled_counts, titles
from debugging.ledger_selectors import session_ledger
from debugging.page_types import ReportCanvas, SessionReport
from sessions.instants import iso, parse_instant
from sessions.models import Agent, AgentSession
from sessions.page_types import BadgeCount

SESSION_FILTERS = ("agent", "from", "to", "diagnosis", "sort", "order")


class SessionListItem(TypedDict):
    agent: str
    id: str
    rows: int
    first: str
    last: str
    first_at: str | None  # UTC, ISO 8601
    last_at: str | None
    findings: dict[str, int]  # diagnosis kind -> count (no zero counts)


class DiagnosisChoice(TypedDict):
    kind: str
    title: str
    help: str


class SessionsPage(TypedDict):
    filters: dict[str, str]  # SESSION_FILTERS, as asked
    sort: str
    agents: list[str]
    diagnoses: list[DiagnosisChoice]
    sessions: list[SessionListItem]


class BadgeSlot(TypedDict):
    slot: str  # the id of the agent page's placeholder (debug_selectors.badge_slot)
    session: str
    findings: list[BadgeCount]


class BadgeSlots(TypedDict):
    agent: str
    badges: list[BadgeSlot]


SORTS = {
    "last": lambda s: (s["last_at"] or "", s["agent"], s["id"]),
    "first": lambda s: (s["first_at"] or "", s["agent"], s["id"]),
    "rows": lambda s: (s["rows"], s["agent"], s["id"]),
    "findings": lambda s: (sum(s["findings"].values()), s["agent"], s["id"]),
    "agent": lambda s: (s["agent"], s["id"]),
}


def sessions_page(asked: dict[str, str]) -> SessionsPage:
    params = {k: asked.get(k, "").strip() for k in SESSION_FILTERS}
    start, stop = parse_instant(params["from"]), parse_instant(params["to"])
    agents = Agent.objects.all()
    if params["agent"]:
        agents = agents.filter(slug=params["agent"])
    out: list[SessionListItem] = []
    for agent in agents:
        per_session = ds.agent_findings(agent)["per_session"]
        for s in agent.sessions.all():
            first, last = parse_instant(s.first_timestamp), parse_instant(s.last_timestamp)
            if start and (last is None or last < start):
                continue
            if stop and (first is None or first > stop):
                continue
            findings = per_session.get(s.session_id, {})
            if params["diagnosis"] and not findings.get(params["diagnosis"]):
                continue
            out.append(
                {
                    "agent": agent.slug,
                    "id": s.session_id,
                    "rows": s.rows_count,
                    "first": s.first_timestamp,
                    "last": s.last_timestamp,
                    "first_at": _utc(first),
                    "last_at": _utc(last),
                    "findings": findings,
                }
            )
    sort = params["sort"] if params["sort"] in SORTS else "last"
    out.sort(key=SORTS[sort], reverse=params["order"] != "asc")
    return {
        "filters": params,
        "sort": sort,
        "agents": list(Agent.objects.values_list("slug", flat=True)),
        "diagnoses": [{"kind": kind, **titles(kind)} for kind in ds.diag.KINDS],
        "sessions": out,
    }


def session_badge_slots(agent: Agent) -> BadgeSlots:
    """Every session's badges for the agent page, each for its placeholder."""
    per_session = ds.agent_findings(agent)["per_session"]
    return {
        "agent": agent.slug,
        "badges": [
            {"slot": ds.badge_slot(sid), "session": sid, "findings": titled_counts(counts)}
            for sid, counts in per_session.items()
        ],
    }


def session_report(obj: Agent, sess: AgentSession) -> SessionReport:
    replay = ds.replay_for(obj, sess)
    canvas: ReportCanvas | None = None
    if len(replay) and replay.scene_of[-1] is not None:
        scene = replay.scenes[replay.scene_of[-1]]
        canvas = {
            "file": scene.file,
            "source": scene.source,
            "goal": scene.doc.meta.task_goal,
            "progress": scene.doc.meta.progress,
            "text": scene.text,
            "render_body": render_body(scene.text, doc=scene.doc),
        }
    return {
        "agent": obj.slug,
        "generated_at": iso(timezone.now()),
        "session": {
            "id": sess.session_id,
            "file": sess.relpath,
            "rows": sess.rows_count,
            "first": sess.first_timestamp,
            "last": sess.last_timestamp,
        },
        "rows": [
            {
                "line_no": r.line_no,
                "timestamp": r.time_text,
                "tool_call": r.tool_call,
                "node_id": r.node_id,
                "summary": r.summary,
            }
            for r in replay.rows
        ],
        "canvas": canvas,
        "diagnostics": ds.titled_findings(ds.session_findings(obj, sess)),
        "ledger": session_ledger(obj, sess),
    }


def _utc(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat() if moment else None
