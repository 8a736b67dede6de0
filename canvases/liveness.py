"""Is the agent running? Recent writes to its folder that memviz did not make, or recent `wait`
rows (its map-builder is mid-flight). Read-only: file stats and the index."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.utils import timezone

from canvases.models import Revision
from sessions.memory.state import read_state
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
    """Recent writes by the agent to its folder (not ours), or recent `wait` rows."""
    now = time.time() if now is None else now
    folder = Path(agent.path)
    ours = (
        Revision.objects.filter(canvas__agent=agent)
        .exclude(author=AGENT_AUTHOR)
        .order_by("-created_at")
        .values_list("created_at", flat=True)
        .first()
    )
    ours_ts = ours.timestamp() + 1.0 if ours else 0.0
    newest: float | None = None
    candidates = [
        folder / "state.json",
        *folder.glob("offload-*.jsonl"),
        *folder.glob("mmds/*.mmd"),
    ]
    for path in candidates:
        with contextlib.suppress(OSError):
            mtime = path.stat().st_mtime
            if mtime > ours_ts and (newest is None or mtime > newest):
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
    # read_state goes through the one opener: no link, FIFO or device, a bounded size.
    state = read_state(Path(agent.path) / "state.json")
    return state.data if state.error is None else {}


def state_active(agent: Agent) -> str | None:
    data = state_data(agent)
    value = data.get("activeMmdFile", data.get("active_mmd_file"))
    return value if isinstance(value, str) else None
