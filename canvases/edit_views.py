"""Curation views: the ops JSON/htmx endpoint, history and restore, resume, re-sync, lint."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import reswap, trigger_client_event

from canvases import history, lint, liveness, selectors, services
from canvases.edit_ops import OPERATIONS, sent_input
from canvases.indexing import parsed
from canvases.messages import Said
from canvases.op_input import request_data
from canvases.page_types import CanvasPage
from canvases.refused import EditConflict, EditRefused, WriteFailed
from canvases.views import node_list_html, node_list_items, too_large_answer
from memviz.pages import render_page
from memviz.responders import HtmxHttpRequest, Outcome, respond
from sessions.access import signed_in_to_write
from sessions.models import Agent, Canvas
from sessions.selectors import agent_get


def _refused(exc: EditRefused, canvas: Canvas) -> Outcome:
    body: dict[str, Any] = {"code": exc.code} if exc.code else {}
    if isinstance(exc, EditConflict):
        body["conflict"] = True
        body["current_hash"] = exc.current_hash or canvas.content_hash
    if isinstance(exc, WriteFailed):
        body["file"] = exc.file
        body["reason"] = exc.reason
    return Outcome.refused(str(exc), exc.status, **body)


def _editor(request: HtmxHttpRequest, canvas: Canvas, outcome: Outcome) -> HttpResponse:
    """The whole editor region, redrawn from the canvas as it is now, with the outcome on top."""
    canvas = selectors.canvas_get(canvas.agent, canvas.filename)
    data = selectors.canvas_detail(canvas.agent, canvas, request.POST.get("collapsed"))
    context = {
        **data,
        "flash": [outcome.message, *outcome.warnings],
        "flash_error": not outcome.ok,
        "keep_view": True,
        "node_items": node_list_items(data, editable=True),
    }
    return render(request, "canvases/_editor.html", context)


def _node_items_answer(data: CanvasPage, before_text: str) -> SafeString:
    """The node list's part of an edit's answer: when every node kept its place (annotate,
    status, title, edges) only the <li>s that changed, each swapped by its id; else the list."""
    after = node_list_html(data, editable=True)
    before_doc = parsed(before_text)
    if list(before_doc.nodes) != list(after):
        whole = "\n".join(after.values())
        return mark_safe(f'<ol id="node-items" hx-swap-oob="innerHTML">{whole}</ol>')  # noqa: S308
    rows = {n["id"]: n["rows"] for n in data["nodes"]}
    before_nodes = [
        {
            "id": n.id,
            "title": n.fields.title,
            "status": n.fields.status,
            "extra": n.fields.extra,
            "rows": rows[n.id],
        }
        for n in before_doc.nodes.values()
    ]
    before = node_list_html({**data, "nodes": before_nodes}, editable=True)
    changed = [
        li.replace("<li ", '<li hx-swap-oob="true" ', 1)
        for nid, li in after.items()
        if before[nid] != li
    ]
    return mark_safe("\n".join(changed))  # noqa: S308 - node_list_html escapes every value


def _changed_regions(
    request: HtmxHttpRequest, canvas: Canvas, outcome: Outcome, before_text: str
) -> HttpResponse:
    """An edit's htmx answer: the regions an edit changes, swapped out of band (no main swap).

    The whole editor partial was most of an edit's re-render on a big canvas (~390 kB for 300
    nodes, and htmx rebuilding every form, tool and list of it); this carries the new scene,
    the node list, the head, flash, undo/redo, live box and text, and the new base hash in an
    event canvas.js reads before anything is swapped.
    """
    canvas = selectors.canvas_get(canvas.agent, canvas.filename)
    data = selectors.canvas_detail(canvas.agent, canvas, request.POST.get("collapsed"))
    if data["has_errors"] or data["escaped_oneliner"]:
        return _editor(request, canvas, outcome)
    context = {
        **data,
        "flash": [outcome.message, *outcome.warnings],
        "flash_error": not outcome.ok,
        "node_items": _node_items_answer(data, before_text),
    }
    response = render(request, "canvases/_edit_answer.html", context)
    trigger_client_event(response, "memviz:canvas-edited", {"hash": canvas.content_hash})
    return reswap(response, "none")


@require_POST
@signed_in_to_write
def ops(request: HtmxHttpRequest, agent: str, canvas: str) -> HttpResponse:
    """Apply one operation (see docs/curation.md); the UI and the JSON API share this path."""
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    back = reverse("canvas", args=[agent, canvas])
    try:
        data = request_data(request)
        op, base = data.get("op"), data.get("base") or ""
        if not isinstance(op, str) or not op:
            raise EditRefused(Said("op_required"))
        op, params = sent_input(op, data)
        result = services.canvas_apply_edit(
            canvas=canvas_obj, op=op, params=params, base_hash=base, user=request.user
        )
    except EditRefused as exc:
        outcome = _refused(exc, canvas_obj)
        # A conflict redraws the editor on the agent's version; other refusals only say why.
        redraw = isinstance(exc, EditConflict | WriteFailed)
        return respond(
            request,
            outcome,
            redirect_to=back,
            htmx=(lambda o: _editor(request, canvas_obj, o)) if redraw else None,
        )
    said = Said(
        "written_rows" if result.rows_changed else "written",
        number=result.revision.number,
        op=result.revision.op,
        file=canvas,
        rows=result.rows_changed,
    )
    outcome = Outcome(ok=True, message=str(said), warnings=result.warnings, body=result.as_json())
    entry = OPERATIONS.get(op)
    if entry is not None and entry.whole_editor:
        return respond(
            request, outcome, redirect_to=back, htmx=lambda o: _editor(request, canvas_obj, o)
        )
    before = result.revision.before_text
    return respond(
        request,
        outcome,
        redirect_to=back,
        htmx=lambda o: _changed_regions(request, canvas_obj, o, before),
    )


@require_POST
@signed_in_to_write
def sync(request: HtmxHttpRequest, agent: str, canvas: str) -> HttpResponse:
    """Re-index the canvas file as it is on disk now (the watcher does this by itself)."""
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    back = reverse("canvas", args=[agent, canvas])
    try:
        changed = services.canvas_sync(canvas=canvas_obj)
    except EditRefused as exc:
        return respond(request, _refused(exc, canvas_obj), redirect_to=back)
    message = str(Said("synced" if changed else "already_synced"))
    outcome = Outcome(ok=True, message=message, body={"changed": changed})
    return respond(
        request, outcome, redirect_to=back, htmx=lambda o: _editor(request, canvas_obj, o)
    )


@require_GET
def history_page(request: HtmxHttpRequest, agent: str, canvas: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    data = history.revision_list(obj, canvas_obj)
    return render_page(request, "canvases/history.html", data, extra=_branch_extra(request, obj))


def _branch_extra(request: HttpRequest, agent: Agent) -> dict[str, Any]:
    """The "branch here" forms offer the confirmation a live agent needs."""
    if not request.user.is_authenticated:
        return {}
    return {"live": liveness.agent_live(agent).as_json()}


@require_GET
def revision_page(request: HtmxHttpRequest, agent: str, canvas: str, number: int) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    if (big := too_large_answer(request, obj, canvas_obj)) is not None:
        return big
    data = history.revision_detail(obj, canvas_obj, number)
    return render_page(request, "canvases/revision.html", data)


@require_POST
@signed_in_to_write
def revision_restore(
    request: HtmxHttpRequest, agent: str, canvas: str, number: int
) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    try:
        result = services.canvas_restore(
            canvas=canvas_obj,
            number=number,
            base_hash=request.POST.get("base", ""),
            user=request.user,
        )
    except EditRefused as exc:
        back = reverse("canvas-revision", args=[agent, canvas, number])
        return respond(request, _refused(exc, canvas_obj), redirect_to=back)
    message = str(Said("restored", number=number, new=result.revision.number))
    outcome = Outcome(ok=True, message=message, body=result.as_json())
    return respond(request, outcome, redirect_to=reverse("canvas", args=[agent, canvas]))


@require_GET
def preview_page(request: HtmxHttpRequest, agent: str, canvas: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    if (big := too_large_answer(request, obj, canvas_obj)) is not None:
        return big
    data = selectors.resume_preview(canvas_obj)
    # "block" is reserved in Django template contexts (block tags use it).
    extra = {"resume_text": data["block"]}
    return render_page(request, "canvases/preview.html", data, extra=extra, partial="panel")


@require_http_methods(["GET", "POST"])
def resume(request: HtmxHttpRequest, agent: str, canvas: str) -> HttpResponse:
    """GET: the preview; POST: make this canvas the active one in state.json."""
    if request.method == "GET":
        obj = agent_get(agent)
        selectors.canvas_get(obj, canvas)  # 404 for a canvas that is not indexed
        return redirect(reverse("canvas-preview", args=[agent, canvas]))
    return _resume_write(request, agent, canvas)


@signed_in_to_write
def _resume_write(request: HtmxHttpRequest, agent: str, canvas: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    back = reverse("canvas-preview", args=[agent, canvas])
    try:
        confirm = sent_input("resume", request_data(request))[1]["confirm_live"]
        result = services.canvas_resume(canvas=canvas_obj, user=request.user, confirm_live=confirm)
    except EditRefused as exc:
        return respond(request, _refused(exc, canvas_obj), redirect_to=back)
    body = {"held": result.held, "active": result.active, "message": result.message}
    outcome = Outcome(ok=result.held, message=result.message, body=body)
    return respond(request, outcome, redirect_to=back)


@require_GET
def lint_panel(request: HtmxHttpRequest, agent: str, canvas: str) -> HttpResponse:
    obj = agent_get(agent)
    canvas_obj = selectors.canvas_get(obj, canvas)
    if (big := too_large_answer(request, obj, canvas_obj)) is not None:
        return big
    data = lint.canvas_lint(obj, canvas_obj)
    return render_page(request, "canvases/lint.html", data, partial="panel")


@require_GET
def live_panel(request: HtmxHttpRequest, agent: str, canvas: str) -> HttpResponse:
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
