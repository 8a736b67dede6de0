"""Format spec §4.8, rule by rule, as checks on the files memviz writes.

Each test runs over every op on every example canvas (tests/fixtures/roots, the engine's corpus,
the plugin's template canvas) with hostile text in every field a person types into, and holds
the app's emulation of the agent (`agent_view`) against the spec's own rules (`reference`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from agentfs.state_edit import create_minimal_state
from canvases.mermaid import agent_view, edits, parse
from canvases.mermaid.human_text import Context, human_text
from canvases.mermaid.samples import sample_canvas
from canvases.mermaid.tokens import token_count
from tests.conftest import FIXTURE_ROOTS

from . import reference
from .cases import TEMPLATES, WJ, Case, all_canvases, as_typed, file_name, op_cases

WRITTEN = [c for c in op_cases() if c.result is not None]
TYPED = [c for c in WRITTEN if c.field is not None]
FORGED_KEY = re.compile(r"(status|summary):|timestamp\s*[:：]", re.IGNORECASE | re.ASCII)
HISTORY_CLASS = re.compile(r"class\s+[\w,-]+\s+(done|doing|todo)", re.ASCII)


def prefix_of(case: Case) -> str:
    return file_name(case.canvas).split("-", 1)[0]


def typed_segment(case: Case) -> str:
    """The raw text the edit wrote for the typed field (a label segment, edge label or value)."""
    assert case.result is not None
    doc = parse(case.result.text)
    if case.field == "taskGoal":
        return reference.goal(case.result.text) or ""
    if case.field == "edge_label":
        source, target = (case.node or "").split(">")
        return next(e.label or "" for e in doc.edges if (e.source, e.target) == (source, target))
    segments = re.split(r"<br/>", doc.nodes[case.node or ""].label_raw)
    if case.field in ("title", "merge"):
        return segments[0]
    key = {"note": "note: ", "summary": "summary: ", "status": "status: "}[case.field or ""]
    return next(s[len(key) :] for s in segments if s.startswith(key))


def read_back(case: Case) -> str:
    """The typed field as the engine's parser reads it back (what the panel shows)."""
    assert case.result is not None
    doc = parse(case.result.text)
    if case.field == "taskGoal":
        return doc.meta.task_goal
    if case.field == "edge_label":
        return agent_view_display(typed_segment(case))
    fields = doc.nodes[case.node or ""].fields
    if case.field == "note":
        return fields.extra.get("note", "")
    if case.field in ("title", "merge"):
        return fields.title
    if case.field == "summary":
        return fields.summary or ""
    return fields.status or ""


def agent_view_display(written: str) -> str:
    from canvases.mermaid.human_text import human_text_display

    return human_text_display(written)


def expected(case: Case) -> str:
    typed = as_typed(case.typed or "")
    if case.field == "status" and typed.lower() in ("done", "doing", "todo", "paused", "blocked"):
        return typed.lower()
    return typed


def test_the_suite_covers_every_op_and_field():
    assert {c.op for c in WRITTEN} >= {
        "annotate", "edit_title", "edit_summary", "set_status", "set_meta", "add_edge",
        "merge_label", "merge", "prune", "remove_edge", "agent_meta", "repair",
    }  # fmt: skip
    assert len(TYPED) > 600
    assert len(reference.index_ids("".join(c.typed or "" for c in TYPED))) > 100  # hostile ids


def test_only_documented_refusals():
    refused = Counter(c.error.split(" (")[0] for c in op_cases() if c.result is None)
    assert set(refused) <= {
        "a status is one short word",
        "the agent already reads this canvas's metadata from line 1",
    }, refused


# ---------------------------------------------------------------------------------------------
# §4.8.1 the injected block


def test_rule_4_8_1_the_preview_is_the_injected_block_byte_for_byte():
    checked = 0
    for name, text in all_canvases().items():
        assert agent_view.injected_block(file_name(name), text) == reference.block(
            file_name(name), text
        ), name
        checked += 1
    for case in WRITTEN:
        assert case.result is not None
        name, text = file_name(case.canvas), case.result.text
        block = agent_view.injected_block(name, text)
        assert block is not None and block == reference.block(name, text), (case.canvas, case.op)
        checked += 1
    assert checked > 800


