"""Every edit leaves the strict JSON line 1 the agent reads; conversions keep every value."""

from __future__ import annotations

import pytest

from canvases.mermaid import EditError, edits, parse
from canvases.mermaid.agent_view import read_meta

BODY = 'flowchart TD\n    001-N1["a<br/>status: done"]\n    001-N2["b"]\n    001-N1 --> 001-N2\n'


@pytest.mark.parametrize(
    ("before", "header", "note"),
    [
        (
            "%% taskGoal: g\n%% progress: 40\n%% other comment\n" + BODY,
            '%%{ "taskGoal": "g", "progress": "40" }%%',
            "comment lines",
        ),
        (
            "\ufeff%% task_goal: g\n" + BODY,
            '%%{ "taskGoal": "g" }%%',
            "comment lines",
        ),
        (
            "%%{ taskGoal: build api, progress: 40 }%%\n" + BODY,
            '%%{ "taskGoal": "build api", "progress": 40 }%%',
            "loose",
        ),
        (
            '%{ "taskGoal": "go", "progress": "20" }%\n' + BODY,
            '%%{ "taskGoal": "go", "progress": "20" }%%',
            "single percent",
        ),
        (
            '%% a comment\n%%{ "taskGoal": "g" }%%\n' + BODY,
            '%%{ "taskGoal": "g" }%%',
            "not at byte 0",
        ),
        ('\ufeff%%{ "taskGoal": "g" }%%\n' + BODY, '%%{ "taskGoal": "g" }%%', "byte-order mark"),
        ('  %%{ "taskGoal": "g" }%%\n' + BODY, '%%{ "taskGoal": "g" }%%', "not at byte 0"),
        (
            '%%{ "taskGoal": "a }%% b" }%%\n' + BODY,
            '%%{ "taskGoal": "a }\\u0025% b" }%%',
            "not strict JSON",
        ),
        (
            '%%{init: {"theme": "dark"}}%%\n' + BODY,
            '%%{ "taskGoal": "" }%%',
            "added a metadata line",
        ),
        (BODY, '%%{ "taskGoal": "" }%%', "added a metadata line"),
    ],
)
def test_agent_meta_converts_every_form_and_keeps_the_rest(before, header, note):
    result = edits.agent_meta(before)
    lines = result.text.split("\n")
    assert lines[0] == header
    assert note in " ".join(result.notes)
    meta = read_meta(result.text)
    assert meta.on_line_one and meta.values == read_meta(header).values
    old_meta = ("%%{ ", '%%{ "', "%{", "%% task", "%% progress", "\ufeff%%{", "  %%{")
    kept = [line for line in before.lstrip("\ufeff").split("\n") if not line.startswith(old_meta)]
    assert lines[1:] == kept  # every other line, byte for byte
    assert not parse(result.text).has_errors
    with pytest.raises(EditError, match="already reads"):
        edits.agent_meta(result.text)


def test_the_typo_form_of_the_prompt_keeps_its_keys_and_values(fixtures):
    text = fixtures["fixture-b-wild/003-k8s-canary-deploy.mmd"]
    result = edits.annotate(text, "003-N3", "checked")
    assert result.text.split("\n")[0] == (
        '%%{ "taskGoal": "k8s 灰度发布 api 服务 (canary 10% → 100%)", "progress（0-100）": "70", '
        '"createdTime": "2026-06-12T16:40:31.208+08:00", "updatedTime": "2026-06-12T16:58:40.712+08:00" }%%'
    )
    assert read_meta(result.text).task_goal == "k8s 灰度发布 api 服务 (canary 10% → 100%)"
    assert "strict JSON on line 1" in result.notes[0]
    before, after = text.split("\n"), result.text.split("\n")
    assert len(before) == len(after)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == [0, before.index(next(x for x in before if "003-N3[" in x))]


def test_a_header_wrapped_over_lines_becomes_one_line():
    text = '%%{\n  "taskGoal": "g"\n}%%\n' + BODY
    assert read_meta(text).task_goal == "g"
    result = edits.agent_meta(text)
    assert result.text == '%%{ "taskGoal": "g" }%%\n' + BODY
    assert "spanned several lines" in result.notes[0]


def test_a_readable_header_is_left_byte_for_byte():
    text = '%%{"taskGoal":"g",  "x": [1,2]}%%\n' + BODY
    result = edits.set_status(text, "001-N2", "doing")
    assert result.text.split("\n")[0] == text.split("\n")[0] and result.notes == []
    with pytest.raises(EditError, match="already reads"):
        edits.agent_meta(text)


def test_merge_moves_updated_time_into_a_new_header():
    text = BODY.replace('status: done"]', 'status: done<br/>Timestamp: 2026-07-01T10:00:00+08:00"]')
    result = edits.merge(text, ["001-N1", "001-N2"])
    assert read_meta(result.text).values == {
        "taskGoal": "",
        "updatedTime": "2026-07-01T10:00:00+08:00",
    }


def test_repair_output_gets_the_strict_header():
    reply = 'flowchart TD\\n  001-N1[\\"x\\"] --> 001-N2[\\"y\\"]\\n  001-N2 --> 001-N3'
    result = edits.repair_oneliner(reply)
    assert result.text.startswith('%%{ "taskGoal": "" }%%\nflowchart TD\n')
    assert result.notes
