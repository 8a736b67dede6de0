"""Curation views: the ops JSON/htmx endpoint, history and restore, resume and its preview, lint."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import reswap, retarget

from canvases import selectors, services
from canvases.models import Canvas
from canvases.views import node_list_items
from memviz.pages import json_response, render_page, wants_json
from sessions.selectors import agent_get

LIST_FIELDS = ("nodes",)
INT_FIELDS = ("revision",)


def _wants_json_body(request: HttpRequest) -> bool:
    return request.content_type == "application/json"


def _params(request: HttpRequest) -> dict[str, Any]:
    """The op's fields from a JSON body, or from a form (htmx or plain POST)."""
    if _wants_json_body(request):
        try:
            data = json.loads(request.body or b"{}")
        except ValueError:
            raise services.EditRefused("the request body is not valid JSON") from None
        if not isinstance(data, dict):
            raise services.EditRefused("the request body must be a JSON object")
        return data
    form: QueryDict = request.POST
    data = {k: form.get(k) for k in form if k not in LIST_FIELDS and k != "csrfmiddlewaretoken"}
    for key in LIST_FIELDS:
        if key in form:
            data[key] = [v for item in form.getlist(key) for v in item.split(",") if v]
    for key in INT_FIELDS:
        if data.get(key):
            try:
                data[key] = int(data[key])
            except ValueError:
                raise services.EditRefused(f"{key!r} must be a number") from None
    for key in ("bridge", "drop_from_context"):
        if key in data:
            data[key] = data[key] in ("1", "on", "true")
    if data.get("op") == "prune":
        data.setdefault("bridge", False)
    return data


def _forbidden(request: HttpRequest) -> HttpResponse:
    message = "log in to edit: anonymous users can only view"
    if getattr(request, "htmx", False):
        return _flash(request, [message], error=True)
    return json_response({"error": message}, status=403)


def _flash(request: HttpRequest, lines: list[str], *, error: bool) -> HttpResponse:
    response = render(request, "canvases/_flash.html", {"flash": lines, "flash_error": error})
    return reswap(retarget(response, "#flash"), "innerHTML")


def _editor(
    request: HttpRequest, agent_slug: str, canvas: Canvas, flash: list[str], *, error: bool = False
) -> HttpResponse:
    agent = canvas.agent
    data = selectors.canvas_detail(agent, canvas, request.POST.get("collapsed"))
    data["editor"] = selectors.editor_state(agent, canvas)
    context = {
        **data,
        "flash": flash,
        "flash_error": error,
        "keep_view": True,
        "node_items": node_list_items(data, editable=True),
    }
    return render(request, "canvases/_editor.html", context)


@require_POST
def ops(request: HttpRequest, agent: str, canvas: str) -> HttpResponse:
    """Apply one operation (see docs/curation.md); the UI and the JSON API share this path."""
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    if not request.user.is_authenticated:
        return _forbidden(request)
    try:
        params = _params(request)
        op = params.pop("op", None)
        base = params.pop("base", "") or ""
        if not isinstance(op, str):
            raise services.EditRefused("'op' is required")
        outcome = services.canvas_apply_edit(
            canvas=canvas_obj, op=op, params=params, base_hash=base, user=request.user
        )
    except services.EditRefused as exc:
        canvas_obj.refresh_from_db()
        body: dict[str, Any] = {"error": str(exc), "status": exc.status}
        if isinstance(exc, services.EditConflict):
            body["conflict"] = True
            body["current_hash"] = exc.current_hash or canvas_obj.content_hash
        if getattr(request, "htmx", False):
            lines = [str(exc)]
            if isinstance(exc, services.EditConflict):
                return _editor(request, agent, canvas_obj, lines, error=True)
            return _flash(request, lines, error=True)
        if _wants_json_body(request) or wants_json(request):
            return json_response(body, status=exc.status)
        messages.error(request, str(exc))
        return redirect("canvas", agent, canvas)
    canvas_obj.refresh_from_db()
    summary = f"r{outcome.revision.number}: {outcome.revision.op} written to mmds/{canvas}"
    if outcome.rows_changed:
        summary += f"; {outcome.rows_changed} row(s) updated in the offload files"
    if getattr(request, "htmx", False):
        return _editor(request, agent, canvas_obj, [summary, *outcome.warnings])
    if _wants_json_body(request) or wants_json(request):
        return json_response(outcome.as_json())
    messages.success(request, summary)
    for warning in outcome.warnings:
        messages.warning(request, warning)
    return redirect("canvas", agent, canvas)


