"""Debugging a run: replay, diagnostics, token ledger, run report, the session list, node links."""

from __future__ import annotations

from urllib.parse import quote

from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseRedirect,
)
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from agentfs.row_fields import drawn_as
from canvases import liveness
from canvases.node_removal import node_removal
from debugging import debug_selectors as ds
from debugging import list_selectors as lists
from debugging import replay_page as replay_pages
from debugging.ledger_selectors import agent_ledger, session_ledger_with_badges
from debugging.run_report import report_markdown
from memviz.pages import json_response, render_page, wants_json
from sessions.models import CanvasNode
from sessions.selectors import agent_get, session_get


@require_GET
def replay_page(request: HttpRequest, agent: str, session: str) -> HttpResponse:
    sess = session_get(agent, session)
    obj = sess.agent
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
    sess = session_get(agent, session)
    obj = sess.agent
    return render_page(request, "debugging/diagnostics.html", ds.session_diagnostics(obj, sess))


@require_GET
def agent_session_badges(request: HttpRequest, agent: str) -> HttpResponse:
    """Every session's badges for the agent page, as out-of-band swaps into its slots.

    The page asks for them after it is shown: they need every session's diagnostics (cached
    per content change), which on a year of data is seconds, not the page's milliseconds.
    """
    data = lists.session_badge_slots(agent_get(agent))
    return render(request, "debugging/_session_badges_oob.html", data)


@require_GET
def agent_diagnostics_page(request: HttpRequest, agent: str) -> HttpResponse:
    obj = agent_get(agent)
    return render_page(request, "debugging/diagnostics.html", ds.agent_diagnostics(obj))


@require_GET
def session_ledger_page(request: HttpRequest, agent: str, session: str) -> HttpResponse:
    sess = session_get(agent, session)
    obj = sess.agent
    return render_page(request, "debugging/ledger.html", session_ledger_with_badges(obj, sess))


@require_GET
def agent_ledger_page(request: HttpRequest, agent: str) -> HttpResponse:
    return render_page(request, "debugging/ledger.html", agent_ledger(agent_get(agent)))


@require_GET
def session_report(request: HttpRequest, agent: str, session: str) -> HttpResponse:
    sess = session_get(agent, session)
    obj = sess.agent
    data = lists.session_report(obj, sess)
    if wants_json(request):
        return json_response(data)
    markdown = report_markdown(data)
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


@require_GET
def sessions_list(request: HttpRequest) -> HttpResponse:
    """Every session, filtered by agent, time range and diagnosis, sorted by a column."""
    data = lists.sessions_page({k: request.GET.get(k, "") for k in lists.SESSION_FILTERS})
    return render_page(request, "debugging/sessions.html", data, partial="results")
