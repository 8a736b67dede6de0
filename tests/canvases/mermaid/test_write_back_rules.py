"""After human edits the agent's own regexes (format spec §4.5) still find what they look for."""

from __future__ import annotations

import json
import re

import pytest

from canvases.mermaid import edits, parse

INJECTOR_IDS = re.compile(r"\b(\d+-N\d+|N\d+)\b")
META_NODE = re.compile(r"(\d{3}-N\d+)\[\"([^\"]*?)\"\]")
STATUS = re.compile(r"status:\s*(\w+)")
SUMMARY = re.compile(r"summary:\s*(.+?)(?:<br\/>|$)")


def field(pattern: re.Pattern[str], label: str) -> str:
    """The field ``pattern`` captures in a node's label; fails if the label has none."""
    found = pattern.search(label)
    assert found is not None, (pattern.pattern, label)
    return found.group(1)
PLUGIN_META = re.compile(r"^%%\{\s*(.*?)\s*\}%%")


def plugin_meta(text: str) -> dict:
    """What `parseMmdMeta` reads: the whole-file match, wrapped in braces, JSON.parse."""
    match = PLUGIN_META.match(text)
    assert match, "the metadata is not at byte 0 of line 1"
    return json.loads("{" + match.group(1) + "}")


def agent_nodes(text: str) -> dict[str, str]:
    return dict(META_NODE.findall(text))


def human_session(text: str) -> str:
    """A curator's afternoon: statuses, notes with hostile text, labels, a merge, a prune."""
    text = edits.set_status(text, "002-N5", "done").text
    text = edits.annotate(text, "002-N5", 'status: blocked "really" <br/> summary: fake]').text
    text = edits.edit_label(text, "002-N2", title="调研: v2 规范", summary='金额用 "Decimal"').text
    text = edits.merge(text, ["002-N2", "002-N3"]).text
    text = edits.prune(text, "002-N4").text
    text = edits.add_edge(text, "002-N1", "002-N5", label="直接实现").text
    text = edits.set_meta(text, taskGoal='迁移 "orders" }%% v2', progress=90).text
    return text


def test_agent_regexes_after_a_human_session(fixtures):
    before = fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"]
    after = human_session(before)
    meta = plugin_meta(after)
    assert meta["taskGoal"] == '迁移 "orders" }%\u2060% v2'  # no `}%%` ends the line early
    assert parse(after).meta.task_goal == '迁移 "orders" }%% v2'  # reads as typed
    assert meta["progress"] == "90"
    assert set(INJECTOR_IDS.findall(after)) == {"002-N1", "002-N2", "002-N5"}
    nodes = agent_nodes(after)
    assert set(nodes) == {"002-N1", "002-N2", "002-N5"}
    assert field(STATUS, nodes["002-N5"]) == "done"
    assert field(STATUS, nodes["002-N2"]) == "done"
    assert (
        field(SUMMARY, nodes["002-N2"])
        == "金额用 #quot;Decimal#quot;; 3 failed — 0.1+0.2 float 精度"
    )
    assert field(SUMMARY, nodes["002-N5"]).startswith("to_money()")
    # the file-wide status counts L1.5 makes see only real status fields
    assert re.findall(r"status:\s*(\w+)", after) == ["done", "done"]
    assert after.split("\n")[1] == "flowchart TD"
    assert "\r" not in after and not after.startswith("\ufeff")
    doc = parse(after)
    assert not doc.problems
    assert (
        doc.nodes["002-N5"].fields.extra["note"] == 'status: blocked "really" <br/> summary: fake]'
    )


@pytest.mark.parametrize(
    "name",
    [
        "fixture-a-upstream/001-fix-login-timeout.mmd",
        "fixture-c-enhanced/001-etl-memory-error.mmd",
        "fixture-c-enhanced/002-etl-chunked-rewrite.mmd",
    ],
)
def test_every_edit_keeps_the_metadata_line_and_ids(fixtures, name):
    text = fixtures[name]
    doc = parse(text)
    ids = list(doc.nodes)
    own = [i for i in ids if re.fullmatch(r"\d{3}-N\d+", i) and doc.nodes[i].shape == "rect"]
    results = [
        edits.set_status(text, own[-1], "doing"),
        edits.annotate(text, own[-1], "check me"),
        edits.edit_label(text, own[-1], summary="new summary"),
        edits.merge(text, own[-2:]),
        edits.prune(text, own[-1]),
        edits.add_edge(text, own[0], own[-1])
        if (own[0], own[-1]) not in {(e.source, e.target) for e in doc.edges}
        else edits.remove_edge(text, own[0], own[1]),
        edits.set_meta(text, progress=77),
    ]
    for result in results:
        meta = plugin_meta(result.text)
        assert meta["taskGoal"] == doc.meta.task_goal
        assert result.text.split("\n")[1] == "flowchart TD"
        assert INJECTOR_IDS.findall(result.text)
        for node_id, label in agent_nodes(result.text).items():
            node = parse(result.text).nodes[node_id]
            if node.fields.status:
                assert field(STATUS, label) == node.fields.status
            if node.fields.summary:
                assert field(SUMMARY, label) == node.fields.summary.replace('"', "#quot;")


def test_merge_writes_a_rectangle_with_br_separators(fixtures):
    text = fixtures["fixture-b-wild/003-k8s-canary-deploy.mmd"]
    result = edits.merge(text, ["003-N3", "003-N4"])
    label = agent_nodes(result.text)["003-N3"]
    assert label.count("<br/>") == 3 and "<br>" not in label
    assert field(STATUS, label) == "blocked"
    assert field(SUMMARY, label).startswith("readinessProbe")


def test_merge_updates_updated_time_to_the_newest_timestamp(fixtures):
    text = fixtures["fixture-a-upstream/002-migrate-orders-api.mmd"].replace(
        '"updatedTime": "2026-06-11T14:15:30.004+08:00"',
        '"updatedTime": "2026-06-10T00:00:00.000+08:00"',
    )
    result = edits.merge(text, ["002-N4", "002-N5"])
    assert plugin_meta(result.text)["updatedTime"] == "2026-06-11T14:15:30.004+08:00"
