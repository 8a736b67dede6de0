"""Ingest of the spec's example roots: counts, tolerance, incremental re-ingest, slugs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from django.core.management import call_command

from canvases.models import Revision
from intake.ingest import ingest_path
from sessions.models import Agent, AgentSession, Canvas, Ref, Row

pytestmark = pytest.mark.django_db


def test_fixture_a_counts_and_compression(fixtures_root: Path) -> None:
    report = ingest_path(fixtures_root / "fixture-a-upstream")
    agent = Agent.objects.get(slug="main")
    assert report.agents == ["main"]
    assert agent.sessions_count == 2
    assert agent.rows_count == 9
    assert agent.unmapped_count == 1  # toolu_01E5… is still null
    assert agent.canvases_count == 2
    assert agent.refs_count == 9
    assert agent.active_mmd_file == "002-migrate-orders-api.mmd"
    assert agent.refs_bytes > agent.summary_bytes > 0
    sizes = {s.session_id: s.rows_count for s in AgentSession.objects.filter(agent=agent)}
    assert sizes == {
        "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90": 4,
        "b7e4d2a0-1c9f-4e63-a8d5-2f0c7b9e6d14": 5,
    }
    session = AgentSession.objects.get(session_id="3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90")
    assert session.session_key == "agent:main:main"
    canvas = Canvas.objects.get(agent=agent, filename="002-migrate-orders-api.mmd")
    assert canvas.task_goal.startswith("把 orders API 迁移到 v2")
    assert canvas.progress == 55
    assert canvas.node_count == 5
    assert canvas.status_counts == {"done": 2, "blocked": 1, "doing": 1}


def test_fixture_b_tolerates_corrupt_invalid_and_partial_lines(fixtures_root: Path) -> None:
    ingest_path(fixtures_root / "fixture-b-wild")
    agent = Agent.objects.get(slug="coder")
    main = AgentSession.objects.get(agent=agent, session_id="main")
    assert main.rows_count == 5
    kinds = sorted(p["kind"] for p in main.problems)
    assert "invalid" in kinds  # the heartbeat row without tool_call_id
    assert {"corrupt", "partial"} & set(kinds)  # the truncated last line
    invalid = next(p for p in main.problems if p["kind"] == "invalid")
    assert invalid["line_no"] == 6
    assert agent.problems_count >= 2
    # unknown keys survive in the index; odd values are kept
    wait_row = Row.objects.get(agent=agent, node_id="wait")
    assert wait_row.score == 0
    deleted = Row.objects.filter(agent=agent, offloaded="deleted")
    assert deleted.count() == 1
    # state.json's unknown key is kept
    assert agent.state_data["reviewedBy"] == "ops-console"


def test_fixture_c_enhanced_ignores_dotfiles_and_boundaries(fixtures_root: Path) -> None:
    ingest_path(fixtures_root / "fixture-c-enhanced")
    agent = Agent.objects.get(name="main")
    assert agent.sessions_count == 2
    assert agent.rows_count == 6
    assert set(AgentSession.objects.filter(agent=agent).values_list("session_id", flat=True)) == {
        "1a2b3c4d-5e6f-4a8b-9c0d-ef1234567890",
        "9c8b7a65-4321-4fed-8cba-0123456789ab",
    }
    seq_row = Row.objects.get(tool_call_id="call_01_Rs8Tu2Vw6X")
    assert seq_row.extra == {"seq": 1}
    assert Row.objects.get(tool_call_id="call_02_Yz9Ab3Cd7E").score is None
    assert Ref.objects.filter(agent=agent).count() == 6


def test_reingest_of_unchanged_root_reads_nothing(fixtures_root: Path) -> None:
    root = fixtures_root / "fixture-a-upstream"
    first = ingest_path(root)
    second = ingest_path(root)
    assert first.rows_added == 9
    assert second.rows_added == 0
    assert second.files_read == 0
    assert second.files_skipped == 2
    assert second.canvases_changed == 0
    assert second.refs_indexed == 0
    assert Row.objects.count() == 9


def test_appended_rows_are_read_from_the_last_offset(fixtures_root: Path) -> None:
    agent_dir = fixtures_root / "fixture-a-upstream" / "main"
    ingest_path(agent_dir)
    jsonl = agent_dir / "offload-3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90.jsonl"
    row = {
        "tool_call_id": "call_new",
        "tool_call": "exec: ls",
        "summary": "new",
        "score": 3,
        "node_id": None,
        "custom": {"x": 1},
    }
    with open(jsonl, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
    report = ingest_path(agent_dir)
    assert report.rows_added == 1
    assert report.sessions_reread == 0
    added = Row.objects.get(tool_call_id="call_new")
    assert added.line_no == 5
    assert added.extra == {"custom": {"x": 1}}
    assert Row.objects.filter(session=added.session).count() == 5


def test_rewritten_file_is_reread_not_appended(fixtures_root: Path) -> None:
    agent_dir = fixtures_root / "fixture-a-upstream" / "main"
    ingest_path(agent_dir)
    jsonl = agent_dir / "offload-b7e4d2a0-1c9f-4e63-a8d5-2f0c7b9e6d14.jsonl"
    # the plugin's L2 backfill: the null row gets a node id, the file is rewritten whole
    text = jsonl.read_text(encoding="utf-8").replace('"node_id":null', '"node_id":"002-N5"')
    jsonl.write_text(text + json.dumps({"tool_call_id": "t9", "node_id": None}) + "\n", "utf-8")
    report = ingest_path(agent_dir)
    assert report.sessions_reread == 1
    rows = Row.objects.filter(session__session_id="b7e4d2a0-1c9f-4e63-a8d5-2f0c7b9e6d14")
    assert rows.count() == 6
    assert rows.get(tool_call_id="toolu_01E5bOu7ZfS3qX6tPg2hAi8V").node_id == "002-N5"


def test_canvas_changed_on_disk_becomes_an_agent_revision(fixtures_root: Path) -> None:
    agent_dir = fixtures_root / "fixture-a-upstream" / "main"
    ingest_path(agent_dir)
    mmd = agent_dir / "mmds" / "001-fix-login-timeout.mmd"
    mmd.write_text(mmd.read_text(encoding="utf-8") + "\n    001-N3 --> 001-N1\n", "utf-8")
    ingest_path(agent_dir)
    canvas = Canvas.objects.get(filename="001-fix-login-timeout.mmd")
    revisions = list(Revision.objects.filter(canvas=canvas).order_by("number"))
    assert [r.op for r in revisions] == ["imported", "disk"]
    assert revisions[-1].author == "agent"
    assert "001-N3 --> 001-N1" in revisions[-1].after_text
    assert canvas.edge_count == 3


def test_same_agent_name_in_two_roots_gets_a_stable_distinct_slug(fixtures_root: Path) -> None:
    ingest_path(fixtures_root / "fixture-a-upstream")
    ingest_path(fixtures_root / "fixture-c-enhanced")
    slugs = sorted(Agent.objects.values_list("slug", flat=True))
    assert slugs[0] == "main"
    assert slugs[1].startswith("main--") and len(slugs[1]) == len("main--") + 6
    # stable: ingesting again keeps both slugs
    ingest_path(fixtures_root / "fixture-c-enhanced")
    ingest_path(fixtures_root / "fixture-a-upstream")
    assert sorted(Agent.objects.values_list("slug", flat=True)) == slugs


def test_invalid_utf8_and_corrupt_state_are_not_fatal(fixtures_root: Path) -> None:
    agent_dir = fixtures_root / "fixture-a-upstream" / "main"
    (agent_dir / "state.json").write_bytes(b"\xef\xbb\xbf{not json")
    with open(agent_dir / "offload-3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90.jsonl", "ab") as handle:
        handle.write(b'{"tool_call_id":"bad-bytes","summary":"caf\xe9 \xff"}\n')
    ingest_path(agent_dir)
    agent = Agent.objects.get(slug="main")
    assert agent.state_error
    assert agent.active_mmd_file == ""
    assert "\ufffd" in Row.objects.get(tool_call_id="bad-bytes").summary


def test_ingest_command_prints_progress_and_summary(fixtures_root: Path, capsys) -> None:
    call_command("ingest", str(fixtures_root / "fixture-b-wild"))
    captured = capsys.readouterr()
    assert "100%" in captured.err
    assert "ingested 1 agents: 8 rows added" in captured.out


def test_agent_without_mmds_or_registry(tmp_path: Path) -> None:
    agent_dir = tmp_path / "root" / "bare"
    agent_dir.mkdir(parents=True)
    (agent_dir / "offload-s1.jsonl").write_text('{"tool_call_id":"a","node_id":null}\n', "utf-8")
    ingest_path(tmp_path / "root")
    agent = Agent.objects.get(slug="bare")
    assert agent.rows_count == 1 and agent.canvases_count == 0
    assert os.path.isdir(agent.path)


def test_nul_characters_in_tool_output_are_indexed_on_every_database(tmp_path: Path) -> None:
    agent_dir = tmp_path / "root" / "nul"
    (agent_dir / "refs").mkdir(parents=True)
    (agent_dir / "mmds").mkdir()
    row = {"tool_call_id": "c\u0000", "summary": "bin\u0000ary", "odd": {"k\u0000": ["v\u0000"]}}
    (agent_dir / "offload-s.jsonl").write_text(json.dumps(row) + "\n", "utf-8")
    (agent_dir / "refs" / "r.md").write_bytes(b"# Tool Result: ex\x00ec\n\n**Result:**\n```\n\x00\n```")
    (agent_dir / "mmds" / "001-n.mmd").write_bytes(b'flowchart TD\n  001-N1["a\x00b<br/>status: done"]\n')
    ingest_path(tmp_path / "root")
    stored = Row.objects.get(agent__slug="nul")
    assert stored.summary == "bin\ufffdary"
    assert stored.extra == {"odd": {"k\ufffd": ["v\ufffd"]}}
    assert Canvas.objects.get(filename="001-n.mmd").node_count == 1
    # the files themselves are untouched
    assert b"\x00" in (agent_dir / "mmds" / "001-n.mmd").read_bytes()
