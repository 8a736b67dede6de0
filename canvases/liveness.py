"""Is the agent running? Recent writes to its folder that memviz did not make, or recent `wait`
rows (its map-builder is mid-flight). Read-only: file stats and the index."""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.utils import timezone

from canvases import own_writes
from sessions.memory.paths import confine
from sessions.models import Agent, Row

LIVE_WINDOW = timedelta(minutes=2)
AGENT_AUTHOR = "agent"


@dataclass
class LiveStatus:
    live: bool
    reasons: list[str]
    last_write_age: float | None

    def as_json(self) -> dict[str, Any]:
        return {"live": self.live, "reasons": self.reasons, "last_write_age": self.last_write_age}


def agent_live(agent: Agent, *, now: float | None = None) -> LiveStatus:
    """Recent writes by the agent to its folder (not memviz's own, by fingerprint), or recent
    `wait` rows."""
    now = time.time() if now is None else now
    folder = Path(agent.path)
    ours = own_writes.records(agent)
    newest: float | None = None
    candidates = [
        folder / "state.json",
        *folder.glob("offload-*.jsonl"),
        *folder.glob("mmds/*.mmd"),
    ]
    for path in candidates:
        with contextlib.suppress(OSError):
            # a file memviz wrote counts with the agent's last write before it (own_writes)
            mtime = own_writes.foreign_mtime(ours.get(own_writes.relpath(agent, path)), path.stat())
            if mtime is not None and (newest is None or mtime > newest):
                newest = mtime
    reasons = []
    window = LIVE_WINDOW.total_seconds()
    age = now - newest if newest is not None else None
    if age is not None and age < window:
        reasons.append(f"its folder was written {int(age)} s ago")
    recent_wait = timezone.now() - LIVE_WINDOW
    for stamp_text in Row.objects.filter(agent=agent, node_id="wait").values_list(
        "timestamp", flat=True
    )[:50]:
        with contextlib.suppress(ValueError):
            stamp = datetime.fromisoformat(stamp_text.replace("Z", "+00:00"))
            if stamp.tzinfo and stamp > recent_wait:
                reasons.append("its map-builder is mid-flight (recent wait rows)")
                break
    return LiveStatus(live=bool(reasons), reasons=reasons, last_write_age=age)


def state_data(agent: Agent) -> dict[str, Any]:
    """The agent's state.json as it is on disk now ({} when missing or unreadable)."""
    with contextlib.suppress(OSError, ValueError, RecursionError):
        data = json.loads(confine(Path(agent.path), "state.json").read_bytes().decode("utf-8"))
        if isinstance(data, dict):
            return data
    return {}


def state_active(agent: Agent) -> str | None:
    data = state_data(agent)
    value = data.get("activeMmdFile", data.get("active_mmd_file"))
    return value if isinstance(value, str) else None
