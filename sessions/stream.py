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

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from sessions.memory.atomic import lock_folder, write_atomic
from sessions.memory.jsonl import read_rows, sanitize_unsafe_chars
from sessions.memory.layout import is_ignored_name, is_offload_file_name
from sessions.memory.paths import UnsafePath, check_relative, confine
from sessions.models import StreamToken

AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}$")
EVENT_TYPES = ("row", "ref", "canvas", "state", "registry")


class StreamTooLarge(ValueError):
    """The body or one event is over the configured limit (HTTP 413)."""


@dataclass
class StreamResult:
    agent: str
    applied: int = 0
    duplicates: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    rows_added: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "applied": self.applied,
            "duplicates": self.duplicates,
            "errors": self.errors,
            "rows_added": self.rows_added,
        }


class EventError(ValueError):
    pass


# --- tokens ---------------------------------------------------------------------------------


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_create(agent_name: str) -> str:
    """Create (or replace) the agent's token and return it; only its hash is stored."""
    problem = agent_name_check(agent_name)
    if problem:
        raise ValueError(problem)
    token = secrets.token_urlsafe(32)
    StreamToken.objects.update_or_create(
        agent_name=agent_name, defaults={"token_hash": token_hash(token), "last_used_at": None}
    )
    return token


def token_check(agent_name: str, token: str) -> bool:
    stored = StreamToken.objects.filter(agent_name=agent_name).first()
    if stored is None or not token:
        return False
    if not hmac.compare_digest(stored.token_hash, token_hash(token)):
        return False
    StreamToken.objects.filter(pk=stored.pk).update(last_used_at=timezone.now())
    return True


def agent_name_check(agent_name: str) -> str | None:
    """None when ``agent_name`` can be a folder name under the push root, else the reason."""
    if not AGENT_NAME.match(agent_name or "") or ".." in agent_name:
        return "agent name must be letters, digits, '.', '_', '-', '@', '+' (no '..', ≤200)"
    return None


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
    name = f"offload-{session}.jsonl"
    if "/" in session or "\\" in session or "\x00" in session or ".." in session:
        raise EventError(f"unsafe session id: {session!r}")
    if not is_offload_file_name(name) or len(name) > 255:
        raise EventError(f"unusable session id: {session!r}")
    return name


def row_line(row: dict[str, Any]) -> bytes:
    """A row as the plugin writes it: compact JSON, unsafe characters stripped, one LF line."""
    text = sanitize_unsafe_chars(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
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
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
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


def _write_if_changed(path: Path, data: bytes, result: StreamResult) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if path.read_bytes() == data:
            result.duplicates += 1
            return
    except FileNotFoundError:
        pass
    write_atomic(path, data, must_exist=False)
    result.applied += 1


def _pretty_json(value: Any, key: str) -> bytes:
    if not isinstance(value, dict):
        raise EventError(f"'{key}' must be an object")
    return json.dumps(value, ensure_ascii=False, indent=2).encode("utf-8")


def stream_apply(*, agent_name: str, body: bytes, index: bool = True) -> StreamResult:
    """Apply every valid event of ``body``; errors are reported per line and skip that event."""
    from sessions.ingest import ingest_agent_dir

    lines = split_events(body)
    folder = agent_dir(agent_name)
    result = StreamResult(agent=agent_name)
    rows_by_file: dict[str, list[dict[str, Any]]] = {}
    files: list[tuple[int, Path, bytes]] = []
    for number, line in lines:
        try:
            event = json.loads(line)
        except ValueError as exc:
            result.errors.append({"line": number, "reason": f"not JSON: {exc}"})
            continue
        try:
            if not isinstance(event, dict):
                raise EventError("an event must be a JSON object")
            kind = event.get("type")
            if kind == "row":
                row = event.get("row")
                if not isinstance(row, dict):
                    raise EventError("'row' must be an object")
                tcid = row.get("tool_call_id")
                if not isinstance(tcid, str) or not tcid:
                    raise EventError("row needs a non-empty string tool_call_id")
                rows_by_file.setdefault(_session_file_name(event.get("session")), []).append(row)
            elif kind == "ref":
                name = _file_name(event.get("name"), folder="refs", suffix=".md")
                files.append((number, folder / "refs" / name, _text(event)))
            elif kind == "canvas":
                name = _file_name(event.get("name"), folder="mmds", suffix=".mmd")
                files.append((number, folder / "mmds" / name, _text(event)))
            elif kind == "state":
                files.append(
                    (number, folder / "state.json", _pretty_json(event.get("state"), "state"))
                )
            elif kind == "registry":
                data = _pretty_json(event.get("registry"), "registry")
                files.append((number, folder / "sessions-registry.json", data))
            else:
                raise EventError(f"unknown event type {kind!r} (expected one of {EVENT_TYPES})")
        except EventError as exc:
            result.errors.append({"line": number, "reason": str(exc)})
    if not rows_by_file and not files:
        return result
    for sub in ("refs", "mmds"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    with _indexes_lock:
        for file_name, rows in rows_by_file.items():
            _apply_rows(folder, file_name, rows, result)
    for number, path, data in files:
        try:
            _write_if_changed(path, data, result)
        except (OSError, ValueError) as exc:
            result.errors.append({"line": number, "reason": f"could not write: {exc}"})
    if index and result.applied:
        # Name what was written, so the ingest checks only that (not the whole refs folder).
        written = [folder / name for name in rows_by_file] + [path for _n, path, _d in files]
        ingest_agent_dir(folder, root=push_root(), changed=written)
    return result
