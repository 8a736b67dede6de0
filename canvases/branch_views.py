"""The "branch here" endpoint, shared by the history page, the compare view and the replay page."""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from canvases import branches, selectors
from canvases.edit_ops import EditRefused, flag_param, text_param
from canvases.edit_views import _params  # the curation views' request reading
from memviz.access import signed_in_to_write
from memviz.responders import HtmxHttpRequest, Outcome, respond
from sessions.selectors import agent_get


@require_POST
@signed_in_to_write
def branch(request: HtmxHttpRequest, agent: str) -> HttpResponse:
    """Write a new canvas from `file` at `revision` (absent: its text now), or from the canvas a
    replay of `session` shows at `row`; then offer resume on it (its preview page)."""
    obj = agent_get(agent)
    back = reverse("agent", args=[agent])
    try:
        params = _params(request)
        session = params.get("session")
        moment = None
        if session:
            line = _line(params.get("row"))
            file, moment = branches.moment_of_replay(obj, str(session), line)
            back = reverse("session-replay", args=[agent, session]) + f"?row={line}"
        else:
            file = text_param(params, "file")
        canvas = selectors.canvas_get(obj, file)
        if moment is None:
            back = reverse("canvas-history", args=[agent, canvas.filename])
        revision = params.get("revision") if moment is None else None
        if revision is not None and (not isinstance(revision, int) or isinstance(revision, bool)):
            raise EditRefused("'revision' must be a revision number")
        label = params.get("label") or ""
        result = branches.canvas_branch(
            canvas=canvas,
            moment=moment,
            revision=revision,
            label=label if isinstance(label, str) else "",
            user=request.user,
            confirm_live=flag_param(params, "confirm_live", False),
        )
    except EditRefused as exc:
        return respond(request, Outcome.refused(str(exc), exc.status), redirect_to=back)
    preview = reverse("canvas-preview", args=[agent, result.file])
    message = _(
        "Branched %(source)s into mmds/%(file)s with %(rows)d copied row(s); "
        "resume on it from this preview."
    ) % {"source": _source_text(result), "file": result.file, "rows": result.rows_copied}
    body = {
        **result.as_json(),
        "canvas": reverse("canvas", args=[agent, result.file]),
        "preview": preview,
        "resume": reverse("canvas-resume", args=[agent, result.file]),
    }
    outcome = Outcome(ok=True, message=message, status=201, warnings=result.notes, body=body)
    return respond(request, outcome, redirect_to=preview)


def _line(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise EditRefused("'row' must be the line number of a row of the session") from None


def _source_text(result: branches.BranchOutcome) -> str:
    source = result.revision.params
    if source.get("revision") is None:
        return str(source["source"])
    return f"{source['source']} r{source['revision']}"
