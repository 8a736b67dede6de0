"""Aligning two runs by tool call: identical, insert, delete, change, reorder; nodes matched."""

from __future__ import annotations

import difflib
import random
from typing import Any

from debugging.call_align import align
from debugging.session_compare import (
    CHANGED,
    MOVED,
    ONLY_A,
    ONLY_B,
    RESULT,
    SAME,
    Call,
    call_key,
    compare,
)


def run(calls: list[str], node: str = "001-N1", **changes: dict[int, object]) -> list[Call]:
    """Rows of one run; ``changes``: field → {row index: value} overrides."""
    out = []
    for k, text in enumerate(calls):
        fields: dict[str, Any] = {"summary": f"did {text}", "score": 5.0, "node_id": node, "result_size": 100}
        fields.update({f: v[k] for f, v in changes.items() if k in v})
        out.append(
            Call(
                k + 1,
                k + 1,
                text,
                fields["summary"],
                fields["score"],
                fields["node_id"],
                f"refs/{k}.md",
                fields["result_size"],
            )
        )
    return out


def shape(calls_a: list[Call], calls_b: list[Call]) -> list[tuple[str | None, str | None, str]]:
    c = compare(calls_a, calls_b)
    return [
        (
            calls_a[i].tool_call if i is not None else None,
            calls_b[j].tool_call if j is not None else None,
            s,
        )
        for i, j, s in c.pairs
    ]


BASE = ["read: a.py", "exec: pytest -q", "edit: a.py", "exec: pytest -q", "write: notes.md"]


def test_identical_runs_pair_every_row_as_same() -> None:
    c = compare(run(BASE), run(BASE))
    assert list(c.pairs) == [(k, k, SAME) for k in range(5)]
    assert c.differing == [] and c.summary["same"] == 5 and c.summary["only_a"] == 0


def test_an_inserted_call_is_a_gap_on_the_other_side() -> None:
    b = [*BASE[:2], "grep: TODO", *BASE[2:]]
    assert shape(run(BASE), run(b))[2] == (None, "grep: TODO", ONLY_B)
    c = compare(run(BASE), run(b))
    assert c.summary["only_b"] == 1 and c.summary["same"] == 5 and c.differing == [2]


def test_a_removed_call_is_a_gap_on_the_other_side() -> None:
    b = BASE[:1] + BASE[2:]
    got = shape(run(BASE), run(b))
    assert got[1] == ("exec: pytest -q", None, ONLY_A)
    assert [s for _, _, s in got].count(SAME) == 4


def test_same_tool_with_other_arguments_is_a_change_in_place() -> None:
    b = list(BASE)
    b[2] = "edit: b.py"
    got = shape(run(BASE), run(b))
    assert got[2] == ("edit: a.py", "edit: b.py", CHANGED)
    assert compare(run(BASE), run(b)).differences(2) == ["call", "summary"]


def test_same_call_with_another_result_or_score() -> None:
    b = run(BASE, summary={1: "3 failed"}, score={1: 2.0}, result_size={4: 900})
    c = compare(run(BASE), b)
    assert [s for _, _, s in c.pairs] == [SAME, RESULT, SAME, SAME, RESULT]
    assert c.differences(1) == ["summary", "score"] and c.differences(4) == ["size"]
    assert c.summary["result"] == 2 and c.summary["score_differs"] == 1


def test_a_reordered_call_shows_as_moved_not_as_new() -> None:
    a = ["read: a.py", "read: b.py", "read: c.py", "exec: make", "write: out.md"]
    b = ["read: a.py", "exec: make", "read: b.py", "read: c.py", "write: out.md"]
    c = compare(run(a), run(b))
    moved = [(i, j) for i, j, s in c.pairs if s == MOVED]
    assert len(moved) == 2  # exec: make, once on each side
    assert {run(a)[i].tool_call for i, _ in moved if i is not None} == {"exec: make"}
    assert c.summary["only_a"] == c.summary["only_b"] == 0 and c.summary["same"] == 4
    # each moved row points at the other: the same call in the other run
    here, there = (k for k, (_, _, s) in enumerate(c.pairs) if s == MOVED)
    assert c.partner == {here: there, there: here}


def test_calls_normalise_whitespace_and_json_key_order() -> None:
    assert call_key('exec({"cmd": "ls", "cwd": "/"})') == call_key(
        'exec( {"cwd":"/",  "cmd":"ls"} )'
    )
    assert call_key("read:   a.py") == call_key("read: a.py")
    assert call_key("read: a.py") != call_key("read: b.py")


def test_alignment_agrees_with_sequence_matcher_on_a_long_edited_run() -> None:
    rng = random.Random(7)
    a = [rng.randrange(300) for _ in range(3000)]
    b = list(a)
    for _ in range(60):
        k = rng.randrange(len(b))
        if rng.random() < 0.5:
            del b[k]
        else:
            b.insert(k, 1000 + rng.randrange(50))
    ops = align(a, b)
    i = j = 0
    for tag, i1, i2, j1, j2 in ops:  # contiguous, covering both, equal means equal
        assert (i1, j1) == (i, j)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))
    kept = sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag == "equal")
    best = sum(
        m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
    )
    assert kept >= best - 5  # as good as the whole-run matcher, give or take a repeat


def test_nodes_are_matched_by_their_aligned_calls_then_by_title() -> None:
    a = run(BASE, node="001-N1", node_id={4: "001-N2"})
    b = run(BASE, node="002-N1", node_id={4: "002-N7"})
    b.append(Call(99, 99, "exec: deploy", "", None, "002-N9", None, None))
    titles = {"001-N2": "Write notes", "002-N7": "write  NOTES", "002-N9": "deploy"}
    c = compare(a, b + [], titles)
    found = {(m.a, m.b): m.how for m in c.nodes}
    assert found == {
        ("001-N1", "002-N1"): "calls",
        ("001-N2", "002-N7"): "calls",
        (None, "002-N9"): "",
    }
    # without aligned calls between them, equal titles still pair two nodes
    c = compare(
        a[:4] + [Call(50, 50, "exec: x", "", None, "001-N2", None, None)],
        b[:4] + [Call(51, 51, "exec: y", "", None, "002-N7", None, None)],
        titles,
    )
    assert ("001-N2", "002-N7") in {(m.a, m.b) for m in c.nodes}
    assert c.summary["nodes"] == {"both": 2, "only_a": 0, "only_b": 0}


def _lcs(a: list[int], b: list[int]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal = 0
        for j, y in enumerate(b):
            diagonal, row[j + 1] = row[j + 1], diagonal + 1 if x == y else max(row[j + 1], row[j])
    return row[-1]


def test_runs_that_repeat_every_call_still_align_row_for_row() -> None:
    """No call is unique, so nothing anchors: the edit script is still the shortest one."""
    rng = random.Random(11)
    a = [rng.randrange(4) for _ in range(3000)]  # four calls, each ~750 times
    b = list(a)
    for _ in range(30):
        del b[rng.randrange(len(b))]
    ops = align(a, b)
    assert sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag == "equal") == len(b)
    assert {tag for tag, *_ in ops} == {"equal", "delete"}
    for seed in range(20):  # short runs of three calls: as many kept rows as the longest common run
        rng = random.Random(seed)
        x = [rng.randrange(3) for _ in range(rng.randrange(2, 40))]
        y = [rng.randrange(3) for _ in range(rng.randrange(2, 40))]
        kept = sum(i2 - i1 for tag, i1, i2, _, _ in align(x, y) if tag == "equal")
        assert kept == _lcs(x, y), (x, y)
