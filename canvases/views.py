"""Canvas page, its diagram partial, and the node detail panel."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from canvases import selectors
from memviz.pages import render_page
from sessions.selectors import agent_get


@require_GET
def canvas_page(request: HttpRequest, agent: str, canvas: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    data = selectors.canvas_detail(obj, canvas_obj, request.GET.get("collapsed"))
    return render_page(request, "canvases/canvas.html", data, partial="diagram")


@require_GET
def node_panel(request: HttpRequest, agent: str, canvas: str, node: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    data = selectors.node_detail(obj, canvas_obj, node)
    return render_page(request, "canvases/node.html", data, partial="panel")
