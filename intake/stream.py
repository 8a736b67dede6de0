"""The pushed memory stream: apply events into an agent folder under memviz's push root, then index.

Events are newline-delimited JSON objects:

- ``{"type": "row", "session": "<sessionId>", "row": {...}}``: one offload row, appended to
  ``offload-<sessionId>.jsonl``. Idempotent on ``tool_call_id``: an identical row is skipped, a row
  whose id is present with other content (the plugin's node_id backfill, offload status) replaces
  every row with that exact id, through an atomic rewrite of the file.
- ``{"type": "ref", "name": "<file>.md", "text": "..."}``: ``refs/<file>.md`` (``refs/`` optional).
- ``{"type": "canvas", "name": "NNN-label.mmd", "text": "..."}``: ``mmds/<name>``.
- ``{"type": "state", "state": {...}}``: ``state.json`` (2-space indent, no trailing newline).
- ``{"type": "registry", "registry": {...}}``: ``sessions-registry.json``.

Files are written with the one atomic writer (rows are appended whole lines in one write); file
names are confined to the agent folder. Unchanged content is never rewritten, so out-of-order and
duplicate events are harmless.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from agentfs import json_text
from agentfs.atomic import lock_folder, write_atomic
from agentfs.jsonl import MAX_NESTING, nesting_exceeds, read_rows, sanitize_unsafe_chars
from agentfs.layout import (
    CANVAS_DIR,
    REFS_DIR,
    REGISTRY_FILE,
    STATE_FILE,
    is_ignored_name,
    is_offload_file_name,
    offload_file_name,
)
from agentfs.paths import (
    UnsafePath,
    check_relative,
    confine,
    is_link,
    open_append,
    read_regular,
)
from intake.page_types import PushAnswer, PushError
from intake.push_tokens import agent_name_check

log = logging.getLogger(__name__)
EVENT_TYPES = ("row", "ref", "canvas", "state", "registry")


class StreamTooLarge(ValueError):
    """The body or one event is over the configured limit (HTTP 413)."""


@dataclass
class StreamResult:
    agent: str
    applied: int = 0
    duplicates: int = 0
    errors: list[PushError] = field(default_factory=list)
    rows_added: int = 0

    def as_dict(self) -> PushAnswer:
        return {
            "agent": self.agent,
            "applied": self.applied,
            "duplicates": self.duplicates,
            "errors": self.errors,
            "rows_added": self.rows_added,
        }


class EventError(ValueError):
    pass


def push_root() -> Path:
    return Path(settings.MEMVIZ_PUSH_ROOT)


def agent_dir(agent_name: str) -> Path:
    problem = agent_name_check(agent_name)
    if problem:
        raise UnsafePath(problem)
    return confine(push_root(), agent_name)


# --- parsing --------------------------------------------------------------------------------


def split_events(body: bytes) -> list[tuple[int, bytes]]:
    """(line number, line) of the non-blank lines; refuses the whole body if one is oversized."""
    max_event = settings.MEMVIZ_STREAM_MAX_EVENT_BYTES
    if len(body) > settings.MEMVIZ_STREAM_MAX_BODY_BYTES:
        raise StreamTooLarge(
            f"body of {len(body)} bytes is over {settings.MEMVIZ_STREAM_MAX_BODY_BYTES}"
        )
    lines = []
    for number, line in enumerate(body.split(b"\n"), start=1):
        if len(line) > max_event:
            raise StreamTooLarge(f"line {number}: event of {len(line)} bytes is over {max_event}")
        if line.strip():
            lines.append((number, line))
    return lines


def _file_name(name: Any, *, folder: str, suffix: str) -> str:
    """A bare file name inside ``folder`` (``folder/`` prefix allowed), confined and checked."""
    if not isinstance(name, str):
        raise EventError("'name' must be a string")
    if name.startswith(folder + "/"):
        name = name[len(folder) + 1 :]
    try:
        pure = check_relative(name)
    except UnsafePath as exc:
        raise EventError(str(exc)) from exc
    if len(pure.parts) != 1:
        raise EventError(f"'name' must be a file directly in {folder}/: {name!r}")
    if is_ignored_name(name) or not name.endswith(suffix) or len(name) > 255:
        raise EventError(f"'name' must be a {suffix} file name, not a dotfile or temp: {name!r}")
    return name


def _text(event: dict[str, Any]) -> bytes:
    text = event.get("text")
    if not isinstance(text, str):
        raise EventError("'text' must be a string")
    return text.encode("utf-8")


def _session_file_name(session: Any) -> str:
    if not isinstance(session, str) or not session:
        raise EventError("'session' must be a non-empty string")
    name = offload_file_name(session)
    if "/" in session or "\\" in session or ".." in session or _has_control(session):
        raise EventError(f"unsafe session id: {session!r}")
    if not is_offload_file_name(name) or len(name) > 255:
        raise EventError(f"unusable session id: {session!r}")
    return name


def _has_control(text: str) -> bool:
    """Control, format (bidi overrides, zero-width) and line/paragraph separator characters."""
    return any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in text)


def row_line(row: dict[str, Any]) -> bytes:
    """A row as the plugin writes it: compact JSON, unsafe characters stripped, one LF line."""
    text = sanitize_unsafe_chars(json_text.dumps(row, ensure_ascii=False, separators=(",", ":")))
    return text.encode("utf-8") + b"\n"


# --- applying -------------------------------------------------------------------------------


@dataclass
class _SessionIndex:
    """tool_call_id -> row of one pushed session file, read incrementally (never twice)."""

    offset: int = 0
    line_no: int = 1
    size: int = 0
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)


_indexes: dict[Path, _SessionIndex] = {}
_indexes_lock = threading.Lock()


def _session_index(path: Path) -> _SessionIndex:
    index = _indexes.get(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        index = _SessionIndex()
        _indexes[path] = index
        return index
    if index is None or size < index.offset:
        index = _SessionIndex()
    if size != index.offset:
        chunk = read_rows(path, start_offset=index.offset, start_line_no=index.line_no)
        for row in chunk.rows:
            index.rows.setdefault(row.tool_call_id, row.data)
        index.offset, index.line_no = chunk.end_offset, chunk.next_line_no
    index.size = size
    _indexes[path] = index
    return index


def _apply_rows(folder: Path, file_name: str, rows: list[dict[str, Any]], result: StreamResult):
    path = folder / file_name
    with lock_folder(folder):
        index = _session_index(path)
        appends: list[bytes] = []
        replaced: dict[str, dict[str, Any]] = {}
        for row in rows:
            tcid = row["tool_call_id"]
            known = index.rows.get(tcid)
            if known == row:
                result.duplicates += 1
                continue
            if known is None:
                appends.append(row_line(row))
                index.rows[tcid] = row
                result.rows_added += 1
            else:
                replaced[tcid] = row
                index.rows[tcid] = row
            result.applied += 1
        if appends:
            data = b"".join(appends)
            fd = open_append(path)
            try:
                # A file whose last line has no newline yet would glue our row onto it.
                if index.offset < os.fstat(fd).st_size:
                    data = b"\n" + data
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
    # Outside the folder lock: the atomic writer takes it itself (flock does not nest).
    if replaced:
        _rewrite_rows(path, replaced)
        _indexes.pop(path, None)


def _rewrite_rows(path: Path, replaced: dict[str, dict[str, Any]]) -> None:
    out: list[bytes] = []
    chunk = read_rows(path, final=True)
    for row in chunk.rows:
        new = replaced.get(row.tool_call_id)
        out.append(row_line(new) if new is not None else row_line(row.data))
    write_atomic(path, b"".join(out), must_exist=True)


def _write_if_changed(folder: Path, relative: str, data: bytes, result: StreamResult) -> None:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if is_link(path):
        raise ValueError(f"{path.name} is a symbolic link; memviz does not write through links")
    try:
        if read_regular(path, folders=len(Path(relative).parts)) == data:
            result.duplicates += 1
            return
    except FileNotFoundError:
        pass
    write_atomic(path, data, must_exist=False)
    result.applied += 1


def _pretty_json(value: Any, key: str) -> bytes:
    if not isinstance(value, dict):
        raise EventError(f"'{key}' must be an object")
    return json_text.dumps(value, ensure_ascii=False, indent=2).encode("utf-8")


@dataclass
class ParsedEvents:
    """The events of one body that passed validation, and the errors of the others."""

    # offload file name -> (line number, row) in body order
    rows: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    # (line number, path relative to the agent folder, bytes)
    files: list[tuple[int, str, bytes]] = field(default_factory=list)
    errors: list[PushError] = field(default_factory=list)


def _event_target(event: Any) -> tuple[str, Any]:
    """("row", (file name, row)) or ("file", (relative path, bytes)); EventError otherwise."""
    if not isinstance(event, dict):
        raise EventError("an event must be a JSON object")
    if nesting_exceeds(event, MAX_NESTING + 2):  # the row or state sits 2 levels down
        raise EventError(f"event nested more than {MAX_NESTING} levels deep")
    kind = event.get("type")
    if kind == "row":
        row = event.get("row")
        if not isinstance(row, dict):
            raise EventError("'row' must be an object")
        tcid = row.get("tool_call_id")
        if not isinstance(tcid, str) or not tcid:
            raise EventError("row needs a non-empty string tool_call_id")
        return "row", (_session_file_name(event.get("session")), row)
    if kind == "ref":
        name = _file_name(event.get("name"), folder=REFS_DIR, suffix=".md")
        return "file", (f"{REFS_DIR}/{name}", _text(event))
    if kind == "canvas":
        name = _file_name(event.get("name"), folder=CANVAS_DIR, suffix=".mmd")
        return "file", (f"{CANVAS_DIR}/{name}", _text(event))
    if kind == "state":
        return "file", (STATE_FILE, _pretty_json(event.get("state"), "state"))
    if kind == "registry":
        return "file", (REGISTRY_FILE, _pretty_json(event.get("registry"), "registry"))
    raise EventError(f"unknown event type {kind!r} (expected one of {EVENT_TYPES})")


def events_parse(lines: list[tuple[int, bytes]]) -> ParsedEvents:
    """Validate every event; one that fails in any way is an error of its line, never a crash."""
    parsed = ParsedEvents()
    for number, line in lines:
        try:
            # A number no double holds is refused, not rewritten: the agent's file keeps its type.
            event = json_text.loads(line, keep_text=False)
        except ValueError as exc:
            parsed.errors.append({"line": number, "reason": f"not JSON: {exc}"})
            continue
        except Exception as exc:  # noqa: BLE001 - e.g. RecursionError on hostile nesting
            parsed.errors.append({"line": number, "reason": f"unreadable ({type(exc).__name__})"})
            continue
        try:
            what, (target, payload) = _event_target(event)
        except EventError as exc:
            parsed.errors.append({"line": number, "reason": str(exc)})
            continue
        except Exception as exc:  # noqa: BLE001 - one bad event never fails the batch
            parsed.errors.append({"line": number, "reason": f"refused ({type(exc).__name__})"})
            continue
        if what == "row":
            parsed.rows.setdefault(target, []).append((number, payload))
        else:
            parsed.files.append((number, target, payload))
    return parsed


def _failure(exc: BaseException) -> str:
    # OSError texts carry absolute paths; the client learns what failed, not where.
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return f"{type(exc).__name__}: {exc}" if isinstance(exc, ValueError) else type(exc).__name__


def stream_apply(*, agent_name: str, body: bytes, index: bool = True) -> StreamResult:
    """Apply every valid event of ``body``; errors are reported per line and skip that event."""
    lines = split_events(body)
    folder = agent_dir(agent_name)
    result = StreamResult(agent=agent_name)
    parsed = events_parse(lines)
    result.errors.extend(parsed.errors)
    if not parsed.rows and not parsed.files:
        return result
    for sub in (REFS_DIR, CANVAS_DIR):
        # The spec's layout; a write that then cannot happen is reported with its own event.
        with contextlib.suppress(OSError):
            (folder / sub).mkdir(parents=True, exist_ok=True)
    # Like every write to an agent, a push runs under the agent's write lock (sessions.locks):
    # memviz's own edits of this agent and other processes' pushes wait for it.
    with _agent_write_lock(folder):
        _apply(folder, agent_name, parsed, result, index=index)
    return result


@contextlib.contextmanager
def _agent_write_lock(folder: Path) -> Iterator[None]:
    from agentfs.layout import discover_agents
    from intake.ingest import agent_for_folder
    from sessions.locks import agent_locked

    found = [f for f in discover_agents(folder) if f.path.resolve() == folder.resolve()]
    if not found:  # nothing memviz could index yet: no agent row to lock
        yield
        return
    agent = agent_for_folder(found[0], push_root())
    with agent_locked(agent.pk):
        yield


def _apply(
    folder: Path, agent_name: str, parsed: ParsedEvents, result: StreamResult, *, index: bool
) -> None:
    from intake.ingest import ingest_agent_dir

    with _indexes_lock:
        for file_name, numbered in parsed.rows.items():
            try:
                _apply_rows(folder, file_name, [row for _, row in numbered], result)
            except Exception as exc:  # noqa: BLE001 - reported on every line of that file
                _indexes.pop(folder / file_name, None)
                reason = f"could not write {file_name}: {_failure(exc)}"
                result.errors.extend({"line": n, "reason": reason} for n, _ in numbered)
    for number, relative, data in parsed.files:
        try:
            _write_if_changed(folder, relative, data, result)
        except Exception as exc:  # noqa: BLE001
            result.errors.append({"line": number, "reason": f"could not write: {_failure(exc)}"})
    if index and result.applied:
        # Name what was written, so the ingest checks only that (not the whole refs folder).
        written = [folder / name for name in parsed.rows]
        written += [folder / relative for _n, relative, _d in parsed.files]
        try:
            ingest_agent_dir(folder, root=push_root(), changed=written)
        except Exception:  # noqa: BLE001 - the events are on disk; a later ingest indexes them
            log.exception("push to %s: written, but indexing failed", agent_name)
            reason = "events were written but indexing them failed; the next ingest retries"
            result.errors.append({"line": 0, "reason": reason})
