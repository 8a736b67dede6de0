"""The engine's emulation of the agent's readers: JS semantics where they differ from Python's."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from canvases.mermaid import agent_view
from canvases.mermaid.js_semantics import js_json_parse, js_number, js_string, js_trim
from canvases.mermaid.tokens import token_count

BODY = '\nflowchart TD\n    001-N1["x"]'


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (0, "0"),
        (-0.0, "0"),
        (5, "5"),
        (1.0, "1"),
        (1.5, "1.5"),
        (-2.25, "-2.25"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (0.000001, "0.000001"),
        (1.5e-7, "1.5e-7"),
        (123456789012345678901234, "1.2345678901234569e+23"),
        (10**400, "Infinity"),
    ],
)
def test_js_number_is_number_to_string(number, text):
    assert js_number(number) == text


def test_js_number_agrees_with_node_on_many_doubles():
    """node (installed for the front-end assets) prints String(x) for the same doubles."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    rng = random.Random(8)
    numbers = [rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30) for _ in range(400)]
    numbers += [float(rng.randint(-(10**25), 10**25)) for _ in range(100)] + [5e-324, 1.7e308]
    script = "const xs = JSON.parse(require('fs').readFileSync(0, 'utf8')); console.log(JSON.stringify(xs.map(String)))"
    done = subprocess.run(
        [node, "-e", script], input=json.dumps(numbers), capture_output=True, text=True, timeout=60
    )
    assert [js_number(x) for x in numbers] == json.loads(done.stdout)


def test_js_string_and_json_parse_follow_javascript():
    assert js_string([1, None, "a", [2, 3]]) == "1,,a,2,3"
    assert js_string({"a": 1}) == "[object Object]"
    assert js_string(True) == "true"
    with pytest.raises(ValueError):
        js_json_parse('{"a": NaN}')
    huge = js_json_parse('{"a": ' + "9" * 5000 + "}")
    assert isinstance(huge, dict) and huge["a"] == float("inf")  # no digit limit
    assert js_trim("\ufeff x \u3000") == "x"  # JS trim strips a BOM, str.strip does not


@pytest.mark.parametrize(
    ("header", "goal", "problem"),
    [
        ('%%{ "taskGoal": "g" }%%', "g", ""),
        ('%%{ "taskGoal": ["a", 1] }%%', "a,1", ""),
        ('%%{ "taskGoal": 0 }%%', None, ""),
        ('%%{ "taskGoal": {} }%%', "[object Object]", ""),
        ('\ufeff%%{ "taskGoal": "g" }%%', None, "byte-order mark"),
        ('%%{ "taskGoal": "g"', None, "no closing"),
        ('%{ "taskGoal": "g" }%', None, "single percent"),
        ("%% taskGoal: g", None, "comment lines"),
        ('flowchart TD\n%%{ "taskGoal": "g" }%%', None, "not at byte 0"),
        ("flowchart TD", None, "no metadata"),
        ("%%{ taskGoal: g }%%", None, "not strict JSON"),
    ],
)
def test_read_meta_says_what_the_agent_reads_and_why_not(header, goal, problem):
    meta = agent_view.read_meta(header + BODY)
    assert meta.task_goal == goal
    assert problem in str(meta.problem or "") and (meta.readable == (problem == ""))


def test_a_header_wrapped_over_lines_is_read_but_not_strict():
    meta = agent_view.read_meta('%%{\n  "taskGoal": "g"\n}%%' + BODY)
    assert meta.readable and meta.task_goal == "g" and not meta.on_line_one


def test_fallback_node_prefers_the_files_prefix_then_the_highest_number():
    text = 'flowchart TD\n  001-N2 --> 001-N10\n  002-N99["see 003-N500"]\n  x1001-N7'
    assert agent_view.fallback_node(text, "001") == "001-N10"
    assert agent_view.fallback_node(text, "004") == "003-N500"  # no own id: the highest of all
    assert agent_view.fallback_node(text, "1001") == "003-N500"  # a 4-digit prefix filters nothing
    assert agent_view.fallback_node("flowchart TD\n  N3", "001") is None
    assert agent_view.map_prefix("004-修复CI缓存.mmd") == "004"
    assert agent_view.map_prefix("notes.mmd") == "000"


def test_empty_shell_counts_non_empty_lines_of_the_trimmed_text():
    assert agent_view.is_empty_shell('flowchart TD\n    001-N1["x"]\n\n\n    001-N1 --> 001-N2\n')
    assert not agent_view.is_empty_shell("flowchart TD\n  a\n  b\n  c")
    assert not agent_view.is_empty_shell("\ufeff  %%{ }%%\nflowchart TD")
    assert not agent_view.is_empty_shell("")  # readMmd gives "": nothing to delete


def test_fingerprint_counts_utf16_units():
    emoji = "😀" * 40
    assert agent_view.fingerprint(emoji) == f"80:{'😀' * 32}"
    assert agent_view.fingerprint("ab") == "2:ab"


def test_l15_view_reads_the_last_two_rectangle_summaries():
    text = (
        '%%{ "taskGoal": "g", "updatedTime": "t" }%%\nflowchart TD\n'
        '  001-N1["a<br/>status: done<br/>summary: one"]\n'
        '  001-N2("b<br/>status: doing<br/>summary: round is skipped")\n'
        '  001-N3["c<br/>STATUS: Doing<br>summary: runs to the end<br>x"]\n'
        '  001-N4["d<br/>status: todo<br/>summary: four"]'
    )
    view = agent_view.l15_view(text)
    assert (view.task_goal, view.created, view.updated) == ("g", None, "t")
    assert view.counts == {"done": 1, "doing": 2, "todo": 1}
    assert view.last_summaries == [
        ("001-N3", "Doing", "runs to the end<br>x"),
        ("001-N4", "todo", "four"),
    ]


def test_block_and_token_count():
    assert token_count("hello world") == 2  # cl100k_base
    assert token_count("") == 0
    block = agent_view.injected_block("001-a.mmd", 'flowchart TD\n    a1["no ids"]')
    assert block is not None and "**节点索引:**" not in block and "**任务目标:**" not in block
    assert agent_view.injected_block("001-a.mmd", "") is None


def test_agent_warnings():
    assert agent_view.agent_warnings('%%{ "taskGoal": "g" }%%' + BODY) == []
    [goal] = agent_view.agent_warnings('%%{ "taskGoal": "" }%%' + BODY)
    assert "taskGoal is empty" in goal.message
    messages = [p.message for p in agent_view.agent_warnings('flowchart TD\n    001-N1["x"]')]
    assert len(messages) == 2 and "no metadata line" in messages[0]
    assert "deletes this canvas" in messages[1]
