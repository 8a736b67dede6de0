"""Canvas page (with its editing UI for signed-in users), its diagram partial, and the node panel."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any
from urllib.parse import quote

from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_GET

from agentfs.paths import UnsafePath, open_regular
from canvases import drawing, selectors
from canvases.loading import canvas_view
from memviz.pages import render_page, wants_json
from memviz.responders import HtmxHttpRequest
from memviz.templatetags.memviz import status_class
from sessions.models import Canvas


def node_list_items(data: Mapping[str, Any], *, editable: bool) -> SafeString:
    """The node list's <li>s, built in Python: a 300-node canvas re-renders it on every edit,
    and as a template loop (or with format_html) it took a third of the 100 ms round-trip budget.
    Every value goes through html.escape."""
    return mark_safe("\n".join(node_list_html(data, editable=editable).values()))  # noqa: S308


def node_list_html(data: Mapping[str, Any], *, editable: bool) -> dict[str, str]:
    """Node id -> its escaped <li> (id ``node-item-<node>``, so an edit can swap one alone).
    A click on its link opens the node's panel through canvas.js (one delegated listener: htmx
    wiring 1000 links took about 90 ms of a 1000-node page's load)."""
    base = reverse("canvas", args=[data["agent"], data["file"]])
    select, note_word = gettext("select %(node)s"), escape(gettext("note"))
    rows_title = escape(gettext("rows mapped to this node"))
    parts = {}
    for n in data["nodes"]:
        node_id, rows = escape(n["id"]), int(n["rows"])
        count = escape(ngettext("%(n)d row", "%(n)d rows", rows) % {"n": rows})
        url = escape(f"{base}n/{quote(n['id'], safe='')}/")
        box = (
            f'<input type="checkbox" class="node-select" value="{node_id}" '
            f'aria-label="{escape(select % {"node": n["id"]})}"> '
            if editable
            else ""
        )
        note = (n.get("extra") or {}).get("note")
        note_html = (
            f' <span class="badge note" title="{escape(note)}">{note_word}</span>' if note else ""
        )
        title = n["title"] or ""
        title = escape(title if len(title) <= 80 else title[:79] + "…")
        parts[n["id"]] = (
            f'<li id="node-item-{node_id}" data-node="{node_id}">{box}<a href="{url}" class="node-link"><span class="pill {status_class(n["status"])}">'
            f"{escape(n['status'] or '—')}</span> <code>{node_id}</code> {title}</a> "
            f'<span class="muted small" title="{rows_title}">{count}</span>{note_html}</li>'
        )
    return parts


# htmx target id -> the partial that redraws it (anything else gets the whole page)
CANVAS_PARTIALS = {"diagram": "canvases/_diagram.html", "editor": "canvases/_editor.html"}


@require_GET
@canvas_view()
def canvas_raw(request: HttpRequest, canvas: Canvas) -> FileResponse:
    """The canvas file as it is on disk, streamed (any size), for whoever may view the canvas.

    Confined like every canvas read: an indexed name under the agent's ``mmds/``, opened
    without following a link, and never a FIFO or device."""
    try:
        handle = open_regular(canvas.path, folders=2)
    except (OSError, UnsafePath):
        raise Http404(gettext("the canvas file cannot be read")) from None
    response = FileResponse(  # closes the handle when sent
        handle, as_attachment=True, filename=canvas.filename, content_type="text/plain"
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response


@require_GET
@canvas_view(whole=True)
def canvas_page(request: HtmxHttpRequest, canvas: Canvas) -> HttpResponse:
    partial = CANVAS_PARTIALS.get(request.htmx.target or "") if request.htmx else None
    if wants_json(request) or (request.htmx and request.htmx.history_restore_request):
        partial = None
    data = selectors.canvas_detail(
        canvas.agent,
        canvas,
        request.GET.get("collapsed"),
        with_render_body=wants_json(request),
        with_badges=partial is None,  # the whole page or its JSON (a partial has no badges)
    )
    extra = {"node_items": node_list_items(data, editable=request.user.is_authenticated)}
    if partial:
        return render(request, partial, {**data, **extra})
    return render_page(request, "canvases/canvas.html", data, extra=extra)


@require_GET
@canvas_view(whole=True)
def canvas_mermaid_text(request: HtmxHttpRequest, canvas: Canvas) -> JsonResponse:
    """What the mermaid.js view draws, asked for only by a page showing that view."""
    return JsonResponse(drawing.mermaid_text(canvas.text))


@require_GET
@canvas_view()
def node_panel(request: HtmxHttpRequest, canvas: Canvas, node: str) -> HttpResponse:
    data = selectors.node_detail(canvas.agent, canvas, node)
    return render_page(request, "canvases/node.html", data, partial="panel")
