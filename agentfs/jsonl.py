"""Tolerant offload-JSONL reader: rows from a byte offset, partial last line held, rewrites seen."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentfs import json_text
from agentfs.paths import LinkRefused, open_regular
from agentfs.wording import words

__all__ = [
    "HEAD_BYTES",
    "MAX_NESTING",
    "ROW_FIELDS",
    "JsonlChunk",
    "LineProblem",
    "Row",
    "RowStream",
    "TailState",
    "file_head_hash",
    "nesting_exceeds",
    "normalize_id",
    "parse_line",
    "read_rows",
    "sanitize_unsafe_chars",
    "tail_rows",
]

HEAD_BYTES = 4096
EXCERPT_CHARS = 200
_BLOCK = 1 << 20
# Rows and state nested deeper than this are reported, not indexed: the plugin writes flat
# objects, and every later json.dumps / jsonb / template of a deeper value recurses that deep.
MAX_NESTING = 64

# The plugin's "unsafe" set (parseJsonlSafe retry and every write): U+FFFD, C0 controls but
# TAB/LF/CR, C1 controls, lone surrogates, zero-width U+200B-U+200F, LS/PS and the BOM.
_UNSAFE = re.compile(
    "[\ufffd\x00-\x08\x0b\x0c\x0e-\x1f\x80-\x9f\ud800-\udfff\u200b-\u200f\u2028\u2029\ufeff]"
)


def sanitize_unsafe_chars(text: str) -> str:
    """Remove the characters the plugin strips before retrying a parse and on every write."""
    return _UNSAFE.sub("", text)


def normalize_id(tool_call_id: str) -> str:
    """The plugin's dedup alias: the id with every underscore removed."""
    return tool_call_id.replace("_", "")


@dataclass(frozen=True, slots=True)
class Row:
    line_no: int
    offset: int
    data: dict[str, Any]
    tool_call_id: str
    tool_call: str
    summary: str
    score: float | None
    node_id: str | None
    result_ref: str | None
    offloaded: bool | str | None
    timestamp: str
    normalized_id: str


# The fields of an offload row that the index keeps as columns of their own (the same names as
# Row's); any other key of a row is kept as it is, in its extra.
ROW_FIELDS = (
    "tool_call_id",
    "tool_call",
    "summary",
    "score",
    "node_id",
    "result_ref",
    "offloaded",
    "timestamp",
)


@dataclass(frozen=True, slots=True)
class LineProblem:
    """Why a line is not a row: a code of `wording.TEXTS` and its values (`reason` is the
    English sentence; the pages translate the code)."""

    line_no: int
    offset: int
    kind: Literal["corrupt", "invalid"]
    code: str
    values: Mapping[str, object] = field(hash=False)
    excerpt: str = ""

    @property
    def reason(self) -> str:
        return words(self.code, self.values)


@dataclass(frozen=True, slots=True)
class JsonlChunk:
    rows: list[Row]
    problems: list[LineProblem]
    start_offset: int
    end_offset: int
    next_line_no: int
    head_hash: str
    # Size and mtime of the file when the read started; later appends are left for the next read.
    file_size: int = 0
    file_mtime_ns: int = 0


@dataclass(frozen=True, slots=True)
class TailState:
    offset: int
    line_no: int
    size: int
    mtime_ns: int
    head_hash: str
    # Hash of the bytes just before `offset`: L2 rewrites rows near the end (null -> "wait"),
    # which a head hash alone misses once the file is longer than HEAD_BYTES.
    anchor_hash: str = ""


