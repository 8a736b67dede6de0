"""Which rows were mapped to a canvas's nodes at an earlier moment (plain Python, no Django).

The index holds each row's node id now. Every change memviz made since that moment recorded
the rows it re-pointed, line by line, with their node id before (a revision's
`remaps["rows"]`: `{file: {line: [tool_call_id, node id before, offloaded before]}}`). Undoing
those changes newest first gives the node id each row had then: a forward change (merge, adopt,
redo) is undone by its recorded "before"; an undo is undone by applying its target's node map
to the rows that target recorded. Rows whose time is after the moment did not exist yet.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class RowNow:
    file: str  # the session's offload file, as the revisions' records name it
    line: int
    tool_call_id: str
    node_id: str | None
    time: datetime | None

    def key(self) -> list[Any]:
        return [self.file, self.line, self.tool_call_id]


@dataclass
class Step:
    """One later change, inverted: row → the node id it had before that change."""

    by_line: dict[tuple[str, int], str | None] = field(default_factory=dict)
    by_call: dict[tuple[str, str], str | None] = field(default_factory=dict)  # old records
    node_ids: set[str] = field(default_factory=set)  # every id it moved rows from or to

    def before(self, row: RowNow, node_id: str | None) -> str | None:
        if (row.file, row.line) in self.by_line:
            return self.by_line[(row.file, row.line)]
        return self.by_call.get((row.file, row.tool_call_id), node_id)


def step_from_remaps(remaps: dict[str, Any], *, undo: bool) -> Step:
    """The inverse of a forward change (`undo` False) or of an undo of it (`undo` True)."""
    node_map: dict[str, str] = remaps.get("node_map") or {}
    step = Step(node_ids=set(node_map) | set(node_map.values()))
    for file, recorded in (remaps.get("rows") or {}).items():
        for key, values in recorded.items():
            tool_call_id, before = values[0], values[1]
            then = node_map.get(before, before) if undo else before
            if str(key).isdigit():
                step.by_line[(file, int(key))] = then
            else:
                step.by_call[(file, str(tool_call_id))] = then
    return step


def rows_then(
    rows: Iterable[RowNow],
    steps: list[Step],
    alias_to_node: dict[str, str],
    *,
    until: datetime | None,
    inclusive: bool = False,
) -> dict[str, list[RowNow]]:
    """Node id (of the text of that moment) → its rows then, in the order given.

    `steps` are the changes after the moment, newest first; `until` excludes rows whose time is
    after it (`inclusive`) or at or after it (rows without a readable time are kept: nothing
    says they came later).
    """
    out: dict[str, list[RowNow]] = {}
    for row in rows:
        if came_later(row, until, inclusive=inclusive):
            continue
        node_id = row.node_id
        for step in steps:
            node_id = step.before(row, node_id)
        node = alias_to_node.get(node_id or "")
        if node is not None:
            out.setdefault(node, []).append(row)
    return out


def came_later(row: RowNow, until: datetime | None, *, inclusive: bool) -> bool:
    """The row's time is after the moment (at it too, unless `inclusive`); unknown: kept."""
    if until is None or row.time is None:
        return False
    return row.time > until or (row.time == until and not inclusive)
