"""Each edit on real canvases: what it writes, what it keeps byte for byte, what it refuses."""

from __future__ import annotations

import re

import pytest

from canvases.mermaid import EditError, edits, parse
from canvases.mermaid.agent_view import read_meta
from canvases.mermaid.patch import split_lines

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def changed_lines(old: str, new: str, diff: str) -> tuple[list[str], list[str]]:
    """Removed and added lines of the diff, after checking every other line stayed identical."""
    old_lines, new_lines = split_lines(old), split_lines(new)
    removed: list[str] = []
    added: list[str] = []
    old_at = new_at = 0
    for match in HUNK.finditer(diff):
        a, b, c, d = (int(g) if g is not None else 1 for g in match.groups())
        old_start = a - 1 if b else a
        new_start = c - 1 if d else c
        assert old_lines[old_at:old_start] == new_lines[new_at : new_at + old_start - old_at]
        removed.extend(line for line in _hunk_body(diff, match.end()) if line.startswith("-"))
        added.extend(line for line in _hunk_body(diff, match.end()) if line.startswith("+"))
        old_at, new_at = old_start + b, new_start + d
    assert old_lines[old_at:] == new_lines[new_at:]
    return removed, added


def _hunk_body(diff: str, offset: int) -> list[str]:
    body = []
    for line in diff[offset:].split("\n")[1:]:
        if line.startswith("@@"):
            break
        if line[:1] in "+- ":
            body.append(line)
    return body


def pairs(text: str) -> list[tuple[str, str]]:
    return [(e.source, e.target) for e in parse(text).edges]


def test_set_status_changes_one_label_and_its_class_line(fixtures):
    text = fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"]
    result = edits.set_status(text, "002-N4", "Done")
    removed, added = changed_lines(text, result.text, result.diff)
    assert len(removed) == len(added) == 2
    doc = parse(result.text)
    assert doc.nodes["002-N4"].fields.status == "done"
    assert "class 002-N4 done" in result.text
    assert "class 002-N4 blocked" not in result.text
    assert pairs(result.text) == pairs(text)


def test_set_status_on_a_node_inside_a_subgraph_and_other_shapes(fixtures):
    text = fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"]
    result = edits.set_status(text, "002-N5", "done")
    assert parse(result.text).nodes["002-N5"].subgraph == "impl"
    hexagon = edits.set_status(text, "002-N3", "blocked")
    assert '002-N3{{"测试: pytest tests/orders<br/>status: blocked' in hexagon.text


def test_set_status_keeps_unknown_words_and_adds_a_missing_field(corpus):
    result = edits.set_status(corpus["en-canonical.mmd"], "005-N5", "等待")
    node = parse(result.text).nodes["005-N5"]
    assert node.fields.status == "等待"
    assert node.shape == "cylinder"
    assert '005-N5[("Store: outbox schema<br/>status: 等待")]' in result.text


def test_set_status_on_a_bare_node_gives_it_a_label(corpus):
    result = edits.set_status(corpus["edges-all.mmd"], "C", "doing")
    assert 'B --- C["C<br/>status: doing"]' in result.text
    assert parse(result.text).nodes["C"].fields.status == "doing"
    assert pairs(result.text) == pairs(corpus["edges-all.mmd"])


def test_annotate_adds_then_replaces_the_note(corpus):
    text = corpus["zh-wild.mmd"]
    first = edits.annotate(text, "N3", "先别动")
    assert parse(first.text).nodes["N3"].fields.extra["note"] == "先别动"
    second = edits.annotate(first.text, "N4", "人工复核 OK")
    assert parse(second.text).nodes["N4"].fields.extra == {"note": "人工复核 OK"}
    removed, added = changed_lines(first.text, second.text, second.diff)
    assert len(removed) == len(added) == 1


