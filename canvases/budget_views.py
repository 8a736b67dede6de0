"""The budget panel: node shares and suggestions to a target (reads only; applying a choice is
the ops endpoint's `batch` op, a bulk action its `bulk` op: one revision each)."""

from __future__ import annotations

import json

from django.http import HttpResponse
from django.views.decorators.http import require_GET

from canvases.budget_selectors import budget_detail
from canvases.loading import canvas_view
from memviz.pages import render_page
from memviz.responders import HtmxHttpRequest
from sessions.models import Canvas


@require_GET
@canvas_view(whole=True)
def budget_page(request: HtmxHttpRequest, canvas: Canvas) -> HttpResponse:
    data = budget_detail(canvas, request.GET.dict())
    # each suggestion's step as the form sends it back to the ops endpoint
    rows = [(s, json.dumps(s["step"], ensure_ascii=False)) for s in data["plan"]["suggestions"]]
    return render_page(
        request, "canvases/budget.html", data, extra={"suggestion_rows": rows}, partial="panel"
    )
