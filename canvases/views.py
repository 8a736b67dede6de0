"""Canvas page (with its editing UI for signed-in users), its diagram partial, and the node panel."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from canvases import selectors
from memviz.pages import render_page, wants_json
from sessions.selectors import agent_get


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
    return render_page(request, "canvases/canvas.html", data)


@require_GET
def node_panel(request: HttpRequest, agent: str, canvas: str, node: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    data = selectors.node_detail(obj, canvas_obj, node)
    return render_page(request, "canvases/node.html", data, partial="panel")
