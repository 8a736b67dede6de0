"""What the live websocket (`ws/live/…`, memviz/consumers.py) sends a page or a script, typed:
built by memviz/broadcast.py, read by static/js/live.js, checked key for key by the tests.

An ingest (the agent wrote) and a change made through memviz send the same two messages; the
latter also says who made it and how (``author``, ``op``, ``hash``, ``rows_changed``).
"""

# No `from __future__ import annotations`: NotRequired keys are read at run time (tests).
from typing import Literal, NotRequired, TypedDict


class LiveReady(TypedDict):
    """The first message on a socket: it joined the agent's (and the canvas's) group."""

    type: Literal["live.ready"]
    agent: str
    groups: int


class RowsSeen(TypedDict):
    count: int  # rows new in the session
    tool_call_ids: list[str]  # the last broadcast.MAX_IDS_PER_SESSION of them


class AgentChanged(TypedDict):
    """What changed in an agent's folder: new rows, re-read or removed sessions, canvases."""

    type: Literal["agent.changed"]
    agent: str
    rows: dict[str, RowsSeen]  # by session id
    sessions_reread: list[str]  # rewritten in place (a backfill), read again whole
    sessions_removed: list[str]
    refs: list[str]  # the last new ref names
    refs_count: int
    canvases: list[str]  # new or rewritten
    canvases_removed: list[str]
    active_canvas: str | None  # set only when it changed
    author: NotRequired[str]  # a change made through memviz: by whom, how many rows it moved
    rows_changed: NotRequired[int]


class CanvasUpdated(TypedDict):
    """A canvas has a new revision: by the agent (``author`` "agent") or through memviz."""

    type: Literal["canvas.updated"]
    agent: str
    canvas: str
    revision: int
    author: str
    op: NotRequired[str]  # a change made through memviz: its op, its hash, the rows it moved
    hash: NotRequired[str]
    rows_changed: NotRequired[int]


class GroupMessage(TypedDict):
    """A message to a Channels group: ``type`` names the consumer's handler, which sends the
    page its ``payload``."""

    type: str
    payload: AgentChanged | CanvasUpdated
