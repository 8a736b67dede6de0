"""Intent records: a multi-file edit is written down before any file is touched.

A write that spans several files (a merge changes the canvas and rows in many offload files)
first stores an intent — what it will change, the hashes before and after, the rows it
re-points — in a journal folder outside the memory folders, fsynced. It is removed once the
change is on disk and in the index. An intent still present afterwards (the process died, the
disk filled, the database refused the commit) is completed or rolled back by whoever next writes
to that agent, and at start-up, so a change is never left half done.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentfs.atomic import fsync_folder, write_atomic

SUFFIX = ".intent.json"


@dataclass
class Intent:
    agent_dir: str
    op: str
    payload: dict[str, Any]
    stage: str = "prepared"  # "prepared" → nothing renamed yet; "canvas" → the canvas is new
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    created: float = field(default_factory=time.time)


def intent_save(folder: Path, intent: Intent) -> None:
    """Write (or overwrite) the intent durably; raises OSError (e.g. ENOSPC) if it cannot."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = json.dumps(asdict(intent), ensure_ascii=False).encode("utf-8")
    write_atomic(folder / f"{intent.id}{SUFFIX}", data, must_exist=False)


def intent_load_all(folder: Path, agent_dir: str | None = None) -> list[Intent]:
    """The pending intents, oldest first; only those of `agent_dir` when given."""
    found = []
    with contextlib.suppress(FileNotFoundError):
        for entry in folder.iterdir():
            if not entry.name.endswith(SUFFIX) or entry.name.startswith("."):
                continue
            try:
                intent = Intent(**json.loads(entry.read_bytes()))
            except (OSError, ValueError, TypeError):
                continue  # unreadable: written by something else, never by intent_save
            if agent_dir is None or intent.agent_dir == agent_dir:
                found.append(intent)
    return sorted(found, key=lambda i: i.created)


def intent_clear(folder: Path, intent_id: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(folder / f"{intent_id}{SUFFIX}")
        fsync_folder(folder)
