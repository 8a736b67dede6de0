"""Writing to a live agent: the line-number rule while its map-builder has a reply in flight.
(What memviz answers a live agent's curator — each says why, and promises only what memviz
does — is worded in canvases/messages.py.)"""

from __future__ import annotations

from canvases import line_keeping, liveness
from canvases.messages import Said
from canvases.refused import EditConflict
from sessions.models import Agent


def lines_for_live_agent(agent: Agent, before: str, after: str, *, exact: bool = False) -> str:
    """The text to write instead of `after`: with every line number of `before` kept while a
    map-builder reply is in flight (placeholders), or compacted once none is. `exact` (undo,
    redo, restore): the text must be written as it is, so any move is refused."""
    in_flight = liveness.map_builder_in_flight(agent)
    if in_flight is None:
        return after if exact else line_keeping.compact(after)
    kept = line_keeping.keep_line_numbers(before, after)
    if kept is None or (exact and kept != after):
        raise EditConflict(Said("moves_lines_in_flight", reason=in_flight))
    return kept