@pytest.mark.parametrize(
    "note",
    [
        'say "hi" ]) }} --> B',
        "status: done",
        "line one\nstatus: blocked\r\nsummary: fake",
        "<br/>status: done<script>alert(1)</script>",
        "`markdown` #quot; &gt; %%{ }%% \\",
        "end",
    ],
)
def test_annotate_escapes_anything(fixtures, note):
    text = fixtures["fixture-a-upstream/001-fix-login-timeout.mmd"]
    result = edits.annotate(text, "001-N2", note)
    doc = parse(result.text)
    node = doc.nodes["001-N2"]
    assert not doc.problems
    assert node.fields.status == "done"
    assert node.fields.summary == "TTL 硬编码 1800s，refresh 未续期"
    assert "note" in node.fields.extra
    assert len(re.findall(r"status:\s*(\w+)", result.text)) == 2  # the two real status fields
    assert pairs(result.text) == pairs(text)


def test_annotate_limit_and_unknown_id(fixtures):
    text = fixtures["fixture-a-upstream/001-fix-login-timeout.mmd"]
    with pytest.raises(EditError, match="500"):
        edits.annotate(text, "001-N2", "x" * 501)
    with pytest.raises(EditError, match="no node"):
        edits.annotate(text, "001-N9", "hi")
    assert edits.annotate(text, "001-N2", "x" * 500).text


def test_edit_label_sets_title_and_summary(fixtures):
    text = fixtures["fixture-b-wild/004-修复CI缓存.mmd"]
    result = edits.edit_label(text, "004-N3", title="结论: 改 key", summary='加入 "hashFiles"')
    node = parse(result.text).nodes["004-N3"]
    assert (node.fields.phase, node.fields.action) == ("结论", "改 key")
    assert node.fields.summary == '加入 "hashFiles"'
    assert node.fields.status == "doing"
    assert node.shape == "asymmetric"
    assert "#quot;hashFiles#quot;" in result.text
    with pytest.raises(EditError):
        edits.edit_label(text, "004-N3")


def test_add_and_remove_edge(fixtures):
    text = fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"]
    added = edits.add_edge(text, "002-N1", "002-N5", label="skip | ahead")
    assert added.added_edges == [("002-N1", "002-N5")]
    assert pairs(added.text) == [*pairs(text), ("002-N1", "002-N5")]
    removed, new = changed_lines(text, added.text, added.diff)
    assert removed == [] and len(new) == 1
    assert parse(added.text).nodes["002-N1"].subgraph is None  # not written inside `impl`
    with pytest.raises(EditError, match="already"):
        edits.add_edge(added.text, "002-N1", "002-N5")
    back = edits.remove_edge(added.text, "002-N1", "002-N5")
    assert back.text == text
    with pytest.raises(EditError, match="no edge"):
        edits.remove_edge(text, "002-N5", "002-N1")


def test_remove_edge_splits_a_chain_only_as_needed(corpus):
    text = corpus["edges-all.mmd"]
    result = edits.remove_edge(text, "X", "Y")
    assert "    Y --> Z\n" in result.text
    assert ("X", "Y") not in pairs(result.text)
    assert len(pairs(result.text)) == len(pairs(text)) - 1
    assert set(parse(result.text).nodes) == set(parse(text).nodes)
    grouped = edits.remove_edge(text, "R", "T")
    assert "    Q --> S\n    Q --> T\n    R --> S\n" in grouped.text
    assert len(pairs(grouped.text)) == len(pairs(text)) - 1


def test_prune_bridges_predecessors_to_successors(fixtures):
    text = fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"]
    result = edits.prune(text, "002-N4")
    assert result.removed == ["002-N4"]
    assert result.added_edges == [("002-N3", "002-N5")]
    assert sorted(result.removed_edges) == [("002-N3", "002-N4"), ("002-N4", "002-N5")]
    doc = parse(result.text)
    assert "002-N4" not in doc.nodes
    assert "002-N4" not in result.text  # its class line went too
    assert ("002-N3", "002-N5") in pairs(result.text)
    unbridged = edits.prune(text, "002-N4", bridge=False)
    assert len(pairs(unbridged.text)) == 2


