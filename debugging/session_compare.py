"""Two sessions side by side: rows aligned by tool call, their canvas nodes matched.

Django-free. A row's key is its tool name plus its arguments normalised (whitespace collapsed,
JSON arguments with sorted keys); the two key sequences are aligned by ``call_align.align``.
Equal calls are then checked for another result, a replaced stretch is paired by tool name,
and one-sided calls the other run made elsewhere are marked as moved.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from agentfs.row_fields import WAIT
from debugging.call_align import align
from debugging.page_types import CompareSummary

SAME = "same"  # same call, same result
RESULT = "result"  # same call, different summary, score or result size
CHANGED = "changed"  # same tool, different arguments, at the same place
ONLY_A = "only_a"
ONLY_B = "only_b"
MOVED = "moved"  # a call both runs made, at places the alignment could not pair
PAIRED = (SAME, RESULT, CHANGED)
STATUSES = (SAME, RESULT, CHANGED, ONLY_A, ONLY_B, MOVED)
# A replaced stretch longer than this (rows per side) is left one-sided rather than paired by
# tool name: a few tool names over thousands of rows is a long edit script to search.
TOOL_WINDOW = 400
UNMAPPED = frozenset({WAIT})  # row node ids that are no canvas node (null is None)

_CALL = re.compile(r"^([A-Za-z_][\w.\-]{0,80})(?:\s*\((.*)\)|\s*:\s*(.*))$", re.S)


@dataclass(frozen=True, slots=True)
class Call:
    """One row of a session, as the comparison reads it."""

    id: int
    line_no: int
    tool_call: str
    summary: str
    score: float | None
    node_id: str | None
    result_ref: str | None
    result_size: int | None  # bytes of the ref file, None when there is none


@dataclass(frozen=True, slots=True)
class NodeMatch:
    a: str | None
    b: str | None
    a_rows: int
    b_rows: int
    shared: int  # aligned pairs between the two nodes
    how: str  # "calls", "id", "title" or "" (visited by one run only)


@dataclass
class Comparison:
    a: list[Call]
    b: list[Call]
    # (index in a or None, index in b or None, status), in display order
    pairs: list[tuple[int | None, int | None, str]]
    nodes: list[NodeMatch]
    # positions in ``pairs`` of every row that is not SAME (the "differences only" view)
    differing: list[int] = field(default_factory=list)
    # node group (index in ``nodes``) of each pair
    groups: list[int | None] = field(default_factory=list)
    # a MOVED pair → the pair holding the same call in the other run
    partner: dict[int, int] = field(default_factory=dict)

    @cached_property
    def summary(self) -> CompareSummary:
        """Pairs per status and the sides' totals (counted once, on the first page asked)."""
        return _summary(self)

    def differences(self, k: int) -> list[str]:
        """Which fields of pair ``k`` differ: summary, score, result size (paired rows only)."""
        i, j, status = self.pairs[k]
        if i is None or j is None or status == SAME:
            return []
        found = _result_differences(self.a[i], self.b[j])
        return ["call", *found] if status == CHANGED else found


def tool_and_args(text: str) -> tuple[str, str]:
    """``read: src/x.py`` / ``exec({"cmd": "ls"})`` → (tool, normalised arguments).

    A free-text description (the LLM's own words) is all tool, no arguments.
    """
    flat = " ".join(text.split())
    found = _CALL.match(flat)
    if not found:
        return flat, ""
    tool, paren, colon = found.groups()
    args = (paren if paren is not None else colon or "").strip()
    if args[:1] in "{[":
        with contextlib.suppress(ValueError, RecursionError):
            args = json.dumps(json.loads(args), sort_keys=True, ensure_ascii=False)
    return tool, args


def call_key(text: str) -> str:
    tool, args = tool_and_args(text)
    return f"{tool}\x00{args}"


def _result_differences(x: Call, y: Call) -> list[str]:
    found = []
    if " ".join(x.summary.split()) != " ".join(y.summary.split()):
        found.append("summary")
    if x.score != y.score:
        found.append("score")
    if x.result_size is not None and y.result_size is not None and x.result_size != y.result_size:
        found.append("size")
    return found