def _text_field(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _score(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _node_id(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    # The plugin stringifies non-string node ids.
    return json.dumps(value, ensure_ascii=False)


def _offloaded(value: Any) -> bool | str | None:
    if value is None or isinstance(value, bool | str):
        return value
    return bool(value)


def _loads(text: str) -> Any:
    # JSON.parse has no NaN/Infinity; a number out of a double's range is kept as its text.
    return json_text.loads(text)


def _excerpt(text: str) -> str:
    return text[:EXCERPT_CHARS]


def _trim(text: str) -> str:
    # JS String.prototype.trim also removes U+FEFF, Python's str.strip does not.
    return text.strip().strip("\ufeff").strip()


def parse_line(raw: bytes, line_no: int, offset: int) -> Row | LineProblem | None:
    """Apply parseJsonlSafe to one line (without its newline); None for a blank line."""
    text = _trim(raw.decode("utf-8", errors="replace"))
    if not text:
        return None
    try:
        return _parse_text(text, line_no, offset)
    except Exception as error:  # noqa: BLE001 - one hostile line is that line's problem
        # RecursionError from a line nested thousands deep, MemoryError, anything else.
        said = {"error": type(error).__name__}
        return LineProblem(line_no, offset, "corrupt", "unreadable_line", said, _excerpt(text))


def nesting_exceeds(value: Any, limit: int = MAX_NESTING) -> bool:
    """True when ``value`` holds containers nested more than ``limit`` deep (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, dict | list))
    return False


def _maybe_deep(text: str) -> bool:
    # A cheap pre-filter: brackets inside strings count too, so it only rules depth out.
    return text.count("{") + text.count("[") > MAX_NESTING


def _parse_text(text: str, line_no: int, offset: int) -> Row | LineProblem:
    try:
        data = _loads(text)
    except ValueError as first_error:
        try:
            data = _loads(sanitize_unsafe_chars(text))
        except ValueError:
            said = {"error": str(first_error)}
            return LineProblem(line_no, offset, "corrupt", "invalid_json", said, _excerpt(text))
    if _maybe_deep(text) and nesting_exceeds(data):
        deep: dict[str, object] = {"limit": MAX_NESTING}
        return LineProblem(line_no, offset, "invalid", "too_deep", deep, _excerpt(text))
    if not isinstance(data, dict):
        said = {"type": type(data).__name__}
        return LineProblem(line_no, offset, "invalid", "not_object", said, _excerpt(text))
    tool_call_id = data.get("tool_call_id")
    if not isinstance(tool_call_id, str) or not tool_call_id:
        if "tool_call_id" not in data:
            code = "no_tool_call_id"
        elif isinstance(tool_call_id, str):
            code = "empty_tool_call_id"
        else:
            code = "tool_call_id_type"
        return LineProblem(line_no, offset, "invalid", code, {}, _excerpt(text))
    result_ref = data.get("result_ref")
    return Row(
        line_no=line_no,
        offset=offset,
        data=data,
        tool_call_id=tool_call_id,
        tool_call=_text_field(data.get("tool_call")),
        summary=_text_field(data.get("summary")),
        score=_score(data.get("score")),
        node_id=_node_id(data.get("node_id")),
        result_ref=result_ref if isinstance(result_ref, str) else None,
        offloaded=_offloaded(data.get("offloaded")),
        timestamp=_text_field(data.get("timestamp")),
        normalized_id=normalize_id(tool_call_id),
    )


def _hash_prefix(handle: Any, length: int) -> str:
    """SHA-256 of the first `length` bytes, read in 1 MB blocks (prefixes can be tens of MB)."""
    handle.seek(0)
    digest = hashlib.sha256()
    while length > 0:
        block = handle.read(min(length, 1 << 20))
        if not block:
            break
        digest.update(block)
        length -= len(block)
    return digest.hexdigest()


def file_head_hash(path: Path, length: int | None = None) -> str:
    """SHA-256 of the first `length` bytes (default min(size, 4096)).

    A file memviz refuses to open (a link) gets a fresh value that matches no stored hash, so
    whoever compares prefixes re-reads it whole and meets the refusal there.
    """
    try:
        handle = open_regular(path, folders=1)
    except LinkRefused:
        return "refused-" + os.urandom(28).hex()
    with handle:
        if length is None:
            length = min(os.fstat(handle.fileno()).st_size, HEAD_BYTES)
        return _hash_prefix(handle, length)


def _anchor_hash(handle: Any, offset: int) -> str:
    start = max(0, offset - HEAD_BYTES)
    handle.seek(start)
    return hashlib.sha256(handle.read(offset - start)).hexdigest()


@dataclass(slots=True)
class _Reader:
    """Splits a byte stream into lines without ever holding more than one capped line."""

    max_line_bytes: int
    line_no: int
    rows: list[Row] = field(default_factory=list)
    problems: list[LineProblem] = field(default_factory=list)

    def emit(self, raw: bytes, offset: int) -> None:
        parsed = parse_line(raw, self.line_no, offset)
        if isinstance(parsed, Row):
            self.rows.append(parsed)
        elif parsed is not None:
            self.problems.append(parsed)
        self.line_no += 1

    def emit_huge(self, head: bytes, length: int, offset: int) -> None:
        text = head.decode("utf-8", errors="replace")
        said = {"length": length, "limit": self.max_line_bytes}
        problem = LineProblem(self.line_no, offset, "corrupt", "line_too_long", said, _excerpt(text))
        self.problems.append(problem)
        self.line_no += 1


class RowStream:
    """The rows of an offload JSONL from ``start_offset``, in batches of ``batch_rows``.

    Reads like ``read_rows`` (same lines, problems and offsets) but never holds more than one
    batch of rows, so a 1 GB session file costs the memory of 5,000 rows. ``end_offset``,
    ``next_line_no``, ``problems`` and the file's size and mtime are set once iterated.
    """

    def __init__(
        self,
        path: Path,
        *,
        start_offset: int = 0,
        start_line_no: int = 1,
        final: bool = False,
        max_line_bytes: int = 16 * 1024 * 1024,
        batch_rows: int = 5000,
    ) -> None:
        self.path = path
        self.start_offset = start_offset
        self.final = final
        self.batch_rows = batch_rows
        self.end_offset = start_offset
        self.next_line_no = start_line_no
        self.head_hash = ""
        self.file_size = 0
        self.file_mtime_ns = 0
        self._reader = _Reader(max_line_bytes=max_line_bytes, line_no=start_line_no)

    @property
    def problems(self) -> list[LineProblem]:
        return self._reader.problems

    def _take(self) -> list[Row]:
        rows, self._reader.rows = self._reader.rows, []
        return rows

    def __iter__(self) -> Iterator[list[Row]]:
        reader = self._reader
        start_offset, final = self.start_offset, self.final
        try:
            handle = open_regular(self.path, folders=1)
        except LinkRefused as refused:  # a link or a FIFO: no rows, one problem
            at = self.next_line_no, self.start_offset
            problem = LineProblem(*at, "corrupt", refused.code, refused.values, "")
            self._reader.problems.append(problem)
            return
        with handle:
            stat = os.fstat(handle.fileno())
            size = stat.st_size
            self.file_size, self.file_mtime_ns = size, stat.st_mtime_ns
            self.head_hash = _hash_prefix(handle, min(size, HEAD_BYTES))
            handle.seek(start_offset)
            position = start_offset  # absolute offset of the first byte of `pending`
            pending = bytearray()
            skipping = 0  # >0: inside an over-long line, counts its bytes; `pending` keeps its head
            remaining = max(0, size - start_offset)
            while remaining > 0:
                block = handle.read(min(_BLOCK, remaining))
                if not block:
                    break  # truncated while reading
                remaining -= len(block)
                start = 0
                while True:
                    newline = block.find(b"\n", start)
                    piece = block[start:] if newline < 0 else block[start:newline]
                    if skipping:
                        skipping += len(piece)
                    else:
                        pending += piece
                        if len(pending) > reader.max_line_bytes:
                            skipping = len(pending)
                            del pending[HEAD_BYTES:]
                    if newline < 0:
                        break
                    if skipping:
                        reader.emit_huge(bytes(pending), skipping, position)
                        position += skipping + 1
                        skipping = 0
                    else:
                        reader.emit(bytes(pending), position)
                        position += len(pending) + 1
                    pending.clear()
                    start = newline + 1
                    if len(reader.rows) >= self.batch_rows:
                        self.end_offset, self.next_line_no = position, reader.line_no
                        yield self._take()
            end_offset = position
            if final and (pending or skipping):
                if skipping:
                    reader.emit_huge(bytes(pending), skipping, position)
                    end_offset = position + skipping
                else:
                    reader.emit(bytes(pending), position)
                    end_offset = position + len(pending)
        self.end_offset, self.next_line_no = end_offset, reader.line_no
        if reader.rows:
            yield self._take()


def read_rows(
    path: Path,
    *,
    start_offset: int = 0,
    start_line_no: int = 1,
    final: bool = False,
    max_line_bytes: int = 16 * 1024 * 1024,
) -> JsonlChunk:
    """Read complete lines from `start_offset` up to the size the file had when the read began.

    A trailing line without '\\n' is left unconsumed (end_offset stops before it) unless `final`,
    so a tailer picks it up once the writer finishes it. Nothing here raises on bad content.
    Holds every row: use ``RowStream`` where a file can be large.
    """
    stream = RowStream(
        path,
        start_offset=start_offset,
        start_line_no=start_line_no,
        final=final,
        max_line_bytes=max_line_bytes,
    )
    rows = [row for batch in stream for row in batch]
    return JsonlChunk(
        rows=rows,
        problems=stream.problems,
        start_offset=start_offset,
        end_offset=stream.end_offset,
        next_line_no=stream.next_line_no,
        head_hash=stream.head_hash,
        file_size=stream.file_size,
        file_mtime_ns=stream.file_mtime_ns,
    )


def _was_rewritten(path: Path, state: TailState, size: int, mtime_ns: int) -> bool:
    if size < state.size or size < state.offset:
        return True
    if size == state.size and mtime_ns != state.mtime_ns:
        # Appends always grow a file; same size with a new mtime is an in-place rewrite.
        return True
    with open_regular(path, folders=1) as handle:
        if _hash_prefix(handle, min(state.size, HEAD_BYTES)) != state.head_hash:
            return True
        return bool(state.anchor_hash) and _anchor_hash(handle, state.offset) != state.anchor_hash


def tail_rows(path: Path, state: TailState | None) -> tuple[JsonlChunk, TailState, bool]:
    """Read what was appended since `state`; re-read from 0 if the file was rewritten.

    Returns (chunk, new state, rewritten). When rewritten is True the caller must drop the rows
    it holds for this file: the chunk is a complete re-read. Raises FileNotFoundError if the
    file is gone and LinkRefused if it became a link.
    """
    stat = os.stat(path)
    rewritten = state is not None and _was_rewritten(path, state, stat.st_size, stat.st_mtime_ns)
    if state is None or rewritten:
        chunk = read_rows(path)
    else:
        chunk = read_rows(path, start_offset=state.offset, start_line_no=state.line_no)
    with open_regular(path, folders=1) as handle:
        anchor = _anchor_hash(handle, chunk.end_offset)
    new_state = TailState(
        offset=chunk.end_offset,
        line_no=chunk.next_line_no,
        size=chunk.file_size,
        mtime_ns=chunk.file_mtime_ns,
        head_hash=chunk.head_hash,
        anchor_hash=anchor,
    )
    return chunk, new_state, rewritten