def test_prune_inside_a_chain_keeps_the_other_nodes(corpus):
    text = corpus["edges-all.mmd"]
    result = edits.prune(text, "Y")
    doc = parse(result.text)
    assert set(doc.nodes) == set(parse(text).nodes) - {"Y"}
    assert ("X", "Z") in pairs(result.text)


def test_prune_never_reuses_the_id_of_a_pruned_node(fixtures):
    from canvases.mermaid.ids import next_node_id

    text = fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"]
    assert next_node_id(text) == "002-N6"
    pruned = edits.prune(text, "002-N5").text
    assert next_node_id(pruned, removed=["002-N5"]) == "002-N6"
    assert next_node_id("flowchart TD\n  N1 --> N2\n") == "N3"
    assert next_node_id("flowchart TD\n  fix-login-N4\n") == "fix-login-N5"
    canary = fixtures["fixture-b-wild/003-k8s-canary-deploy.mmd"]
    assert next_node_id(canary) == "003-N5"  # the file's own prefix, not the bare `N` form


def test_merge_as_the_spec_recipe_says(fixtures):
    text = fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"]
    result = edits.merge(text, ["002-N4", "002-N3"], into="002-N3")
    assert result.id_map == {"002-N4": "002-N3"}
    assert result.removed == ["002-N4"]
    doc = parse(result.text)
    node = doc.nodes["002-N3"]
    assert node.fields.status == "blocked"  # blocked > doing > paused > todo > done
    assert node.fields.timestamp == "2026-06-11T14:09:55.870+08:00"
    assert (
        node.fields.summary == "3 failed — 0.1+0.2 float 精度; 仍经 float 中转，方案废弃，勿再尝试"
    )
    assert node.shape == "rect"  # summarised nodes are written as id["…"]
    assert pairs(result.text) == [("002-N1", "002-N2"), ("002-N2", "002-N3"), ("002-N3", "002-N5")]
    assert "class 002-N3 blocked" in result.text and "002-N4" not in result.text
    assert doc.meta.updated == "2026-06-11T14:15:30.004+08:00"


def test_merge_updates_updated_time_and_honours_overrides(fixtures):
    text = fixtures["fixture-c-enhanced/001-etl-memory-error.mmd"].replace(
        '"updatedTime": "2026-06-14T20:07:33.918+08:00"',
        '"updatedTime": "2026-06-14T20:00:00.000+08:00"',
    )
    result = edits.merge(
        text,
        ["001-N2", "001-N3"],
        label="诊断: OOM",
        summary="read_csv 一次性读 2GB",
        status="done",
    )
    doc = parse(result.text)
    assert doc.meta.form == "json"
    assert doc.meta.updated == "2026-06-14T20:07:33.918+08:00"
    node = doc.nodes["001-N2"]
    assert (node.fields.title, node.fields.status) == ("诊断: OOM", "done")
    assert node.fields.summary == "read_csv 一次性读 2GB"
    assert "class 001-N2 done" in result.text
    assert result.text.splitlines()[0].startswith('%%{ "taskGoal"')


def test_merge_rewires_and_drops_duplicates_and_self_loops(corpus):
    text = corpus["edges-all.mmd"]
    result = edits.merge(text, ["S", "T"])
    after = pairs(result.text)
    assert after.count(("Q", "S")) == 1 and after.count(("R", "S")) == 1
    assert ("Q", "T") not in after
    assert result.id_map == {"T": "S"}
    assert "T" not in parse(result.text).nodes
    loop = edits.merge(text, ["X", "Y"])
    assert ("X", "X") not in pairs(loop.text)
    assert ("X", "Z") in pairs(loop.text)


def test_merge_errors(fixtures):
    text = fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"]
    with pytest.raises(EditError, match="nothing to merge"):
        edits.merge(text, [])
    with pytest.raises(EditError, match="no node"):
        edits.merge(text, ["002-N1", "nope"])
    with pytest.raises(EditError, match="itself"):
        edits.merge(text, ["002-N1"])