def test_rule_4_8_1_block_size_in_characters_and_tokens():
    text = all_canvases()["fixture-a-upstream/002-migrate-orders-api.mmd"]
    preview = agent_view.block_preview("002-migrate-orders-api.mmd", text)
    assert preview is not None and preview.text == reference.block(
        "002-migrate-orders-api.mmd", text
    )
    assert preview.chars == len(preview.text)
    assert preview.js_length == reference.fingerprint(preview.text)[0]
    assert preview.tokens == token_count(preview.text)
    assert len(preview.text) // 4 < preview.tokens < len(preview.text)  # CJK-heavy text
    assert agent_view.block_preview("x.mmd", "") is None  # the plugin injects nothing for ""


@pytest.mark.parametrize(
    ("header", "goal"),
    [
        ('%%{ "taskGoal": "g", "progress": "5" }%%', "g"),
        ('%%{"taskGoal":"g"}%%', "g"),
        ('%%{ "taskGoal": "" }%%', None),
        ('%%{ "progress": 5 }%%', None),
        ("%%{ }%%", None),
        ('%%{ "taskGoal": 7 }%%', "7"),
        ('%%{ "taskGoal": "a }%% b" }%%', None),  # the first `}%%` ends the capture
        ("%%{ taskGoal: g }%%", None),  # loose: unquoted key
        ('%%{ "taskGoal": "g", "progress（0-100）": "1", createdTime": "t" }%%', None),
        ('%{ "taskGoal": "g" }%', None),
        ("%% taskGoal: g", None),
        ('\ufeff%%{ "taskGoal": "g" }%%', None),
        (' %%{ "taskGoal": "g" }%%', None),
        ('%%{ "taskGoal": NaN }%%', None),
        ('%%{\n"taskGoal": "g"\n}%%', "g"),  # spec §4.2: one member wrapped on its own line
    ],
)
def test_rule_4_8_1_the_goal_comes_only_from_a_strict_json_line_one(header, goal):
    text = f'{header}\nflowchart TD\n    001-N1["x"]'
    assert reference.goal(text) == goal
    assert agent_view.read_meta(text).task_goal == goal
    assert agent_view.injected_block("001-x.mmd", text) == reference.block("001-x.mmd", text)
    moved = f'flowchart TD\n{header}\n    001-N1["x"]'  # the same header on line 2: never read
    assert agent_view.read_meta(moved).task_goal is None and reference.goal(moved) is None


def test_rule_4_8_1_a_typed_goal_is_what_the_agent_reads():
    cases = [c for c in TYPED if c.field == "taskGoal"]
    assert len(cases) > 100
    for case in cases:
        assert case.result is not None
        goal = reference.goal(case.result.text)
        typed = as_typed(case.typed or "")
        assert (goal or "").replace(WJ, "") == typed, (case.canvas, case.typed)
        assert parse(case.result.text).meta.task_goal == typed


def test_rule_4_8_1_the_node_index_line_follows_the_agents_pattern():
    for case in WRITTEN:
        assert case.result is not None
        text = case.result.text
        assert agent_view.node_index_shown(text) == bool(reference.index_ids(text))
    no_ids = 'flowchart TD\n    a1["b"]'
    with_goal = edits.set_meta(no_ids, taskGoal="fix N7 before 001-N3").text
    assert not agent_view.node_index_shown(with_goal) and not reference.index_ids(with_goal)


# ---------------------------------------------------------------------------------------------
# §4.8.2 id-like tokens


def test_rule_4_8_2_no_id_like_token_survives_in_human_text():
    for case in TYPED:
        written = typed_segment(case)
        assert reference.index_ids(written) == [], (case.canvas, case.op, written)
        assert reference.map_ids(written) == []


def test_rule_4_8_2_an_edit_adds_no_id_the_agent_would_count():
    for case in WRITTEN:
        assert case.result is not None
        after = Counter(reference.index_ids(case.result.text))
        new = after - Counter(reference.index_ids(case.before))
        # what the pattern reads out of the ids themselves (`N1` in `pondr-N1`)
        id_tokens = {t for n in parse(case.result.text).nodes for t in reference.index_ids(n)}
        assert set(new) <= id_tokens, (case.canvas, case.op, new)


