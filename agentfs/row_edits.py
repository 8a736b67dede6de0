"""Line-level edits of offload rows: re-point `node_id`, mark `offloaded`, record and restore.

An editor turns a file's bytes into new bytes and a count of changed rows; `remap.py` applies it
safely against a concurrent appender. Candidate lines are found by a byte search for the node
ids concerned, so a 100k-row file costs one scan plus the parse of the few matching lines.

Recording and restoring (the exact undo of a merge or prune) key each changed row by its line
number in the file, and check its `tool_call_id` before restoring: rows are never inserted,
deleted or reordered by memviz, so line numbers hold; if the agent rewrote the file and dropped
corrupt lines, the row is found again by its id. Duplicate `tool_call_id`s (spec §7 hazard 6)
therefore come back to their own nodes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from agentfs import json_text
from agentfs.json_text import NumberOutOfRange
from agentfs.jsonl import sanitize_unsafe_chars

ABSENT = "__absent__"  # recorded `offloaded` of a row that had no such key

# (tool_call_id, original node_id, original offloaded or ABSENT), per 1-based line number
RecordedRows = dict[int, list]


class RowEditor:
    """Re-point rows of `node_map` keys to their values; mark rows of `mark_deleted` deleted."""

    def __init__(self, node_map: dict[str, str], mark_deleted: set[str]) -> None:
        for key, value in node_map.items():
            if not isinstance(key, str) or not isinstance(value, str) or not value:
                raise ValueError(f"node_map must map node ids to non-empty ids, got {key!r}")
        self.node_map = {k: v for k, v in node_map.items() if k != v}
        self.mark_deleted = set(mark_deleted)
        self.needles = _needles(set(self.node_map) | self.mark_deleted)
        self.active = bool(self.node_map or self.mark_deleted)

    def candidate_lines(self, data: bytes) -> Iterable[bytes]:
        for start, end in candidate_spans(data, data.rfind(b"\n") + 1, self.needles):
            yield data[start:end]

    def matches(self, line: bytes) -> bool:
        row = parse_row(line)
        return row is not None and row.get("node_id") in (set(self.node_map) | self.mark_deleted)

    def apply(self, data: bytes, first_line: int = 1) -> tuple[bytes, int]:
        """The new content and the number of rows changed; a partial last line is left as is.

        `first_line` is the line number of `data`'s first line in its file (a spliced tail).
        """
        complete = data.rfind(b"\n") + 1
        parts: list[bytes] = []
        previous = 0
        rows = 0
        line_no, counted = first_line, 0
        for start, end in candidate_spans(data, complete, self.needles):
            line_no += data.count(b"\n", counted, start)
            counted = start
            edited = self.edit_line(data[start:end], line_no)
            if edited is not None:
                parts += (data[previous:start], edited)
                previous = end
                rows += 1
        if not rows:
            return data, 0
        parts.append(data[previous:])
        return b"".join(parts), rows

    def edit_line(self, line: bytes, line_no: int) -> bytes | None:
        row = parse_row(line)
        if row is None:
            return None
        node_id = row.get("node_id")
        if not isinstance(node_id, str):
            return None
        original = (node_id, row.get("offloaded", ABSENT))
        changed = False
        if node_id in self.mark_deleted and row.get("offloaded") != "deleted":
            row["offloaded"] = "deleted"
            changed = True
        if node_id in self.node_map:
            row["node_id"] = self.node_map[node_id]
            changed = True
        if not changed:
            return None
        self.changed(line_no, row["tool_call_id"], *original)
        return reserialise(line, row)

    def changed(self, line_no: int, tool_call_id: str, node_id: str, offloaded: object) -> None:
        """Hook for recording editors."""


class RecordingEditor(RowEditor):
    """A `RowEditor` that notes each changed row's original `node_id` / `offloaded` by line."""

    def __init__(self, node_map: dict[str, str], mark_deleted: set[str]) -> None:
        super().__init__(node_map, mark_deleted)
        self.recorded: RecordedRows = {}

    def changed(self, line_no: int, tool_call_id: str, node_id: str, offloaded: object) -> None:
        # The first sighting wins: a late-append recovery re-reads lines already recorded.
        self.recorded.setdefault(line_no, [tool_call_id, node_id, offloaded])

    def reset(self) -> None:
        self.recorded = {}


