"""An in-process memo of the debugging views, keyed by what their content depends on.

Reads never write, so nothing is stored on disk or in the database: a key is built from the
index's own change markers (the agent's last ingest, its row and ref counts, its canvases'
content hashes, the newest revision), so any change of content gives a new key and the old
entry simply ages out.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from threading import Lock
from typing import Any, TypeVar

from django.db.models import Max

from canvases.models import Revision
from sessions.models import Agent, AgentSession, Canvas, TrackedFile

T = TypeVar("T")
MAX_ENTRIES = 64
_ENTRIES: OrderedDict[Hashable, Any] = OrderedDict()
_LOCK = Lock()


def _canvas_state(agent: Agent) -> tuple[tuple, int | None]:
    """The agent's canvases (file, content hash) and its newest revision: what findings read."""
    canvases = tuple(
        Canvas.objects.filter(agent=agent)
        .order_by("filename")
        .values_list("filename", "content_hash")
    )
    newest = Revision.objects.filter(canvas__agent=agent).aggregate(n=Max("id"))["n"]
    return canvases, newest


def agent_fingerprint(agent: Agent) -> tuple:
    canvases, newest = _canvas_state(agent)
    return (
        agent.pk,
        agent.ingested_at,
        agent.last_write_at,
        agent.rows_count,
        agent.refs_count,
        agent.active_mmd_file,
        canvases,
        newest,
    )


def session_fingerprint(agent: Agent, session: AgentSession) -> tuple:
    """What one session's findings depend on: its own file, the canvases, the refs, revisions.

    Not the agent's last ingest: a live agent appends to one session at a time, and the other
    sessions' findings stay valid (the map-builder's rewrites of every file change them all).
    """
    tracked = (
        TrackedFile.objects.filter(agent=agent, relpath=session.relpath)
        .values_list("size", "mtime_ns", "prefix_hash")
        .first()
    )
    canvases, newest = _canvas_state(agent)
    return (
        session.pk,
        session.rows_count,
        session.last_timestamp,
        tracked,
        canvases,
        newest,
        agent.refs_count,
    )


def memo(key: Hashable, build: Callable[[], T]) -> T:
    with _LOCK:
        if key in _ENTRIES:
            _ENTRIES.move_to_end(key)
            return _ENTRIES[key]
    value = build()  # outside the lock: two racing builds give equal values
    with _LOCK:
        _ENTRIES[key] = value
        while len(_ENTRIES) > MAX_ENTRIES:
            _ENTRIES.popitem(last=False)
    return value


def memo_clear() -> None:
    with _LOCK:
        _ENTRIES.clear()
