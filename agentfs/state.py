"""Readers for `state.json` and `sessions-registry.json`; corrupt files are reported, not raised."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentfs import json_text
from agentfs.jsonl import MAX_NESTING, nesting_exceeds
from agentfs.layout import REGISTRY_FILE, STATE_FILE, offload_file_name
from agentfs.paths import UnsafePath, confine_file, is_link, open_regular
from agentfs.wording import Refusal, refusal_of

__all__ = [
    "MAX_STATE_BYTES",
    "RegistryEntry",
    "StateFile",
    "active_mmd_file",
    "parse_session_key",
    "read_registry",
    "read_state",
    "sanitize_path_segment",
    "state_value",
]

MAX_STATE_BYTES = 8 * 1024 * 1024
_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class StateFile:
    data: dict[str, Any]
    problem: Refusal | None  # why the file could not be used (a code the pages translate)
    raw: str

    @property
    def error(self) -> str | None:
        """The problem in English (scripts, logs, the index beside its code)."""
        return self.problem.reason if self.problem is not None else None


def _read_json_object(path: Path | None, what: str) -> tuple[dict[str, Any], Refusal | None, str]:
    if path is None:
        return {}, Refusal("no_file", {"name": what}), ""
    try:
        with open_regular(path, folders=1) as handle:
            blob = handle.read(MAX_STATE_BYTES + 1)
    except FileNotFoundError:
        return {}, Refusal("file_missing", {"name": what}), ""
    except OSError as error:  # a link, FIFO or device: its own code
        return {}, refusal_of(error, what), ""
    raw = blob[:MAX_STATE_BYTES].decode("utf-8", errors="replace")
    if len(blob) > MAX_STATE_BYTES:
        return {}, Refusal("too_large", {"name": what, "limit": MAX_STATE_BYTES}), raw
    if raw.startswith(_BOM):
        # Node's JSON.parse rejects a BOM, so the plugin resets such a file to defaults.
        return {}, Refusal("json_bom", {"name": what}), raw
    try:
        data = json_text.loads(raw)
    except ValueError as error:
        return {}, Refusal("json_invalid", {"name": what, "error": str(error)}), raw
    except Exception as error:  # noqa: BLE001 - e.g. RecursionError: a problem of this file
        return {}, Refusal("json_unparsable", {"name": what, "error": type(error).__name__}), raw
    if not isinstance(data, dict):
        return {}, Refusal("json_not_object", {"name": what}), raw
    if nesting_exceeds(data):
        return {}, Refusal("json_too_deep", {"name": what, "limit": MAX_NESTING}), raw
    return data, None, raw


def read_state(path: Path | None) -> StateFile:
    """Read an agent's (or a Go session's) `state.json`; keys are kept exactly as written."""
    data, problem, raw = _read_json_object(path, STATE_FILE)
    return StateFile(data=data, problem=problem, raw=raw)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def state_value(state: StateFile, key: str) -> Any:
    """A state key by its camelCase name, falling back to the Go port's snake_case spelling."""
    if key in state.data:
        return state.data[key]
    return state.data.get(_snake(key))


def active_mmd_file(state: StateFile) -> str | None:
    """The active canvas file name exactly as written, or None (null, "", not text); callers must
    still confine it to `mmds/`. The plugin reads the name as it is, without trimming it: a name
    with a space around it names no file, so the agent gets no canvas, and no canvas is active."""
    value = state_value(state, "activeMmdFile")
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class RegistryEntry:
    session_key: str
    session_id: str
    offload_file: str | None
    updated_at: str | None
    exists: bool


def _pick(entry: dict[str, Any], camel: str) -> str | None:
    value = entry.get(camel, entry.get(_snake(camel)))
    return value if isinstance(value, str) and value else None


def read_registry(
    path: Path | None, agent_dir: Path
) -> tuple[list[RegistryEntry], Refusal | None]:
    """Entries of `sessions-registry.json` in file order, plus its problem if any.

    `exists` says whether the entry's offload file is present in `agent_dir`; stale entries
    (deleted files) are normal. A missing registry is not an error: agents may have none.
    """
    if path is None or not (Path(path).exists() or is_link(path)):
        return [], None
    data, problem, _raw = _read_json_object(path, REGISTRY_FILE)
    if problem is not None:
        return [], problem
    entries: list[RegistryEntry] = []
    skipped: list[str] = []
    for session_key, value in data.items():
        if not isinstance(value, dict):
            skipped.append(session_key)
            continue
        session_id = _pick(value, "sessionId") or ""
        offload_file = _pick(value, "offloadFile")
        target = offload_file or (offload_file_name(session_id) if session_id else None)
        exists = False
        if target:
            try:  # a link is no session file: the reader refuses it
                exists = stat.S_ISREG(os.lstat(confine_file(agent_dir, target)).st_mode)
            except (UnsafePath, OSError):
                exists = False
        entries.append(
            RegistryEntry(
                session_key=session_key,
                session_id=session_id,
                offload_file=offload_file,
                updated_at=_pick(value, "updatedAt"),
                exists=exists,
            )
        )
    if skipped:
        return entries, Refusal(
            "registry_skipped", {"keys": ", ".join(skipped)}, where=REGISTRY_FILE
        )
    return entries, None


_UNSAFE_SEGMENT = re.compile(r'[<>:"/\\|?*\x00-\x1f]')
_DOT_RUN = re.compile(r"\.{2,}")


def sanitize_path_segment(value: str) -> str:
    """The plugin's sanitiser for names built from a sessionKey."""
    return _DOT_RUN.sub("_", _UNSAFE_SEGMENT.sub("_", value))


def parse_session_key(session_key: str) -> tuple[str, str] | None:
    """(agent folder, session id) the plugin derives from `agent:<agent>:<rest>`, else None.

    Only for keys of that form; the real session id (a UUID) overrides the session part.
    """
    parts = session_key.split(":", 2)
    if len(parts) < 3 or parts[0] != "agent" or not parts[1] or not parts[2]:
        return None
    agent = sanitize_path_segment(parts[1])
    session = sanitize_path_segment(parts[2])
    worker = re.search(r"swebench-w(\d+)", parts[2])
    if worker:
        agent = f"{agent}-w{worker.group(1)}"
    return agent, session
