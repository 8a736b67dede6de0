"""Live broadcasts: what an ingest changed, sent to the Channels groups of pages that show it.

Called only after commit (``transaction.on_commit``), never waits for browsers: a send is handed
to the web server's event loop when this process has one (the embedded default, where the
in-memory layer lives on that loop), and otherwise sent through the layer directly (Redis).
Group names: ``agent.<agent pk>`` for agent and session pages, ``canvas.<canvas pk>`` for one canvas.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from memviz import outage
from memviz.live_types import AgentChanged, CanvasUpdated, GroupMessage, RowsSeen

log = logging.getLogger(__name__)
_REDIS_DOWN = outage.channel_layer_errors()

# Above this many new rows per session, a message carries the count and the last ids only.
MAX_IDS_PER_SESSION = 500

_server_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


@dataclass
class AgentDelta:
    """What one ingest of one agent changed: the payload of the live broadcast sent after commit."""

    agent_pk: int
    agent_slug: str
    # session id -> tool_call_ids of rows that were not in the index before (in file order)
    new_rows: dict[str, list[str]] = field(default_factory=dict)
    # sessions whose file was rewritten in place (backfill, status updates) and re-read whole
    sessions_reread: list[str] = field(default_factory=list)
    sessions_removed: list[str] = field(default_factory=list)
    new_refs: list[str] = field(default_factory=list)
    # (canvas pk, filename, revision number) of canvases new or rewritten on disk
    canvases_changed: list[tuple[int, str, int]] = field(default_factory=list)
    canvases_removed: list[str] = field(default_factory=list)
    active_canvas: str | None = None  # set only when it changed

    @property
    def empty(self) -> bool:
        return not (
            self.new_rows
            or self.sessions_reread
            or self.sessions_removed
            or self.new_refs
            or self.canvases_changed
            or self.canvases_removed
            or self.active_canvas is not None
        )


@dataclass
class CanvasChange:
    """One committed change of a canvas made through memviz (an edit, undo, restore, resume)."""

    agent_pk: int
    agent_slug: str
    canvas_pk: int
    canvas: str
    revision: int
    author: str
    op: str
    hash: str
    rows_changed: int = 0
    active_canvas: str | None = None  # set when the change made this canvas the active one


def agent_group(agent_pk: int) -> str:
    return f"agent.{agent_pk}"


def canvas_group(canvas_pk: int) -> str:
    return f"canvas.{canvas_pk}"


def bind_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Remember the event loop that serves websockets in this process (set by the consumer)."""
    global _server_loop
    with _lock:
        _server_loop = loop


def delta_messages(delta: AgentDelta) -> list[tuple[str, GroupMessage]]:
    """(group, message) pairs for one agent delta; the message ``type`` names the consumer handler."""
    rows: dict[str, RowsSeen] = {}
    for session_id, ids in delta.new_rows.items():
        rows[session_id] = {"count": len(ids), "tool_call_ids": ids[-MAX_IDS_PER_SESSION:]}
    agent_payload: AgentChanged = {
        "type": "agent.changed",
        "agent": delta.agent_slug,
        "rows": rows,
        "sessions_reread": delta.sessions_reread,
        "sessions_removed": delta.sessions_removed,
        "refs": delta.new_refs[-MAX_IDS_PER_SESSION:],
        "refs_count": len(delta.new_refs),
        "canvases": [name for _pk, name, _n in delta.canvases_changed],
        "canvases_removed": delta.canvases_removed,
        "active_canvas": delta.active_canvas,
    }
    messages: list[tuple[str, GroupMessage]] = [
        (agent_group(delta.agent_pk), {"type": "agent.changed", "payload": agent_payload})
    ]
    for pk, name, number in delta.canvases_changed:
        payload: CanvasUpdated = {
            "type": "canvas.updated",
            "agent": delta.agent_slug,
            "canvas": name,
            "revision": number,
            "author": "agent",
        }
        messages.append((canvas_group(pk), {"type": "canvas.updated", "payload": payload}))
    return messages


def broadcast_delta(delta: AgentDelta) -> None:
    for group, message in delta_messages(delta):
        group_send(group, message)


def change_messages(change: CanvasChange) -> list[tuple[str, GroupMessage]]:
    """The messages for a change made through memviz: every open page of the canvas updates."""
    canvas_payload: CanvasUpdated = {
        "type": "canvas.updated",
        "agent": change.agent_slug,
        "canvas": change.canvas,
        "revision": change.revision,
        "author": change.author,
        "op": change.op,
        "hash": change.hash,
        "rows_changed": change.rows_changed,
    }
    agent_payload: AgentChanged = {
        "type": "agent.changed",
        "agent": change.agent_slug,
        "rows": {},
        "sessions_reread": [],
        "sessions_removed": [],
        "refs": [],
        "refs_count": 0,
        "canvases": [change.canvas],
        "canvases_removed": [],
        "active_canvas": change.active_canvas,
        "author": change.author,
        "rows_changed": change.rows_changed,
    }
    return [
        (canvas_group(change.canvas_pk), {"type": "canvas.updated", "payload": canvas_payload}),
        (agent_group(change.agent_pk), {"type": "agent.changed", "payload": agent_payload}),
    ]


def broadcast_change(change: CanvasChange) -> None:
    for group, message in change_messages(change):
        group_send(group, message)


def group_send(group: str, message: GroupMessage) -> None:
    """Send without blocking ingestion; a full or missing layer only loses the live message."""
    layer = get_channel_layer()
    if layer is None:
        return
    loop = _server_loop
    if loop is not None and loop.is_running():
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.create_task(_send(layer, group, message))
        else:
            asyncio.run_coroutine_threadsafe(_send(layer, group, message), loop)
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        _send_blocking(layer, group, message)
    else:
        # Called from code that runs inside some other event loop (a sync API driven by one, as
        # Playwright's is in tests): async_to_sync refuses that thread, so send from another.
        threading.Thread(target=_send_blocking, args=(layer, group, message), daemon=True).start()


def _send_blocking(layer: Any, group: str, message: GroupMessage) -> None:
    try:
        async_to_sync(_send)(layer, group, message)
    except Exception:  # noqa: BLE001 - a broadcast must never fail an ingest
        log.exception("live broadcast to %s failed", group)


async def _send(layer: Any, group: str, message: GroupMessage) -> None:
    try:
        await layer.group_send(group, message)
    except _REDIS_DOWN as exc:  # Redis down: one line per outage, no traceback
        outage.log_outage("queue", exc)
    except Exception:  # noqa: BLE001
        log.exception("live broadcast to %s failed", group)