class RowRestorer:
    """Puts back what a `RecordingEditor` changed (the undo of a merge or prune).

    A row is restored only while it still shows the forward edit (its `node_id` is what the
    merge made of it, or it is still marked deleted): a later change by the agent wins.
    Also reads the older record format `{tool_call_id: [node_id, offloaded]}`.
    """

    def __init__(
        self, recorded: RecordedRows | dict, node_map: dict[str, str], deleted: set[str]
    ) -> None:
        self.forward = node_map
        self.deleted = deleted
        self.by_line: dict[int, list] = {}
        self.by_id: dict[str, list[list]] = {}
        for key, value in recorded.items():
            if isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
                record = list(value)  # one object in both maps: restored once, whichever way
                self.by_line[int(key)] = record
                self.by_id.setdefault(record[0], []).append(record)
            else:  # legacy: keyed by tool_call_id
                self.by_id.setdefault(key, []).append([key, *value])
        targets = set(node_map.values()) | set(deleted)
        self.needles = _needles(targets | set(self.by_id))
        self.active = bool(self.by_id)
        self.restored: set[int] = set()

    def apply(self, data: bytes, first_line: int = 1) -> tuple[bytes, int]:
        complete = data.rfind(b"\n") + 1
        spans = candidate_spans(data, complete, self.needles)
        lines: list[tuple[int, int, int]] = []
        line_no, counted = first_line, 0
        for start, end in spans:
            line_no += data.count(b"\n", counted, start)
            counted = start
            lines.append((line_no, start, end))
        edits: dict[int, bytes] = {}
        # By line first, then by id for rows whose line moved (the agent dropped lines).
        for line_no, start, end in lines:
            record = self.by_line.get(line_no)
            if record is not None:
                edited = self._restore(data[start:end], record)
                if edited is not None:
                    edits[start] = edited
                    self.restored.add(id(record))
        for _line_no, start, end in lines:
            if start in edits:
                continue
            row = parse_row(data[start:end])
            if row is None:
                continue
            for record in self.by_id.get(row["tool_call_id"], []):
                if id(record) in self.restored:
                    continue
                edited = self._restore(data[start:end], record)
                if edited is not None:
                    edits[start] = edited
                    self.restored.add(id(record))
                    break
        if not edits:
            return data, 0
        parts: list[bytes] = []
        previous = 0
        for start, end in spans:
            if start in edits:
                parts += (data[previous:start], edits[start])
                previous = end
        parts.append(data[previous:])
        return b"".join(parts), len(edits)

    def _restore(self, line: bytes, record: list) -> bytes | None:
        tool_call_id, node_id, offloaded = record
        row = parse_row(line)
        if row is None or row["tool_call_id"] != tool_call_id:
            return None
        changed = False
        if node_id in self.forward and row.get("node_id") == self.forward[node_id]:
            row["node_id"] = node_id
            changed = True
        if node_id in self.deleted and row.get("offloaded") == "deleted" and offloaded != "deleted":
            if offloaded == ABSENT:
                row.pop("offloaded", None)
            else:
                row["offloaded"] = offloaded
            changed = True
        return reserialise(line, row) if changed else None


def _needles(values: set[str]) -> list[bytes]:
    needles: set[bytes] = set()
    for value in values:
        for encoded in (json.dumps(value, ensure_ascii=False), json.dumps(value)):
            needles.add(encoded.encode())  # a writer may escape non-ASCII or not
    return sorted(needles)


def candidate_spans(data: bytes, complete: int, needles: list[bytes]) -> list[tuple[int, int]]:
    """(start, end) of every complete line holding one of `needles`, in file order."""
    starts: set[int] = set()
    for needle in needles:
        position = data.find(needle, 0, complete)
        while position != -1:
            start = data.rfind(b"\n", 0, position) + 1
            end = data.find(b"\n", position)
            starts.add(start)
            position = data.find(needle, end + 1, complete)
    return [(start, data.find(b"\n", start)) for start in sorted(starts)]


def parse_row(line: bytes) -> dict | None:
    """A row the plugin would read, parsed like `parseJsonlSafe` (strict, then unsafe chars out)."""
    try:
        # A number out of a double's range: no edit, since writing the row back would change it.
        row = json_text.loads(line, keep_text=False)
    except NumberOutOfRange:
        return None
    except (ValueError, RecursionError):
        try:
            row = json_text.loads(
                sanitize_unsafe_chars(line.decode("utf-8", errors="replace")), keep_text=False
            )
        except (ValueError, RecursionError):
            return None
    if not isinstance(row, dict):
        return None
    tool_call_id = row.get("tool_call_id")
    return row if isinstance(tool_call_id, str) and tool_call_id else None


def reserialise(line: bytes, row: dict) -> bytes:
    """`row` written compactly as the plugin does, keeping the line's surrounding whitespace."""
    head = line[: len(line) - len(line.lstrip())]
    tail = line[len(line.rstrip()) :]
    try:
        body = json_text.dumps(row, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a \ud800 escape: keep it escaped
        body = json_text.dumps(row, separators=(",", ":")).encode("ascii")
    return head + body + tail
