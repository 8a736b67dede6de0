"""Agents, sessions, refs and search pages: thin views over selectors."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.http import FileResponse, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET

from agentfs.paths import open_regular
from browse import ref_selectors
from browse import selectors as page_contexts
from canvases import liveness
from memviz.pages import HtmxHttpRequest, json_response, render_page, wants_json
from sessions import home_selectors, selectors


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    # Running jobs show to every viewer, signed in or not: the first ingest of a large data
    # root runs while pages are served, and the page says how far it got.
    return render_page(request, "agent_sessions/home.html", dict(home_selectors.home_page()))


@require_GET
def agent_page(request: HttpRequest, agent: str) -> HttpResponse:
    obj = selectors.agent_get(agent)
    after = request.GET.get("unplaced_after", "")
    if after and getattr(request, "htmx", False):  # "more unplaced rows": that list only
        data = selectors.unplaced_page(obj, after)
        return render_page(request, "agent_sessions/agent.html", data, partial="unplaced")
    data = page_contexts.agent_page(
        obj, canvases_before=request.GET.get("canvases_before", ""), unplaced_after=after
    )
    extra = {"live": liveness.agent_live(obj).as_json()} if data["reverted"] else {}
    return render_page(request, "agent_sessions/agent.html", data, extra=extra)


@require_GET
def session_page(request: HtmxHttpRequest, agent: str, session: str) -> HttpResponse:
    sess = selectors.session_get(agent, session)
    timeline_only = bool(request.htmx) and not request.htmx.history_restore_request
    data = page_contexts.session_page(
        sess.agent, sess, request.GET.dict(), with_badges=wants_json(request) or not timeline_only
    )
    return render_page(request, "agent_sessions/session.html", data, partial="timeline")


@require_GET
def ref_page(request: HttpRequest, agent: str, name: str) -> HttpResponseBase:
    try:
        if request.GET.get("raw"):
            return _ref_download(agent, name)
        try:
            offset = max(0, int(request.GET.get("offset", 0)))
        except ValueError:
            offset = 0
        limit = settings.MEMVIZ_REF_PAGE_BYTES
        data, html = ref_selectors.ref_page(agent, name, offset, limit)
    except ref_selectors.RefRefused as refused:
        return _ref_error(request, agent, name, refused.message, refused.status)
    extra = {"html": html, "back": _back_link(request)}
    return render_page(request, "agent_sessions/ref.html", data, extra=extra, partial="ref_body")


def _ref_download(agent: str, name: str) -> FileResponse:
    _ref, path = ref_selectors.ref_file(agent, name)
    try:
        handle = open_regular(path, folders=2)  # FileResponse closes it
    except OSError as exc:
        raise ref_selectors.refused_opening(exc) from None
    return FileResponse(
        handle, as_attachment=True, filename=path.name, content_type="text/plain; charset=utf-8"
    )


def _back_link(request: HttpRequest) -> str | None:
    """The memviz page the user came from (a node panel, a session), for a link back to it."""
    referer = request.headers.get("Referer", "")
    parts = urlsplit(referer)
    if not referer or parts.path == request.path:
        return None
    if not url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "") + (
        f"#{parts.fragment}" if parts.fragment else ""
    )


def _ref_error(
    request: HttpRequest, agent: str, name: str, message: str, status: int
) -> HttpResponse:
    if wants_json(request):
        return json_response({"agent": agent, "name": name, "error": message}, status=status)
    response = render_page(
        request,
        "agent_sessions/ref.html",
        {"agent": agent, "name": name, "error": message},
        partial="ref_body",
    )
    response.status_code = status
    return response


SEARCH_PAGES = {"nodes": "nodes_page", "rows": "rows_page", "refs": "refs_page"}


@require_GET
def search_page(request: HttpRequest) -> HttpResponse:
    params = request.GET.dict()
    data = selectors.search_context(params)
    base = {k: v for k, v in data["filters"].items() if v}
    extra = {
        "base_query": urlencode({"q": data["q"], **base}),
        **{f"{kind}_before": params.get(f"{kind}_before") for kind in SEARCH_PAGES},
    }
    partial = SEARCH_PAGES.get(params.get("only", ""), "results")
    return render_page(request, "agent_sessions/search.html", data, extra=extra, partial=partial)