@require_GET
def history_page(request: HttpRequest, agent: str, canvas: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    return render_page(request, "canvases/history.html", selectors.revision_list(obj, canvas_obj))


@require_GET
def revision_page(request: HttpRequest, agent: str, canvas: str, number: int) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    data = selectors.revision_detail(obj, canvas_obj, number)
    return render_page(request, "canvases/revision.html", data)


@require_POST
def revision_restore(request: HttpRequest, agent: str, canvas: str, number: int) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    if not request.user.is_authenticated:
        return json_response({"error": "log in to edit"}, status=403)
    try:
        outcome = services.canvas_restore(
            canvas=canvas_obj,
            number=number,
            base_hash=request.POST.get("base", ""),
            user=request.user,
        )
    except services.EditRefused as exc:
        if wants_json(request):
            return json_response({"error": str(exc)}, status=exc.status)
        messages.error(request, str(exc))
        return redirect("canvas-revision", agent, canvas, number)
    if wants_json(request):
        return json_response(outcome.as_json())
    messages.success(request, f"restored revision {number} as r{outcome.revision.number}")
    return redirect("canvas", agent, canvas)


def _preview_data(canvas_obj: Canvas) -> dict[str, Any]:
    data = services.resume_preview(canvas_obj)
    data["agent"] = canvas_obj.agent.slug
    data["file"] = canvas_obj.filename
    data["live"] = services.agent_live(canvas_obj.agent).as_json()
    return data


@require_GET
def preview_page(request: HttpRequest, agent: str, canvas: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    data = _preview_data(canvas_obj)
    # "block" is reserved in Django template contexts (block tags use it).
    extra = {"resume_text": data["block"]}
    return render_page(request, "canvases/preview.html", data, extra=extra, partial="panel")


@require_http_methods(["GET", "POST"])
def resume(request: HttpRequest, agent: str, canvas: str) -> HttpResponse:
    """GET: the preview; POST: make this canvas the active one in state.json."""
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    if request.method == "GET":
        return redirect(reverse("canvas-preview", args=[agent, canvas]))
    if not request.user.is_authenticated:
        return _forbidden(request)
    confirm = request.POST.get("confirm_live") in ("1", "on", "true")
    if _wants_json_body(request):
        try:
            confirm = bool(json.loads(request.body or b"{}").get("confirm_live"))
        except (ValueError, AttributeError):
            confirm = False
    try:
        outcome = services.canvas_resume(canvas=canvas_obj, user=request.user, confirm_live=confirm)
    except services.EditRefused as exc:
        if getattr(request, "htmx", False):
            return _flash(request, [str(exc)], error=True)
        if _wants_json_body(request) or wants_json(request):
            return json_response({"error": str(exc), "status": exc.status}, status=exc.status)
        messages.error(request, str(exc))
        return redirect("canvas-preview", agent, canvas)
    body = {"held": outcome.held, "active": outcome.active, "message": outcome.message}
    if getattr(request, "htmx", False):
        return _flash(request, [outcome.message], error=not outcome.held)
    if _wants_json_body(request) or wants_json(request):
        return json_response(body)
    (messages.success if outcome.held else messages.error)(request, outcome.message)
    return redirect("canvas-preview", agent, canvas)


@require_GET
def lint_panel(request: HttpRequest, agent: str, canvas: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    data = selectors.canvas_lint(obj, canvas_obj)
    return render_page(request, "canvases/lint.html", data, partial="panel")


@require_GET
def live_panel(request: HttpRequest, agent: str, canvas: str) -> HttpResponse:
    """Polled by the canvas page: live badge, and human edits an agent rewrite dropped."""
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    data = {
        "agent": obj.slug,
        "file": canvas_obj.filename,
        "content_hash": canvas_obj.content_hash,
        "editor": selectors.editor_state(obj, canvas_obj),
    }
    return render_page(request, "canvases/_live.html", data)