def test_rule_4_8_2_the_map_builder_fallback_never_lands_on_human_text():
    for case in WRITTEN:
        assert case.result is not None
        text, prefix = case.result.text, prefix_of(case)
        chosen = reference.fallback(text, prefix)
        assert agent_view.fallback_node(text, prefix) == chosen
        assert (
            chosen is None
            or chosen in parse(text).nodes
            or chosen in reference.map_ids(case.before)
        )


def test_rule_4_8_2_an_annotation_naming_a_node_does_not_receive_rows():
    """The spec's example: a note mentioning 001-N7 in a canvas whose highest node is 001-N3."""
    text = all_canvases()["fixture-a-upstream/001-fix-login-timeout.mmd"]
    noted = edits.annotate(text, "001-N2", "same bug as 001-N7 and N9").text
    assert reference.fallback(noted, "001") == "001-N3"
    assert parse(noted).nodes["001-N2"].fields.extra["note"] == "same bug as 001-N7 and N9"


# ---------------------------------------------------------------------------------------------
# §4.8.3 `%%`, entity codes, field keys


def written_lines(case: Case) -> list[str]:
    assert case.result is not None
    return [
        line[1:]
        for line in case.result.diff.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]


def test_rule_4_8_3_no_percent_pair_in_any_label_memviz_writes():
    for case in WRITTEN:
        for line in written_lines(case):
            if line.startswith("%%{ ") and line.endswith(" }%%"):
                assert line.find("}%%") == len(line) - 3, (case.canvas, case.op, line)
                continue
            assert "%%" not in line, (case.canvas, case.op, line)


def test_rule_4_8_3_human_text_forges_no_field_key_or_segment():
    for case in TYPED:
        written = typed_segment(case)
        assert not FORGED_KEY.search(written), (case.canvas, case.op, written)
        assert not HISTORY_CLASS.search(written)
        if case.field != "taskGoal":
            assert "<br" not in written.lower() and '"' not in written
            assert not written.startswith("`")


def test_rule_4_8_3_the_agents_status_counts_see_only_real_status_fields():
    count = re.compile(r"status:\s*(done|doing|todo)", re.IGNORECASE | re.ASCII)
    for case in TYPED:
        assert case.result is not None
        doc = parse(case.result.text)
        real = Counter(
            n.fields.status
            for n in doc.nodes.values()
            if n.fields.status in ("done", "doing", "todo")
        )
        agent = Counter(m.lower() for m in count.findall(case.result.text))
        assert agent == real, (case.canvas, case.op)
        assert agent_view.l15_view(case.result.text).counts == {
            k: agent[k] for k in ("done", "doing", "todo")
        }


def test_rule_4_8_3_typed_text_reads_back_as_typed():
    for case in TYPED:
        assert read_back(case) == expected(case), (case.canvas, case.op, case.typed)


def test_rule_4_8_3_a_directive_in_a_summary_is_refused_before_writing():
    """The engine's parser is the one verdict: a label holding `%%{` is an error, and an edit
    that would write one raises (the ops API answers 400 with the message)."""
    text = all_canvases()["fixture-a-upstream/001-fix-login-timeout.mmd"]
    broken = text.replace("summary: TTL", "summary: %%{init: {}}%% TTL", 1)
    assert any("directive" in p.message and p.severity == "error" for p in parse(broken).problems)
    assert not parse(edits.edit_label(text, "001-N2", summary="%%{init: {}}%% x").text).has_errors
    # the check every edit runs on the lines it wrote, before anything is written
    with pytest.raises(edits.EditError, match="directive"):
        edits._check_written_lines(['    001-N2["a<br/>summary: %%{init: {}}%% b"]'])
    # an edit of a node whose label already holds one writes it broken (and mermaid renders it)
    fixed = edits.annotate(broken, "001-N2", "checked").text
    assert not parse(fixed).has_errors and "%%" not in fixed.split("\n", 2)[2]


# ---------------------------------------------------------------------------------------------
# §4.8.4 empty shells