def test_set_meta_writes_the_strict_line_the_agent_reads(corpus, fixtures):
    canonical = edits.set_meta(
        fixtures["fixture-a-upstream/001-fix-login-timeout.mmd"], progress=40
    )
    line = canonical.text.split("\n")[0]
    assert line.startswith("%%{ ") and line.endswith(" }%%")
    assert parse(canonical.text).meta.progress == 40
    assert '"progress": "40"' in line  # the file wrote a string, so a string stays
    assert not canonical.notes  # it was readable already: nothing else changed
    typo = edits.set_meta(fixtures["fixture-b-wild/003-k8s-canary-deploy.mmd"], progress=90)
    meta = parse(typo.text).meta
    assert (meta.form, meta.progress) == ("json", 90)  # repaired into valid JSON
    assert "progress（0-100）" in typo.text and "strict JSON on line 1" in typo.notes[0]
    comment = edits.set_meta(
        corpus["comment-meta.mmd"], taskGoal="新目标", updatedTime="2026-07-05"
    )
    meta = parse(comment.text).meta
    assert (meta.form, meta.line, meta.task_goal, meta.updated, meta.progress) == (
        "json",
        1,
        "新目标",
        "2026-07-05",
        60,
    )
    assert read_meta(comment.text).task_goal == "新目标"
    assert "%% taskGoal" not in comment.text and "comment lines" in comment.notes[0]
    single = edits.set_meta(corpus["meta-single-percent.mmd"], taskGoal="x")
    assert single.text.startswith('%%{ "taskGoal": "x"')
    none = edits.set_meta(corpus["template.mmd"], taskGoal="new task", progress=0)
    assert none.text.startswith('%%{ "taskGoal": "new task", "progress": 0 }%%\nflowchart TD\n')
    with pytest.raises(EditError):
        edits.set_meta(corpus["template.mmd"], progress=140)
    with pytest.raises(EditError):
        edits.set_meta(corpus["template.mmd"])


def test_set_meta_value_cannot_end_the_line_early(fixtures):
    text = fixtures["fixture-a-upstream/001-fix-login-timeout.mmd"]
    result = edits.set_meta(text, taskGoal='a "quoted" }%% goal\nsecond line')
    meta = parse(result.text).meta
    assert meta.form == "json"
    agent = read_meta(result.text)
    assert agent.on_line_one and agent.task_goal is not None
    assert "}%%" not in agent.task_goal and "\n" not in agent.task_goal
    assert meta.task_goal == 'a "quoted" }%% goal second line'  # displayed as typed


def test_a_crlf_file_stays_crlf_on_every_line_an_edit_writes(corpus):
    text = corpus["crlf-tabs.mmd"]
    result = edits.set_status(text, "005-N4", "done")
    removed, added = changed_lines(text, result.text, result.diff)
    assert len(removed) == 1
    assert added[0].rstrip("\r").endswith('Timestamp: 2026-07-01T09:40:00.000+08:00"])')
    assert result.text.count("\r\n") == text.count("\r\n")
    # A new strict line 1 and the lines of a merge end in CRLF too, like every other line.
    bare = "flowchart TD\r\n    001-N1[\"a<br/>status: done\"]\r\n    001-N2[\"b<br/>status: doing\"]\r\n    001-N1 --> 001-N2\r\n"
    merged = edits.merge(edits.annotate(bare, "001-N1", "x").text, ["001-N1", "001-N2"]).text
    assert merged.count("\n") == merged.count("\r\n") and merged.startswith("%%{")


def test_edits_on_a_oneliner_ask_for_repair_first(corpus):
    text = corpus["oneliner.mmd"]
    with pytest.raises(EditError, match="repair"):
        edits.set_status(text, "011-N1", "done")
    repaired = edits.repair_oneliner(text)
    assert not parse(repaired.text).problems
    assert list(parse(repaired.text).nodes) == ["011-N1", "011-N2"]
    with pytest.raises(EditError):
        edits.repair_oneliner(repaired.text)


