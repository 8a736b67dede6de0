"""The compare page: any two revisions of a canvas side by side, nodes coloured by change."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from canvases.compare import CURRENT, compare
from canvases.edit_views import branch_offer
from canvases.loading import canvas_view
from memviz.pages import render_page
from sessions.models import Canvas


@require_GET
@canvas_view(whole=True)
def compare_page(request: HttpRequest, canvas: Canvas) -> HttpResponse:
    first = canvas.revisions.order_by("number").values_list("number", flat=True).first()
    a = request.GET.get("a") or (str(first) if first else CURRENT)
    b = request.GET.get("b") or CURRENT
    data = compare(canvas.agent, canvas, a, b)
    extra = branch_offer(request, canvas.agent)
    return render_page(request, "canvases/compare.html", data, extra=extra)
