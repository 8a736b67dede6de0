"""The compare page: any two revisions of a canvas side by side, nodes coloured by change."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from canvases.compare import CURRENT, compare
from canvases.edit_views import _branch_extra
from canvases.selectors import canvas_get
from canvases.views import too_large_answer
from memviz.pages import render_page
from sessions.selectors import agent_get


@require_GET
def compare_page(request: HttpRequest, agent: str, canvas: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = canvas_get(obj, canvas)
    if (big := too_large_answer(request, obj, canvas_obj)) is not None:
        return big
    first = canvas_obj.revisions.order_by("number").values_list("number", flat=True).first()
    a = request.GET.get("a") or (str(first) if first else CURRENT)
    b = request.GET.get("b") or CURRENT
    data = compare(obj, canvas_obj, a, b)
    return render_page(request, "canvases/compare.html", data, extra=_branch_extra(request, obj))