def test_rule_4_8_4_every_written_canvas_has_a_strict_line_one_and_is_no_empty_shell():
    for case in WRITTEN:
        assert case.result is not None
        text = case.result.text
        assert reference.strict_line_one(text), (case.canvas, case.op, text[:80])
        assert not reference.empty_shell(text)
        assert agent_view.read_meta(text).on_line_one and not agent_view.is_empty_shell(text)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_rule_4_8_4_an_annotated_template_is_kept_by_the_agent(name):
    text = TEMPLATES[name]
    assert reference.empty_shell(text) and agent_view.is_empty_shell(text)
    result = edits.annotate(text, "017-N1", "keep this")
    assert not reference.empty_shell(result.text)
    assert result.text == '%%{ "taskGoal": "" }%%\n' + text.replace(
        'task"]', 'task<br/>note: keep this"]'
    )
    assert "added a metadata line 1" in result.notes[0]


def test_rule_4_8_4_repair_output_is_no_empty_shell():
    [case] = [c for c in WRITTEN if c.op == "repair"]
    assert case.result is not None and reference.strict_line_one(case.result.text)
    one_line = '%%{ "taskGoal": "t" }%%\\nflowchart TD\\n    001-N1["x"]'  # two lines once repaired
    repaired = edits.repair_oneliner(one_line).text
    assert reference.strict_line_one(repaired) and not reference.empty_shell(repaired)


def test_rule_4_8_4_conversion_keeps_every_value():
    for name, text in all_canvases().items():
        doc = parse(text)
        if doc.is_escaped_oneliner or doc.has_errors or agent_view.read_meta(text).on_line_one:
            continue
        result = edits.agent_meta(text)
        meta = reference.meta_object(result.text)
        assert meta is not None and result.notes, name
        renamed = {"task_goal": "taskGoal", "goal": "taskGoal"}
        kept = {renamed.get(k, k): v for k, v in doc.meta.values.items()}
        assert meta == (kept or {"taskGoal": ""}), name  # no header at all: an empty goal
        body_before = [line for line in text.split("\n") if not line.lstrip().startswith("%")]
        body_after = [line for line in result.text.split("\n") if not line.lstrip().startswith("%")]
        assert body_after == body_before, name  # everything else byte for byte


# ---------------------------------------------------------------------------------------------
# §4.8.6 change detection, §4.8.7 resume, §4.8.8 the map-builder's line numbers


def test_rule_4_8_6_the_change_detector_is_the_agents_fingerprint():
    for case in WRITTEN:
        assert case.result is not None
        length, head = reference.fingerprint(case.result.text)
        assert agent_view.fingerprint(case.result.text) == f"{length}:{head}"
    text = sample_canvas(60, prefix="019", seed=5)
    node = next(n for n in reversed(parse(text).nodes.values()) if n.fields.status == "done")
    quiet = edits.set_status(text, node.id, "todo").text  # same length, same first 64 chars
    assert not agent_view.visible_at_next_tool_call(text, quiet)
    assert agent_view.visible_at_next_tool_call(text, edits.annotate(text, node.id, "x").text)


def test_rule_4_8_7_a_minimal_state_is_what_the_agent_loads(tmp_path: Path):
    agent = tmp_path / "coder"
    (agent / "mmds").mkdir(parents=True)
    for mmd in (FIXTURE_ROOTS / "fixture-b-wild" / "coder" / "mmds").glob("*.mmd"):
        (agent / "mmds" / mmd.name).write_bytes(mmd.read_bytes())
    create_minimal_state(agent, "004-修复CI缓存.mmd")
    raw = (agent / "state.json").read_text(encoding="utf-8")
    defaults = {"activeMmdFile": None, "activeMmdId": None, "mmdCounter": 0}
    loaded = defaults | json.loads(raw)  # the plugin: defaults merged with the parsed object
    assert loaded["activeMmdFile"] == "004-修复CI缓存.mmd" and loaded["activeMmdId"] == "修复CI缓存"
    assert raw == json.dumps(json.loads(raw), ensure_ascii=False, indent=2)  # 2-space, no final \n
    assert not raw.startswith("\ufeff") and not raw.endswith("\n")


def test_rule_4_8_8_label_edits_keep_every_line_number():
    """A map-builder reply in flight splices by line number: an edit of one label on a canvas
    that already has its strict header moves no other line."""
    for case in TYPED:
        assert case.result is not None
        if case.op not in ("annotate", "edit_title", "edit_summary", "set_meta"):
            continue
        if not agent_view.read_meta(case.before).on_line_one:
            continue
        before, after = case.before.split("\n"), case.result.text.split("\n")
        assert len(before) == len(after), (case.canvas, case.op)
        assert sum(a != b for a, b in zip(before, after, strict=True)) == 1