def _pair_by_tool(
    a: list[Call], b: list[Call], i1: int, i2: int, j1: int, j2: int
) -> list[tuple[int | None, int | None, str]]:
    """A stretch of different calls: same tool at the same place → CHANGED, the rest one-sided."""
    names_a = [tool_and_args(c.tool_call)[0] for c in a[i1:i2]]
    names_b = [tool_and_args(c.tool_call)[0] for c in b[j1:j2]]
    out: list[tuple[int | None, int | None, str]] = []
    ops: Sequence[tuple[str, int, int, int, int]]
    if len(names_a) > TOOL_WINDOW or len(names_b) > TOOL_WINDOW:
        ops = [("delete", 0, len(names_a), 0, 0), ("insert", 0, 0, 0, len(names_b))]
    else:
        ids: dict[str, int] = {}
        ops = align(
            [ids.setdefault(x, len(ids)) for x in names_a],
            [ids.setdefault(x, len(ids)) for x in names_b],
        )
    for tag, x1, x2, y1, y2 in ops:
        if tag == "equal":
            out += [(i1 + x1 + k, j1 + y1 + k, CHANGED) for k in range(x2 - x1)]
            continue
        out += [(i1 + k, None, ONLY_A) for k in range(x1, x2)]
        out += [(None, j1 + k, ONLY_B) for k in range(y1, y2)]
    return out


def compare(a: list[Call], b: list[Call], titles: dict[str, str] | None = None) -> Comparison:
    """Align two sessions' rows and match their nodes; ``titles``: node id → canvas title."""
    keys: dict[str, int] = {}
    seen: dict[str, int] = {}  # raw text → key number: runs repeat their calls verbatim

    def number(text: str) -> int:
        found = seen.get(text)
        if found is None:
            found = seen[text] = keys.setdefault(call_key(text), len(keys))
        return found

    key_a = [number(c.tool_call) for c in a]
    key_b = [number(c.tool_call) for c in b]
    pairs: list[tuple[int | None, int | None, str]] = []
    for tag, i1, i2, j1, j2 in align(key_a, key_b):
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                pairs.append((i, j, RESULT if _result_differences(a[i], b[j]) else SAME))
        elif tag == "replace":
            pairs += _pair_by_tool(a, b, i1, i2, j1, j2)
        elif tag == "delete":
            pairs += [(i, None, ONLY_A) for i in range(i1, i2)]
        else:
            pairs += [(None, j, ONLY_B) for j in range(j1, j2)]
    partner = _mark_moved(pairs, key_a, key_b)
    nodes = match_nodes(a, b, pairs, titles or {})
    comparison = Comparison(a, b, pairs, nodes, partner=partner)
    comparison.differing = [k for k, p in enumerate(pairs) if p[2] != SAME]
    comparison.groups = _groups(a, b, pairs, nodes)
    return comparison


def _mark_moved(
    pairs: list[tuple[int | None, int | None, str]], key_a: list[int], key_b: list[int]
) -> dict[int, int]:
    """One-sided rows whose call the other run made elsewhere (unpaired there too) → MOVED.

    Returns each moved pair's counterpart (pair index ↔ pair index), in order of the runs.
    """
    waiting: dict[int, list[int]] = {}  # call key → its ONLY_B pairs, first first
    for k, (_, j, status) in enumerate(pairs):
        if status == ONLY_B and j is not None:
            waiting.setdefault(key_b[j], []).append(k)
    partner: dict[int, int] = {}
    for k, (i, _, status) in enumerate(pairs):
        if status == ONLY_A and i is not None and waiting.get(key_a[i]):
            other = waiting[key_a[i]].pop(0)
            pairs[k] = (i, None, MOVED)
            pairs[other] = (None, pairs[other][1], MOVED)
            partner[k], partner[other] = other, k
    return partner


