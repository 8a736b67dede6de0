"""Aligning two sequences of call keys (ints): difflib-style opcodes, fast on long runs.

Django-free. Like a patience diff: keys that occur once in each window anchor it (their
longest increasing run), and the windows between anchors are aligned again. A window with no
such key (runs that repeat their calls) goes to Myers' O((N+M)·D) algorithm while the edits D
stay few; past that, the runs differ throughout and difflib's SequenceMatcher (its popular
keys set aside) gives a cheap answer. One SequenceMatcher over two 20,000-row runs with a few
hundred edits costs about a second, and with every call repeated it either takes seconds or,
its popular keys set aside, matches almost nothing.
"""

from __future__ import annotations

import difflib
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence

Op = tuple[str, int, int, int, int]
MAX_EDITS = 1000  # Myers' D bound: ~D² steps and a trace of D² positions


def align(a: Sequence[int], b: Sequence[int]) -> list[Op]:
    """difflib-style opcodes (``equal``/``replace``/``delete``/``insert``) of two key lists."""
    out: list[Op] = []
    # An explicit stack instead of recursion: pending work is a window to align or an opcode.
    stack: list[Op] = [("window", 0, len(a), 0, len(b))]
    while stack:
        item = stack.pop()
        if item[0] != "window":
            _emit(out, item)
            continue
        _, alo, ahi, blo, bhi = item
        start = alo
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            alo, blo = alo + 1, blo + 1
        _emit(out, ("equal", start, alo, blo - (alo - start), blo))
        end = ahi
        while ahi > alo and bhi > blo and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
        stack.append(("equal", ahi, end, bhi, bhi + end - ahi))  # popped after the middle
        stack.extend(reversed(_anchored(a, b, alo, ahi, blo, bhi)))
    return _replaces(out)


def _replaces(ops: list[Op]) -> list[Op]:
    """A deletion next to an insertion is one ``replace``, as SequenceMatcher reports it."""
    out: list[Op] = []
    for op in ops:
        last = out[-1] if out else None
        if (
            last is not None
            and op[0] in ("delete", "insert")
            and last[0] in ("delete", "insert", "replace")
            and last[0] != op[0]
            and (last[2], last[4]) == (op[1], op[3])
        ):
            out[-1] = ("replace", last[1], op[2], last[3], op[4])
        else:
            out.append(op)
    return out


def _myers(
    a: Sequence[int], b: Sequence[int], alo: int, ahi: int, blo: int, bhi: int
) -> list[Op] | None:
    """The shortest edit script of a window (Myers 1986), or None past ``MAX_EDITS`` edits."""
    n, m = ahi - alo, bhi - blo
    limit = min(MAX_EDITS, n + m)
    off = limit + 1
    v = array("l", [0]) * (2 * limit + 3)
    trace: list[array] = []  # v of the previous round around the diagonals each round reads
    for d in range(limit + 1):
        trace.append(v[off - d - 1 : off + d + 2])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]):
                x = v[off + k + 1]  # down: a row of b inserted
            else:
                x = v[off + k - 1] + 1  # right: a row of a deleted
            y = x - k
            while x < n and y < m and a[alo + x] == b[blo + y]:
                x, y = x + 1, y + 1
            v[off + k] = x
            if x >= n and y >= m:
                return _walk_back(trace, n, m, alo, blo)
    return None


def _walk_back(trace: list[array], x: int, y: int, alo: int, blo: int) -> list[Op]:
    """The edit script of a finished Myers search, from its end back to the start."""
    steps: list[Op] = []
    for d in range(len(trace) - 1, -1, -1):
        v, k = trace[d], x - y
        at = d + 1  # index of diagonal 0 in this round's slice
        down = k == -d or (k != d and v[at + k - 1] < v[at + k + 1])
        prev_k = k + 1 if down else k - 1
        prev_x = v[at + prev_k] if d else 0
        prev_y = prev_x - prev_k if d else 0
        while x > prev_x and y > prev_y:  # the diagonal run after the edit: equal rows
            x, y = x - 1, y - 1
            steps.append(("equal", alo + x, alo + x + 1, blo + y, blo + y + 1))
        if d:
            if prev_k == k + 1:
                steps.append(("insert", alo + x, alo + x, blo + y - 1, blo + y))
            else:
                steps.append(("delete", alo + x - 1, alo + x, blo + y, blo + y))
            x, y = prev_x, prev_y
    out: list[Op] = []
    for step in reversed(steps):
        _emit(out, step)
    return out


def _anchored(
    a: Sequence[int], b: Sequence[int], alo: int, ahi: int, blo: int, bhi: int
) -> list[Op]:
    """The middle of a window: sub-windows between unique anchors, or its SequenceMatcher ops."""
    if alo == ahi or blo == bhi:
        return [("delete", alo, ahi, blo, blo), ("insert", alo, alo, blo, bhi)]
    count_a = Counter(a[alo:ahi])
    count_b = Counter(b[blo:bhi])
    where_b = {b[j]: j for j in range(blo, bhi) if count_b[b[j]] == 1}
    candidates = [
        (i, where_b[a[i]]) for i in range(alo, ahi) if count_a[a[i]] == 1 and a[i] in where_b
    ]
    anchors = _longest_increasing(candidates)
    if not anchors:
        found = _myers(a, b, alo, ahi, blo, bhi)
        if found is not None:
            return found
        ops = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi]).get_opcodes()
        return [(tag, i1 + alo, i2 + alo, j1 + blo, j2 + blo) for tag, i1, i2, j1, j2 in ops]
    todo: list[Op] = []
    i, j = alo, blo
    for ai, bj in anchors:
        if ai == i and bj == j and todo and todo[-1][0] == "equal":
            todo[-1] = ("equal", todo[-1][1], ai + 1, todo[-1][3], bj + 1)  # a run of anchors
        else:
            if ai > i or bj > j:
                todo.append(("window", i, ai, j, bj))
            todo.append(("equal", ai, ai + 1, bj, bj + 1))
        i, j = ai + 1, bj + 1
    todo.append(("window", i, ahi, j, bhi))
    return todo


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of ``pairs`` (ordered by a) whose b positions increase (patience sort)."""
    tails: list[int] = []  # b position ending the best run of each length
    tail_at: list[int] = []  # index in pairs of that end
    back: list[int] = []
    for k, (_, bj) in enumerate(pairs):
        n = bisect_left(tails, bj)
        if n == len(tails):
            tails.append(bj)
            tail_at.append(k)
        else:
            tails[n] = bj
            tail_at[n] = k
        back.append(tail_at[n - 1] if n else -1)
    run = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        run.append(pairs[k])
        k = back[k]
    return run[::-1]


def _emit(out: list[Op], op: Op) -> None:
    """Append an opcode, joining it to the previous one when both are of the same kind."""
    tag, i1, i2, j1, j2 = op
    if i1 == i2 and j1 == j2:
        return
    if out and out[-1][0] == tag and out[-1][2] == i1 and out[-1][4] == j1:
        out[-1] = (tag, out[-1][1], i2, out[-1][3], j2)
    else:
        out.append(op)
