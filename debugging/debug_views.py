"""Debugging a run: replay, diagnostics, token ledger, run report, the session list, node links."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast
from urllib.parse import quote

from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseRedirect,
)
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET

from canvases import liveness
from canvases.node_removal import node_removal
from debugging import debug_selectors as ds
from debugging import replay_page as replay_pages
from debugging.diagnosis_labels import titled
from debugging.ledger_selectors import agent_ledger, session_ledger, session_ledger_with_badges
from debugging.page_types import ReportCanvas, SessionReport
from debugging.run_report import report_markdown
from memviz.pages import json_response, render_page, wants_json
from sessions.instants import iso, parse_instant
from sessions.memory.row_fields import drawn_as
from sessions.models import Agent, AgentSession, CanvasNode
from sessions.selectors import agent_get


def _session(agent: str, session: str) -> tuple[Agent, AgentSession]:
    obj = agent_get(agent)
    return obj, get_object_or_404(AgentSession, agent=obj, session_id=session)


@require_GET
def replay_page(request: HttpRequest, agent: str, session: str) -> HttpResponse:
    obj, sess = _session(agent, session)
    json_twin = wants_json(request)
    try:
        data, payload = replay_pages.replay_page(obj, sess, request.GET, frames_paged=json_twin)
    except replay_pages.BadInstant as exc:
        if json_twin:
            return json_response({"error": str(exc)}, status=400)
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    if json_twin:
        return json_response(data)
    extra = {
        "payload": payload,
        "live": liveness.agent_live(obj).as_json(),  # the branch form's confirmation
        "report_url": reverse("session-report", args=[obj.slug, sess.session_id]),
    }
    return render_page(request, "debugging/replay.html", data, extra=extra)


@require_GET
def session_diagnostics_page(request: HttpRequest, agent: str, session: str) -> HttpResponse:
    obj, sess = _session(agent, session)
    return render_page(request, "debugging/diagnostics.html", ds.session_diagnostics(obj, sess))


@require_GET
@require_GET
def agent_session_badges(request: HttpRequest, agent: str) -> HttpResponse:
    """Every session's badges for the agent page, as out-of-band swaps into its slots.

    The page asks for them after it is shown: they need every session's diagnostics (cached
    per content change), which on a year of data is seconds, not the page's milliseconds.
    """
    obj = agent_get(agent)
    per_session = ds.agent_findings(obj)["per_session"]
    badges = [
        {
            "slot": ds.badge_slot(sid),
            "session": sid,
            "findings": titled([{"kind": k, "count": n} for k, n in counts.items()]),
        }
        for sid, counts in per_session.items()
    ]
    data = {"agent": obj.slug, "badges": badges}
    return render(request, "debugging/_session_badges_oob.html", data)


@require_GET
def agent_diagnostics_page(request: HttpRequest, agent: str) -> HttpResponse:
    obj = agent_get(agent)
    return render_page(request, "debugging/diagnostics.html", ds.agent_diagnostics(obj))


@require_GET
def session_ledger_page(request: HttpRequest, agent: str, session: str) -> HttpResponse:
    obj, sess = _session(agent, session)
    return render_page(request, "debugging/ledger.html", session_ledger_with_badges(obj, sess))


@require_GET
def agent_ledger_page(request: HttpRequest, agent: str) -> HttpResponse:
    return render_page(request, "debugging/ledger.html", agent_ledger(agent_get(agent)))


def session_report_data(obj: Agent, sess: AgentSession) -> SessionReport:
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
            "render_body": scene.as_json()["render_body"],
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


@require_GET
def session_report(request: HttpRequest, agent: str, session: str) -> HttpResponse:
    obj, sess = _session(agent, session)
    data = session_report_data(obj, sess)
    if wants_json(request):
        return json_response(data)
    # report_markdown reads the report as a plain dict
    markdown = report_markdown(cast(dict[str, Any], data))
    response = HttpResponse(markdown, content_type="text/markdown; charset=utf-8")
    name = quote(f"{obj.slug}-{sess.session_id}-report.md")
    response["Content-Disposition"] = f"attachment; filename*=UTF-8''{name}"
    return response


@require_GET
def node_locate(request: HttpRequest, agent: str, node: str = "") -> HttpResponse:
    """A row's node id (``?id=``, or the path of older links) → that node on its canvas."""
    obj = agent_get(agent)
    node = request.GET.get("id") or node.removesuffix("/")  # old links: no trailing slash
    ids = drawn_as(node)
    hit = (
        CanvasNode.objects.filter(agent=obj, node_id__in=ids)
        .select_related("canvas")
        .order_by("canvas__filename")
        .first()
    )
    if hit is None:
        context = {"agent": obj, "node_id": node, "removal": node_removal(obj, node)}
        return render(request, "debugging/node_gone.html", context, status=404)
    url = reverse("canvas", args=[obj.slug, hit.canvas.filename])
    return HttpResponseRedirect(f"{url}#node={quote(hit.node_id, safe='')}")


SORTS = {
    "last": lambda s: (s["last_at"] or "", s["agent"], s["id"]),
    "first": lambda s: (s["first_at"] or "", s["agent"], s["id"]),
    "rows": lambda s: (s["rows"], s["agent"], s["id"]),
    "findings": lambda s: (sum(s["findings"].values()), s["agent"], s["id"]),
    "agent": lambda s: (s["agent"], s["id"]),
}


@require_GET
def sessions_list(request: HttpRequest) -> HttpResponse:
    """Every session, filtered by agent, time range and diagnosis, sorted by a column."""
    params = {
        k: request.GET.get(k, "").strip()
        for k in ("agent", "from", "to", "diagnosis", "sort", "order")
    }
    start, stop = parse_instant(params["from"]), parse_instant(params["to"])
    agents = Agent.objects.all()
    if params["agent"]:
        agents = agents.filter(slug=params["agent"])
    out = []
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
    data = {
        "filters": params,
        "sort": sort,
        "agents": list(Agent.objects.values_list("slug", flat=True)),
        "diagnoses": titled([{"kind": k} for k in ds.diag.KINDS]),
        "sessions": out,
    }
    return render_page(request, "debugging/sessions.html", data, partial="results")


def _utc(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat() if moment else None