def _visited(rows: list[Call]) -> dict[str, int]:
    """Canvas nodes a run's rows point at, in order of first visit, with their row counts."""
    return Counter(c.node_id for c in rows if c.node_id and c.node_id not in UNMAPPED)


def match_nodes(
    a: list[Call],
    b: list[Call],
    pairs: list[tuple[int | None, int | None, str]],
    titles: dict[str, str],
) -> list[NodeMatch]:
    """Each run's nodes paired: by the calls aligned between them, else by id, else by title."""
    seen_a, seen_b = _visited(a), _visited(b)
    shared: Counter[tuple[str, str]] = Counter()
    for i, j, status in pairs:
        if status in PAIRED and i is not None and j is not None:
            x, y = a[i].node_id, b[j].node_id
            if x in seen_a and y in seen_b:
                shared[(x, y)] += 1
    partner: dict[str, tuple[str, str]] = {}
    taken_b: set[str] = set()
    for (x, y), _ in sorted(shared.items(), key=lambda kv: (-kv[1], kv[0])):
        if x not in partner and y not in taken_b:
            partner[x] = (y, "calls")
            taken_b.add(y)
    by_title: dict[str, str] = {}
    for y in seen_b:
        if y not in taken_b and (title := _title_key(titles.get(y))):
            by_title.setdefault(title, y)
    for x in seen_a:
        if x in partner:
            continue
        if x in seen_b and x not in taken_b:
            partner[x] = (x, "id")
        elif (y := by_title.get(_title_key(titles.get(x)))) and y not in taken_b:
            partner[x] = (y, "title")
        else:
            continue
        taken_b.add(partner[x][0])
    out = []
    for x, n in seen_a.items():
        y, how = partner.get(x, (None, ""))
        out.append(NodeMatch(x, y, n, seen_b[y] if y else 0, shared[(x, y)] if y else 0, how))
    out += [NodeMatch(None, y, 0, n, 0, "") for y, n in seen_b.items() if y not in taken_b]
    return out


def _title_key(title: str | None) -> str:
    return " ".join((title or "").split()).casefold()


def _groups(
    a: list[Call],
    b: list[Call],
    pairs: list[tuple[int | None, int | None, str]],
    nodes: list[NodeMatch],
) -> list[int | None]:
    """Each pair's node group: the node match of its A row's node, else of its B row's."""
    of_a: dict[str | None, int] = {m.a: k for k, m in enumerate(nodes) if m.a is not None}
    of_b: dict[str | None, int] = {m.b: k for k, m in enumerate(nodes) if m.b is not None}
    out: list[int | None] = []
    for i, j, _ in pairs:
        group = of_a.get(a[i].node_id) if i is not None else None
        if group is None and j is not None:
            group = of_b.get(b[j].node_id)
        out.append(group)
    return out


def _summary(c: Comparison) -> CompareSummary:
    statuses = Counter(s for _, _, s in c.pairs)
    score_differs = sum(
        1
        for i, j, s in c.pairs
        if s == RESULT and i is not None and j is not None and c.a[i].score != c.b[j].score
    )
    return {
        "rows": {"a": len(c.a), "b": len(c.b)},
        "aligned": len(c.pairs),
        "same": statuses[SAME],
        "result": statuses[RESULT],
        "changed": statuses[CHANGED],
        "only_a": statuses[ONLY_A],
        "only_b": statuses[ONLY_B],
        "moved": statuses[MOVED],
        "score_differs": score_differs,
        "nodes": {
            "both": sum(1 for m in c.nodes if m.a and m.b),
            "only_a": sum(1 for m in c.nodes if m.a and not m.b),
            "only_b": sum(1 for m in c.nodes if m.b and not m.a),
        },
        "result_bytes": {
            "a": sum(r.result_size or 0 for r in c.a),
            "b": sum(r.result_size or 0 for r in c.b),
        },
        "mean_score": {"a": _mean(c.a), "b": _mean(c.b)},
    }


def _mean(rows: list[Call]) -> float | None:
    scores = [r.score for r in rows if r.score is not None]
    return round(sum(scores) / len(scores), 2) if scores else None
