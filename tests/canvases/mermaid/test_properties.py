"""Property tests: round-trip on any text, no exception, edits keep their promises."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from canvases.mermaid import EditError, edits, parse, render_body
from canvases.mermaid.agent_view import read_meta
from canvases.mermaid.patch import split_lines
from canvases.mermaid.samples import sample_canvas

from .conftest import corpus_texts

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MERMAID_BITS = st.sampled_from(
    [
        "flowchart TD\n",
        "graph LR\n",
        "%%{",
        "}%%",
        "%{",
        "}%",
        '"',
        '\\"',
        "\\n",
        "\n",
        "\r\n",
        "\t",
        "  ",
        "-->",
        "---",
        "-.->",
        "==>",
        "--o",
        "--x",
        "<-->",
        "--&gt;",
        "-- t -->",
        "|l|",
        "[",
        "]",
        "(",
        ")",
        "{",
        "}",
        "{{",
        "}}",
        "((",
        "))",
        "([",
        "])",
        "[(",
        ")]",
        ">",
        "[/",
        "/]",
        "[\\",
        "\\]",
        "&",
        ";",
        ":::c",
        "@{ shape: rect }",
        "subgraph s [t]\n",
        "end\n",
        "class A done\n",
        "style A fill:#f00\n",
        "classDef done fill:#0f0\n",
        "%% c\n",
        "A",
        "B",
        "001-N1",
        "N2",
        "x-N3",
        "<br/>",
        "<br>",
        "status: done",
        "summary: s",
        "Timestamp: 2026-01-01",
        "#quot;",
        "```mermaid\n",
        "```\n",
        "\ufeff",
        "中文",
        "：",
    ]
)
CANVAS_TEXT = st.one_of(
    st.text(),
    st.lists(st.one_of(MERMAID_BITS, st.text(max_size=3)), max_size=40).map("".join),
)
REAL = [text for text in corpus_texts().values() if len(text) < 5000]
REAL.append(sample_canvas(40, seed=3))


@st.composite
def mutated_canvas(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(REAL))
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["delete", "insert", "dup_line", "drop_line"]))
        lines = text.split("\n")
        if kind == "delete" and text:
            start = draw(st.integers(0, len(text) - 1))
            text = text[:start] + text[start + draw(st.integers(1, 12)) :]
        elif kind == "insert":
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.one_of(MERMAID_BITS, st.text(max_size=4))) + text[at:]
        elif kind == "dup_line":
            at = draw(st.integers(0, len(lines) - 1))
            text = "\n".join([*lines[: at + 1], lines[at], *lines[at + 1 :]])
        elif len(lines) > 1:
            at = draw(st.integers(0, len(lines) - 1))
            text = "\n".join(lines[:at] + lines[at + 1 :])
    return text


def check_parse(text: str) -> None:
    doc = parse(text)
    assert doc.serialize() == text
    assert doc.text == text
    for problem in doc.problems:
        assert problem.line >= 1 and problem.col >= 1
        assert problem.severity in ("error", "warning")
    render_body(text)
    if doc.subgraphs:
        render_body(text, collapse=[doc.subgraphs[0].id, doc.subgraphs[-1].id])


@SETTINGS
@given(CANVAS_TEXT)
def test_any_text_round_trips_and_never_raises(text):
    check_parse(text)


@SETTINGS
@given(mutated_canvas())
def test_mutated_real_canvases_round_trip(text):
    check_parse(text)


def pairs(text: str) -> list[tuple[str, str]]:
    return [(e.source, e.target) for e in parse(text).edges]


def untouched_lines_kept(old: str, new: str) -> None:
    """Every old line is either still there (same bytes, same order) or named in the diff."""
    old_lines, new_lines = split_lines(old), split_lines(new)
    head = 0
    while head < min(len(old_lines), len(new_lines)) and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(old_lines), len(new_lines)) - head
        and old_lines[-1 - tail] == new_lines[-1 - tail]
    ):
        tail += 1
    assert head + tail <= len(old_lines)


def errors(text: str) -> int:
    return sum(p.severity == "error" for p in parse(text).problems)


def apply_unified(old: str, diff: str) -> str:
    """Apply our own diff to the old text: it must reproduce the new text exactly."""
    old_lines = split_lines(old)
    out: list[str] = []
    at = 0
    lines = split_lines(diff)[2:]
    index = 0
    while index < len(lines):
        match = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", lines[index])
        assert match, lines[index]
        start = int(match.group(1)) - (1 if int(match.group(2) or 1) else 0)
        out.extend(old_lines[at:start])
        at = start
        index += 1
        while index < len(lines) and not lines[index].startswith("@@"):
            line = lines[index]
            body = line[1:]
            if index + 1 < len(lines) and lines[index + 1].startswith("\\ No newline"):
                body = body[:-1]
                index += 1
            if line[0] in " -":
                at += 1
            if line[0] in " +":
                out.append(body)
            index += 1
    out.extend(old_lines[at:])
    return "".join(out)


def check_edit(old: str, result: edits.EditResult) -> None:
    assert errors(result.text) <= errors(old)
    assert apply_unified(old, result.diff) == result.text
    check_parse(result.text)


@st.composite
def canvas_and_ids(draw: st.DrawFn) -> tuple[str, list[str]]:
    text = draw(st.one_of(st.sampled_from(REAL), mutated_canvas()))
    doc = parse(text)
    assume(doc.nodes and not doc.is_escaped_oneliner)
    ids = draw(st.lists(st.sampled_from(list(doc.nodes)), min_size=1, max_size=3, unique=True))
    return text, ids


@SETTINGS
@given(canvas_and_ids(), st.sampled_from(["done", "doing", "blocked", "等待"]))
def test_set_status_property(case, status):
    text, ids = case
    try:
        result = edits.set_status(text, ids[0], status)
    except EditError:
        return
    check_edit(text, result)
    after = parse(result.text)
    assert after.nodes[ids[0]].fields.status == status
    assert list(after.nodes) == list(parse(text).nodes)
    assert pairs(result.text) == pairs(text)


@SETTINGS
@given(canvas_and_ids(), st.text(max_size=80))
def test_annotate_property(case, note):
    text, ids = case
    try:
        result = edits.annotate(text, ids[0], note)
    except EditError:
        return
    check_edit(text, result)
    before, after = parse(text), parse(result.text)
    assert list(after.nodes) == list(before.nodes)
    assert pairs(result.text) == pairs(text)
    assert after.nodes[ids[0]].fields.status == before.nodes[ids[0]].fields.status
    assert after.nodes[ids[0]].fields.summary == before.nodes[ids[0]].fields.summary


@SETTINGS
@given(canvas_and_ids(), st.booleans())
def test_prune_property(case, bridge):
    text, ids = case
    try:
        result = edits.prune(text, ids[0], bridge=bridge)
    except EditError:
        return
    check_edit(text, result)
    before = pairs(text)
    after = pairs(result.text)
    assert set(parse(result.text).nodes) == set(parse(text).nodes) - {ids[0]}
    kept = [p for p in before if ids[0] not in p]
    assert sorted(after) == sorted(kept + result.added_edges)


@SETTINGS
@given(canvas_and_ids())
def test_merge_property(case):
    text, ids = case
    try:
        result = edits.merge(text, ids)
    except EditError:
        return
    check_edit(text, result)
    keep = ids[0]
    nodes_after = set(parse(result.text).nodes)
    assert nodes_after == set(parse(text).nodes) - set(ids[1:])
    assert result.id_map == dict.fromkeys(ids[1:], keep)
    rename = result.id_map
    expected = set()
    for s, t in pairs(text):
        new = (rename.get(s, s), rename.get(t, t))
        if (s in rename or t in rename) and new[0] == new[1]:
            continue
        expected.add(new)
    assert set(pairs(result.text)) == expected


@SETTINGS
@given(canvas_and_ids())
def test_add_and_remove_edge_property(case):
    text, ids = case
    source, target = ids[0], ids[-1]
    try:
        added = edits.add_edge(text, source, target, label="via")
    except EditError:
        assert (source, target) in pairs(text) or errors(text)
        return
    check_edit(text, added)
    assert pairs(added.text) == [*pairs(text), (source, target)] or sorted(
        pairs(added.text)
    ) == sorted([*pairs(text), (source, target)])
    removed = edits.remove_edge(added.text, source, target)
    check_edit(added.text, removed)
    assert sorted(pairs(removed.text)) == sorted(pairs(text))


@SETTINGS
@given(canvas_and_ids(), st.text(max_size=40), st.integers(0, 100))
def test_set_meta_and_edit_label_property(case, goal, progress):
    text, ids = case
    try:
        result = edits.set_meta(text, taskGoal=goal, progress=progress)
    except EditError:
        return
    check_edit(text, result)
    meta = parse(result.text).meta
    assert meta.progress == progress
    typed = re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", " ", goal.replace("\r\n", " "))
    assert meta.task_goal == typed.replace("\u2060", "").strip()  # as typed, up to the WJ breaks
    assert read_meta(result.text).on_line_one
    try:
        labelled = edits.edit_label(result.text, ids[0], title=goal or "x", summary=goal)
    except EditError:
        return
    check_edit(result.text, labelled)
    assert pairs(labelled.text) == pairs(result.text)


@SETTINGS
@given(CANVAS_TEXT, st.text(max_size=8))
def test_edits_only_raise_edit_error(text, node_id):
    doc = parse(text)
    target = next(iter(doc.nodes), node_id)
    operations = [
        lambda: edits.set_status(text, target, "done"),
        lambda: edits.annotate(text, target, node_id),
        lambda: edits.prune(text, target),
        lambda: edits.merge(text, [target, node_id]),
        lambda: edits.add_edge(text, target, node_id),
        lambda: edits.remove_edge(text, target, target),
        lambda: edits.edit_label(text, target, title=node_id or "t"),
        lambda: edits.set_meta(text, taskGoal=node_id),
        lambda: edits.repair_oneliner(text),
    ]
    for operation in operations:
        try:
            operation()
        except EditError as error:
            assert str(error)
