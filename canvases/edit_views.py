"""Curation views: the ops JSON/htmx endpoint, history and restore, resume, re-sync, lint."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import reswap, trigger_client_event

from canvases import history, lint, liveness, selectors, services
from canvases.edit_ops import OPERATIONS, sent_input
from canvases.indexing import parsed
from canvases.loading import canvas_url, canvas_view
from canvases.messages import Said
from canvases.op_input import request_data, sent_base
from canvases.page_types import CanvasPage, EditRefusal, ResumeAnswer, SyncAnswer
from canvases.refused import EditConflict, EditRefused, WriteFailed
from canvases.views import node_list_html, node_list_items
from memviz.pages import render_page
from memviz.responders import HtmxHttpRequest, Outcome, respond
from sessions.models import Agent, Canvas


def _refused(exc: EditRefused, canvas: Canvas) -> Outcome:
    body: EditRefusal = {"error": str(exc), "status": exc.status}
    if exc.code:
        body["code"] = exc.code
    if isinstance(exc, EditConflict):
        body["conflict"] = True
        body["current_hash"] = exc.current_hash or canvas.content_hash
    if isinstance(exc, WriteFailed):
        body["file"] = exc.file
        body["reason"] = exc.reason
    return Outcome(ok=False, message=body["error"], status=exc.status, body=body)


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
@canvas_view(write=True)
def ops(request: HtmxHttpRequest, canvas: Canvas) -> HttpResponse:
    """Apply one operation (see docs/curation.md); the UI and the JSON API share this path."""
    back = canvas_url(canvas)
    try:
        data = request_data(request)
        op, base = data.get("op"), sent_base(data)
        if not isinstance(op, str) or not op:
            raise EditRefused(Said("op_required"))
        op, params = sent_input(op, data)
        result = services.canvas_apply_edit(
            canvas=canvas, op=op, params=params, base_hash=base, user=request.user
        )
    except EditRefused as exc:
        outcome = _refused(exc, canvas)
        # A conflict redraws the editor on the agent's version; other refusals only say why.
        redraw = isinstance(exc, EditConflict | WriteFailed)
        return respond(
            request,
            outcome,
            redirect_to=back,
            htmx=(lambda o: _editor(request, canvas, o)) if redraw else None,
        )
    said = Said(
        "written_rows" if result.rows_changed else "written",
        number=result.revision.number,
        op=result.revision.op,
        file=canvas.filename,
        rows=result.rows_changed,
    )
    outcome = Outcome(ok=True, message=str(said), warnings=result.warnings, body=result.as_json())
    entry = OPERATIONS.get(op)
    if entry is not None and entry.whole_editor:
        return respond(
            request, outcome, redirect_to=back, htmx=lambda o: _editor(request, canvas, o)
        )
    before = result.revision.before_text
    return respond(
        request,
        outcome,
        redirect_to=back,
        htmx=lambda o: _changed_regions(request, canvas, o, before),
    )


@require_POST
@canvas_view(write=True)
def sync(request: HtmxHttpRequest, canvas: Canvas) -> HttpResponse:
    """Re-index the canvas file as it is on disk now (the watcher does this by itself)."""
    back = canvas_url(canvas)
    try:
        changed = services.canvas_sync(canvas=canvas)
    except EditRefused as exc:
        return respond(request, _refused(exc, canvas), redirect_to=back)
    message = str(Said("synced" if changed else "already_synced"))
    answer: SyncAnswer = {"changed": changed}
    outcome = Outcome(ok=True, message=message, body=answer)
    return respond(request, outcome, redirect_to=back, htmx=lambda o: _editor(request, canvas, o))


@require_GET
@canvas_view()
def history_page(request: HtmxHttpRequest, canvas: Canvas) -> HttpResponse:
    data = history.revision_list(canvas.agent, canvas)
    extra = branch_offer(request, canvas.agent)
    return render_page(request, "canvases/history.html", data, extra=extra)


def branch_offer(request: HttpRequest, agent: Agent) -> dict[str, Any]:
    """The "branch here" forms (history, compare) offer the confirmation a live agent needs."""
    if not request.user.is_authenticated:
        return {}
    return {"live": liveness.agent_live(agent).as_json()}


@require_GET
@canvas_view(whole=True)
def revision_page(request: HtmxHttpRequest, canvas: Canvas, number: int) -> HttpResponse:
    data = history.revision_detail(canvas.agent, canvas, number)
    return render_page(request, "canvases/revision.html", data)


@require_POST
@canvas_view(write=True)
def revision_restore(request: HtmxHttpRequest, canvas: Canvas, number: int) -> HttpResponse:
    try:
        base = sent_base(request_data(request))  # a form's field or a JSON body's key
        result = services.canvas_restore(
            canvas=canvas, number=number, base_hash=base, user=request.user
        )
    except EditRefused as exc:
        back = canvas_url(canvas, "canvas-revision", number)
        return respond(request, _refused(exc, canvas), redirect_to=back)
    message = str(Said("restored", number=number, new=result.revision.number))
    outcome = Outcome(ok=True, message=message, body=result.as_json())
    return respond(request, outcome, redirect_to=canvas_url(canvas))


@require_GET
@canvas_view(whole=True)
def preview_page(request: HtmxHttpRequest, canvas: Canvas) -> HttpResponse:
    data = selectors.resume_preview(canvas)
    # "block" is reserved in Django template contexts (block tags use it).
    extra = {"resume_text": data["block"]}
    return render_page(request, "canvases/preview.html", data, extra=extra, partial="panel")


@require_http_methods(["GET", "POST"])
def resume(request: HtmxHttpRequest, agent: str, canvas: str) -> HttpResponseBase:
    """GET: the preview; POST: make this canvas the active one in state.json."""
    if request.method == "GET":
        return _to_preview(request, agent=agent, canvas=canvas)
    return _resume_write(request, agent=agent, canvas=canvas)


@canvas_view()
def _to_preview(request: HtmxHttpRequest, canvas: Canvas) -> HttpResponse:
    return redirect(canvas_url(canvas, "canvas-preview"))


@canvas_view(write=True)
def _resume_write(request: HtmxHttpRequest, canvas: Canvas) -> HttpResponse:
    back = canvas_url(canvas, "canvas-preview")
    try:
        confirm = sent_input("resume", request_data(request))[1]["confirm_live"]
        result = services.canvas_resume(canvas=canvas, user=request.user, confirm_live=confirm)
    except EditRefused as exc:
        return respond(request, _refused(exc, canvas), redirect_to=back)
    body: ResumeAnswer = {"held": result.held, "active": result.active, "message": result.message}
    outcome = Outcome(ok=result.held, message=result.message, body=body)
    return respond(request, outcome, redirect_to=back)


@require_GET
@canvas_view(whole=True)
def lint_panel(request: HtmxHttpRequest, canvas: Canvas) -> HttpResponse:
    data = lint.canvas_lint(canvas.agent, canvas)
    return render_page(request, "canvases/lint.html", data, partial="panel")


@require_GET
@canvas_view()
def live_panel(request: HtmxHttpRequest, canvas: Canvas) -> HttpResponse:
    """Polled by the canvas page: live badge, and human edits an agent rewrite dropped."""
    return render_page(request, "canvases/_live.html", selectors.live_panel(canvas))
