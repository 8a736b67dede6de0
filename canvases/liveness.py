"""Is the agent running? Recent writes to its folder that memviz did not make, or recent `wait`
rows (its map-builder is mid-flight). Read-only: file stats and the index."""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from agentfs import json_text
from agentfs.layout import CANVAS_DIR, STATE_FILE, offload_files
from agentfs.paths import UnsafePath, open_regular
from agentfs.row_fields import WAIT, is_wait
from agentfs.state import StateFile, active_mmd_file, read_state
from canvases import own_writes
from canvases.messages import Said
from canvases.page_types import LiveItem
from sessions.instants import parse_instant
from sessions.models import Agent, Row

LIVE_WINDOW = timedelta(minutes=2)


def _session_files(folder: Path) -> list[Path]:
    """The agent's session files; none when its folder cannot be listed (gone, a file now, not
    readable by memviz): such an agent writes nothing memviz could see, so it is not live."""
    try:
        return offload_files(folder)
    except OSError:
        return []
AGENT_AUTHOR = "agent"


@dataclass
class LiveStatus:
    live: bool
    reasons: list[str]
    last_write_age: float | None

    def as_json(self) -> LiveItem:
        return {"live": self.live, "reasons": self.reasons, "last_write_age": self.last_write_age}


def _newest_foreign(agent: Agent, paths: list[Path]) -> float | None:
    """The newest write to `paths` that memviz did not make (by fingerprint, own_writes)."""
    ours = own_writes.records(agent)
    newest: float | None = None
    for path in paths:
        with contextlib.suppress(OSError):
            mtime = own_writes.foreign_mtime(ours.get(own_writes.relpath(agent, path)), path.stat())
            if mtime is not None and (newest is None or mtime > newest):
                newest = mtime
    return newest


def map_builder_in_flight(agent: Agent, *, now: float | None = None) -> Said | None:
    """Why the agent's map-builder holds a copy of a canvas now (spec §7 hazard 3), or None.

    It claims rows (`wait`) in every offload file before its LLM call and backfills them after
    the reply: `wait` rows with a recent timestamp, or `wait` rows while the agent rewrote an
    offload file recently (a claim of older rows), mean a reply may still land.
    """
    now = time.time() if now is None else now
    stamps = list(
        Row.objects.filter(agent=agent, node_id=WAIT).values_list("timestamp", flat=True)[:500]
    )
    if not stamps:
        if _claims_not_yet_indexed(agent, now):
            return Said("live_claim_unindexed")
        return None
    window = LIVE_WINDOW.total_seconds()
    recent = False
    for stamp_text in stamps:  # read as every page reads a row's stamp (sessions/instants.py)
        stamp = parse_instant(stamp_text)
        recent = recent or bool(stamp and now - stamp.timestamp() < window)
    claimed = _newest_foreign(agent, _session_files(Path(agent.path)))
    if not recent and (claimed is None or now - claimed >= window):
        return None  # stale claims of a failed pass (hazard 4)
    return Said("live_mid_flight", rows=len(stamps))


# An offload file the agent wrote this recently may hold claims the watcher has not indexed yet
# (it reads a burst ~200 ms after it ends, then ingests): its tail is read directly.
CLAIM_GRACE_S = 10.0
CLAIM_TAIL_BYTES = 64 * 1024


def _claims_not_yet_indexed(agent: Agent, now: float) -> bool:
    """`wait` rows at the end of an offload file the agent wrote in the last seconds."""
    ours = own_writes.records(agent)
    for path in _session_files(Path(agent.path)):
        with contextlib.suppress(OSError, UnsafePath):
            mtime = own_writes.foreign_mtime(ours.get(own_writes.relpath(agent, path)), path.stat())
            if mtime is None or now - mtime > CLAIM_GRACE_S:
                continue
            with open_regular(path, folders=1) as handle:
                start = max(0, os.fstat(handle.fileno()).st_size - CLAIM_TAIL_BYTES)
                handle.seek(start)
                lines = handle.read(CLAIM_TAIL_BYTES).splitlines()[1 if start else 0 :]
            if any(_is_claim(line) for line in lines):  # a cut first line is not read
                return True
    return False


def _is_claim(line: bytes) -> bool:
    if WAIT.encode() not in line:
        return False
    try:
        row = json_text.loads(line)
    except ValueError:
        return False
    return isinstance(row, dict) and is_wait(row.get("node_id"))


def agent_live(agent: Agent, *, now: float | None = None) -> LiveStatus:
    """Recent writes by the agent to its folder (not memviz's own, by fingerprint), or its
    map-builder mid-flight."""
    now = time.time() if now is None else now
    folder = Path(agent.path)
    newest = _newest_foreign(
        agent,
        [folder / STATE_FILE, *_session_files(folder), *folder.glob(f"{CANVAS_DIR}/*.mmd")],
    )
    reasons = []
    age = now - newest if newest is not None else None
    if age is not None and age < LIVE_WINDOW.total_seconds():
        reasons.append(str(Said("live_written", seconds=int(age))))
    in_flight = map_builder_in_flight(agent, now=now)
    if in_flight:
        reasons.append(str(in_flight))
    return LiveStatus(live=bool(reasons), reasons=reasons, last_write_age=age)


def state_file(agent: Agent) -> StateFile:
    """The agent's state.json as it is on disk now (its data {} when missing or unreadable)."""
    # read_state goes through the one opener: no link, FIFO or device, a bounded size.
    return read_state(Path(agent.path) / STATE_FILE)


def state_active(agent: Agent) -> str | None:
    """The canvas state.json names active now, by the one rule (agentfs/state.active_mmd_file)."""
    return active_mmd_file(state_file(agent))
