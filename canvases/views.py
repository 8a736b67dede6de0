"""Canvas page (with its editing UI for signed-in users), its diagram partial, and the node panel."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import Truncator
from django.views.decorators.http import require_GET

from canvases import selectors
from memviz.pages import render_page, wants_json
from memviz.templatetags.memviz import status_class
from sessions.selectors import agent_get


def node_list_items(data: dict[str, Any], *, editable: bool) -> SafeString:
    """The node list's <li>s, built in Python: a 300-node canvas re-renders it on every edit
    and the template loop alone took ~30 ms of the 100 ms round-trip budget."""
    base = reverse("canvas", args=[data["agent"], data["file"]])

    def item(n: dict[str, Any]) -> tuple:
        url = f"{base}n/{quote(n['id'], safe='')}/"
        box = (
            format_html(
                '<input type="checkbox" class="node-select" value="{}" aria-label="select {}"> ',
                n["id"],
                n["id"],
            )
            if editable
            else ""
        )
        note = (n.get("extra") or {}).get("note")
        note_html = (
            format_html(' <span class="badge note" title="{}">note</span>', note) if note else ""
        )
        return (
            n["id"],
            box,
            url,
            url,
            status_class(n["status"]),
            n["status"] or "—",
            n["id"],
            Truncator(n["title"] or "").chars(80),
            n["rows"],
            note_html,
        )

    return format_html_join(
        "\n",
        '<li data-node="{}">{}<a href="{}" hx-get="{}" hx-target="#node-panel" class="node-link">'
        '<span class="pill {}">{}</span> <code>{}</code> {}</a> '
        '<span class="muted small" title="rows mapped to this node">{} rows</span>{}</li>',
        (item(n) for n in data["nodes"]),
    )


@require_GET
def canvas_page(request: HttpRequest, agent: str, canvas: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    data = selectors.canvas_detail(obj, canvas_obj, request.GET.get("collapsed"))
    data["editor"] = selectors.editor_state(obj, canvas_obj)
    if (
        not wants_json(request)
        and getattr(request, "htmx", False)
        and not request.htmx.history_restore_request
    ):
        return render(request, "canvases/_diagram.html", data)
    extra = {"node_items": node_list_items(data, editable=request.user.is_authenticated)}
    return render_page(request, "canvases/canvas.html", data, extra=extra)


@require_GET
def node_panel(request: HttpRequest, agent: str, canvas: str, node: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    data = selectors.node_detail(obj, canvas_obj, node)
    return render_page(request, "canvases/node.html", data, partial="panel")
