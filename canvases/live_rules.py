"""Writing to a live agent: what memviz answers (each says why, and promises only what memviz
does), and the line-number rule while its map-builder has a reply in flight."""

from __future__ import annotations

from canvases import line_keeping, liveness
from canvases.edit_ops import EditConflict
from sessions.models import Agent

DROP_WHILE_LIVE = (
    "the agent looks live ({reasons}): a running gateway re-marks the rows it compresses, which "
    'turns "deleted" back into true, and it reads "deleted" only when a session is loaded again '
    "(spec §4.8.5). Stop the gateway first, or confirm to mark the rows anyway: rows the agent "
    're-marks are then listed on this canvas\'s page and its agent\'s page, with "drop again".'
)
REAPPLY_WHILE_LIVE = (
    "the agent looks live ({reasons}): its map-builder may drop this edit again within two "
    "minutes. Confirm to re-apply it anyway."
)
HEADER_WHILE_LIVE = (
    "memviz wrote the agent-readable metadata line at the top, which moves every line down by "
    "one: a map-builder reply already in flight splices its blocks by line number and can land "
    "one line off. memviz checks the canvas after the agent's next write and offers re-apply"
)
DROP_CONFIRMED = (
    'the rows are marked "deleted", but the agent is running: it drops them from its context only '
    "when the session is loaded again, and may re-mark them meanwhile (the page will say so)"
)
REAPPLIED_ON_NEWER = (
    "the agent had changed this canvas since you loaded it; your edit touched "
    "nodes it did not change, so it was applied to the agent's newer version"
)
EDIT_WHILE_LIVE = (
    "the agent is live: its map-builder may overwrite this edit within two minutes; "
    "memviz keeps the edit in its history and offers to re-apply what a rewrite drops"
)
MOVES_LINES_IN_FLIGHT = (
    "{reason}: its reply will splice blocks into this canvas by line number (spec §7 hazard 3), "
    "and this change would insert a line above lines the reply may target, so the reply would "
    "land on the wrong lines. Nothing was written; try again once the reply has landed "
    "(about two minutes at most)."
)


def lines_for_live_agent(agent: Agent, before: str, after: str, *, exact: bool = False) -> str:
    """The text to write instead of `after`: with every line number of `before` kept while a
    map-builder reply is in flight (placeholders), or compacted once none is. `exact` (undo,
    redo, restore): the text must be written as it is, so any move is refused."""
    in_flight = liveness.map_builder_in_flight(agent)
    if in_flight is None:
        return after if exact else line_keeping.compact(after)
    kept = line_keeping.keep_line_numbers(before, after)
    if kept is None or (exact and kept != after):
        raise EditConflict(MOVES_LINES_IN_FLIGHT.format(reason=in_flight))
    return kept
