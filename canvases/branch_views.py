"""The "branch here" answer, shared by the history page, the compare view and the replay page
(whose URL view is `debugging.replay_branch.branch`)."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.urls import reverse
from django.utils.translation import gettext as _

from canvases import branches, selectors
from canvases.page_types import BranchAnswer
from canvases.refused import EditRefused
from memviz.responders import HtmxHttpRequest, Outcome, respond
from sessions.models import Agent, Canvas


def branch_from_revision(
    request: HtmxHttpRequest, obj: Agent, params: dict[str, Any]
) -> HttpResponse:
    """Write a new canvas from `file` at `revision` (absent: its text now); then offer resume on
    it (its preview page). The URL's view (`debugging.replay_branch.branch`) hands it requests
    without a replay `session`, already signed in and read (`OTHER_INPUTS["branch"]`)."""
    back = reverse("agent", args=[obj.slug])
    try:
        canvas = selectors.canvas_get(obj, params["file"])
    except EditRefused as exc:
        return respond(request, Outcome.refused(str(exc), exc.status), redirect_to=back)
    back = reverse("canvas-history", args=[obj.slug, canvas.filename])
    return branch_answer(request, canvas, params, revision=params.get("revision"), back=back)


def branch_answer(
    request: HtmxHttpRequest,
    canvas: Canvas,
    params: dict[str, Any],
    *,
    back: str,
    moment: branches.Moment | None = None,
    revision: int | None = None,
) -> HttpResponse:
    """Branch `canvas` at `moment` (or `revision`, or its text now) and answer: the new file's
    preview, where resume is offered; a refusal goes `back` with its reason."""
    agent = canvas.agent.slug
    try:
        result = branches.canvas_branch(
            canvas=canvas,
            moment=moment,
            revision=revision,
            label=params.get("label", ""),
            user=request.user,
            confirm_live=params["confirm_live"],
        )
    except EditRefused as exc:
        return respond(request, Outcome.refused(str(exc), exc.status), redirect_to=back)
    preview = reverse("canvas-preview", args=[agent, result.file])
    message = _(
        "Branched %(source)s into mmds/%(file)s with %(rows)d copied row(s); "
        "resume on it from this preview."
    ) % {"source": _source_text(result), "file": result.file, "rows": result.rows_copied}
    body: BranchAnswer = {
        **result.as_json(),
        "canvas": reverse("canvas", args=[agent, result.file]),
        "preview": preview,
        "resume": reverse("canvas-resume", args=[agent, result.file]),
    }
    outcome = Outcome(ok=True, message=message, status=201, warnings=result.notes, body=body)
    return respond(request, outcome, redirect_to=preview)


def _source_text(result: branches.BranchOutcome) -> str:
    source = result.revision.params
    if source.get("revision") is None:
        return str(source["source"])
    return f"{source['source']} r{source['revision']}"
