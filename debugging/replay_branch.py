"""Branch here from a replay frame: the canvas a replay shows at one row, as a branch moment.

`POST /a/<agent>/branch/` with `session` + `row` comes here; with `file` (+ `revision`) it is
the canvases app's own branch (`canvases.branch_views.branch`), which this view hands over to.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from canvases import branch_views, selectors
from canvases.branches import REPLAY, Moment
from canvases.edit_ops import sent_input
from canvases.mermaid import edits
from canvases.messages import Said
from canvases.op_input import request_data
from canvases.refused import EditRefused
from debugging.debug_selectors import replay_for  # the replay the page showed, memoized
from memviz.responders import HtmxHttpRequest, Outcome, respond
from sessions.access import signed_in_to_write
from sessions.models import Agent, AgentSession
from sessions.selectors import agent_get


@require_POST
@signed_in_to_write
def branch(request: HtmxHttpRequest, agent: str) -> HttpResponse:
    """A new canvas from the canvas a replay of `session` shows at `row`; without `session`,
    from `file` at `revision` (canvases' branch)."""
    obj = agent_get(agent)
    back = reverse("agent", args=[agent])
    try:
        data = request_data(request)
        if not data.get("session"):
            return branch_views.branch_from_revision(request, obj, sent_input("branch", data)[1])
        params = sent_input("branch_replay", data)[1]
        back = reverse("session-replay", args=[agent, params["session"]])
        line = params["row"]
        back += f"?row={line}"
        file, moment = moment_of_replay(obj, params["session"], line)
        canvas = selectors.canvas_get(obj, file)
    except EditRefused as exc:
        return respond(request, Outcome.refused(str(exc), exc.status), redirect_to=back)
    return branch_views.branch_answer(request, canvas, params, moment=moment, back=back)


def moment_of_replay(agent: Agent, session_id: str, line: int) -> tuple[str, Moment]:
    """The canvas a replay frame shows at the row of line `line`, as it shows it."""
    session = AgentSession.objects.filter(agent=agent, session_id=session_id).first()
    if session is None:
        raise EditRefused(Said("branch_no_session", agent=agent.slug, session=session_id))
    replay = replay_for(agent, session)
    index = next((i for i, r in enumerate(replay.rows) if r.line_no >= line), None)
    scene_index = replay.scene_of[index] if index is not None else None
    if index is None or scene_index is None:
        raise EditRefused(Said("branch_no_canvas_at_row", line=line))
    scene = replay.scenes[scene_index]
    text = scene.text
    present = set(scene.present(index))
    try:
        for node_id in [n.id for n in scene.nodes if n.id not in present]:
            text = edits.prune(text, node_id, bridge=False).text  # not there yet at this instant
    except edits.EditError as exc:
        raise EditRefused(Said("branch_not_rebuilt", reason=Said.engine(exc))) from None
    moment = Moment(
        REPLAY,
        text,
        scene.revision,
        until=replay.times[index],
        inclusive=True,
        session_id=session_id,
        replay_row=replay.rows[index].line_no,
    )
    return scene.file, moment