def test_human_text_is_idempotent_on_what_it_wrote():
    from canvases.mermaid.human_text import human_text_display

    for case in TYPED:
        written = typed_segment(case)
        if case.field == "taskGoal":  # JSON carries quotes and entities as they are
            assert human_text(written.replace(WJ, ""), "meta") == written
            continue
        context: Context = "edge_label" if case.field == "edge_label" else "label"
        assert human_text(human_text_display(written), context) == written, (case.op, written)


def test_rules_4_8_2_and_4_8_3_hold_for_merged_text_the_agent_wrote():
    """Merging combines titles and summaries that were never typed in memviz: they are written
    through the same function, so the merged label breaks what the originals did not."""
    text = (
        '%%{ "taskGoal": "g" }%%\nflowchart TD\n'
        '    020-N1["修复: see 020-N9 and N4<br/>status: done<br/>summary: 100%% ok, class a done'
        '<br/>Timestamp: 2026-07-01T10:00:00+08:00"]\n'
        '    020-N2["修复: retry timestamp: soon<br/>status: doing<br/>summary: `x` and 021-N3"]\n'
        "    020-N1 --> 020-N2\n"
    )
    result = edits.merge(text, ["020-N1", "020-N2"])
    line = next(x for x in result.text.split("\n") if x.lstrip().startswith("020-N1["))
    label = line[line.index('["') + 2 : line.rindex('"]')]
    assert reference.index_ids(label) == [] and "%%" not in label
    assert not HISTORY_CLASS.search(label)
    assert [m.lower() for m in re.findall(r"(?i)status:\s*(\w+)", label)] == ["doing"]
    fields = parse(result.text).nodes["020-N1"].fields
    assert fields.title == "修复: see 020-N9 and N4 + retry timestamp: soon"
    assert fields.summary == "100%% ok, class a done; `x` and 021-N3"
    assert reference.fallback(result.text, "020") == "020-N1"


def test_rule_4_8_8_a_stale_map_builder_patch_is_detected():
    """The map-builder took its snapshot before the edit; its reply lands on the edited file."""
    text = all_canvases()["fixture-a-upstream/002-migrate-orders-api.mmd"]
    lines = text.split("\n")
    status_line = next(i for i, x in enumerate(lines) if x.lstrip().startswith("002-N5[")) + 1
    stale = lines[status_line - 1].replace("status: doing", "status: done")  # from its snapshot
    edited = edits.annotate(text, "002-N5", "keep the Decimal quantize")
    landed = reference.patch_mmd(edited.text, [(status_line, status_line, stale)])
    assert not edits.edit_survives(edited, landed)  # the note is gone: say so, offer re-apply
    other = edits.annotate(text, "002-N2", "verified by hand")  # a different line: it survives
    assert edits.edit_survives(
        other, reference.patch_mmd(other.text, [(status_line, status_line, stale)])
    )
    assert edits.edit_survives(edited, edited.text)
    rewritten = text.replace("仍经 float 中转", "改用 Decimal")  # a write-mode reply: whole file
    assert not edits.edit_survives(edited, rewritten)


def test_rule_4_8_8_the_first_write_of_a_comment_header_shifts_lines():
    """Converting the header moves every later line, so a reply in flight lands off by the shift
    on a line that is not the one it meant (here: a second 004-N3 definition): the conversion is
    the one write that should wait until the map-builder's window has passed."""
    text = all_canvases()["fixture-b-wild/004-修复CI缓存.mmd"]
    lines = text.split("\n")
    target = next(i for i, x in enumerate(lines) if x.lstrip().startswith("004-N3")) + 1
    edited = edits.annotate(text, "004-N2", "checked")
    assert len(edited.text.split("\n")) == len(lines) - 3  # four comment lines became one
    stale = lines[target - 1].replace("status: doing", "status: done")
    landed = reference.patch_mmd(edited.text, [(target, target, stale)])
    assert edits.edit_survives(edited, landed)  # the human edit is intact …
    now = landed.split("\n")
    assert now[target - 1] == stale and now[target - 1] != edited.text.split("\n")[target - 1]
    assert sum(line.lstrip().startswith("004-N3") for line in now) == 2  # … but N3 is doubled