def test_repair_of_a_whole_llm_reply():
    reply = (
        '{"mmd_content": "```mermaid\\n%%{ \\"taskGoal\\": \\"t\\" }%%\\nflowchart TD\\n'
        '  001-N1[\\"x\\"] --> 001-N2[\\"y<br/>status: done\\"]\\n```"}'
    )
    repaired = edits.repair_oneliner(reply)
    doc = parse(repaired.text)
    assert doc.meta.task_goal == "t" and doc.meta.line == 1
    assert list(doc.nodes) == ["001-N1", "001-N2"]
    assert not doc.problems


def test_edit_that_would_break_the_file_is_refused():
    text = 'flowchart TD\n    A["a"]\n'
    with pytest.raises(EditError):
        edits.add_edge(text, "A", "A B")


def test_link_styles_follow_their_edges():
    text = (
        "flowchart TD\n"
        "    A --> B\n"
        "    B --> C\n"
        "    C --> D\n"
        "    linkStyle 0 stroke:#f00\n"
        "    linkStyle 1,2 stroke:#0f0\n"
        "    linkStyle default stroke:#999\n"
    )
    removed = edits.remove_edge(text, "A", "B")
    assert "    linkStyle 0 stroke:#f00\n" not in removed.text
    assert "    linkStyle 0,1 stroke:#0f0\n" in removed.text
    assert "linkStyle default stroke:#999" in removed.text
    pruned = edits.prune(text, "B")
    assert "linkStyle 0 stroke:#0f0" in pruned.text  # C --> D moved up; the bridge is new
    merged = edits.merge(text, ["A", "B"])
    assert "linkStyle 0,1 stroke:#0f0" in merged.text  # B --> C became A --> C
    assert "stroke:#f00" not in merged.text  # A --> B became a self-loop and went
    assert not parse(merged.text).problems


def test_a_merge_label_of_nothing_but_dropped_characters_keeps_the_titles():
    text = 'flowchart TD\n    A["a"] --> B["b"]\n    C[""] --> D[""]\n'
    merged = edits.merge(text, ["A", "B"], label="\u2060 \n")  # all of it is dropped or trimmed
    assert parse(merged.text).nodes["A"].fields.title == "a + b"
    untitled = edits.merge(text, ["C", "D"])  # no titles at all: the kept id, never an empty one
    assert parse(untitled.text).nodes["C"].fields.title == "C"


def test_a_merge_leaves_no_bare_id_line_where_an_edge_became_a_self_loop():
    text = 'flowchart TD\n    001-N1["a<br/>status: done"]\n    001-N2["b<br/>status: doing"]\n    001-N1 --> 001-N2\n    001-N2 --> 001-N3["c"]\n'
    merged = edits.merge(text, ["001-N1", "001-N2"]).text
    lines = [line.strip() for line in merged.splitlines()]
    assert "001-N1" not in lines  # the agent reads no stray statement
    assert "001-N1 --> 001-N3[\"c\"]" in lines and list(parse(merged).nodes) == ["001-N1", "001-N3"]


def test_status_on_an_empty_label_keeps_a_title_first() -> None:
    """The first segment of a label is its title: `N7[""]` + status must not read as title
    "status: done" (found by the set_status property test)."""
    text = 'flowchart TD\n    N7[""]\n    A --> N7\n'
    doc = parse(edits.set_status(text, "N7", "done").text)
    assert doc.nodes["N7"].fields.status == "done"
    assert doc.nodes["N7"].fields.title == "N7"


def test_a_merge_never_turns_unreadable_text_into_a_node() -> None:
    """Found by the merge property test: `B["x"]junk["y"]` less `B` would read as node `junk`."""
    text = 'flowchart TD\n    A["a"]\n    B["x"]junk["y"]\n    A --> B\n'
    with pytest.raises(EditError, match="junk"):
        edits.merge(text, ["A", "B"])
    clean = 'flowchart TD\n    A["a"]\n    B["x"]\n    A --> B\n'
    assert set(parse(edits.merge(clean, ["A", "B"]).text).nodes) == {"A"}
