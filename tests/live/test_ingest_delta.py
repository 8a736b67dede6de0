"""What an ingest reports as changed (the live broadcast's payload), without any websocket."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from intake.ingest import ingest_agent_dir, ingest_path
from memviz.broadcast import delta_messages

pytestmark = pytest.mark.django_db
SID = "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90"


def line(tcid: str, node: str | None = None) -> bytes:
    return (json.dumps({"tool_call_id": tcid, "summary": tcid, "node_id": node}) + "\n").encode()


def test_partial_line_rewrite_and_canvas_deltas(fixtures_root: Path) -> None:
    root = fixtures_root / "fixture-a-upstream"
    agent_dir = root / "main"
    ingest_path(root)
    path = agent_dir / f"offload-{SID}.jsonl"

    with open(path, "ab") as handle:
        handle.write(line("call_x1") + line("call_x2")[:10])
    [delta] = ingest_agent_dir(agent_dir).deltas
    assert delta.new_rows == {SID: ["call_x1"]}

    with open(path, "ab") as handle:
        handle.write(line("call_x2")[10:])
    [delta] = ingest_agent_dir(agent_dir).deltas
    assert delta.new_rows == {SID: ["call_x2"]} and delta.sessions_reread == []

    assert ingest_agent_dir(agent_dir).deltas == []  # nothing changed, nothing read, nothing sent

    # A backfill rewrite (node ids set) plus one new row: re-read, only the new id is news.
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    for r in rows:
        r["node_id"] = r["node_id"] or "001-N2"
    path.write_bytes(b"".join((json.dumps(r) + "\n").encode() for r in rows) + line("call_x3"))
    [delta] = ingest_agent_dir(agent_dir).deltas
    assert delta.sessions_reread == [SID] and delta.new_rows == {SID: ["call_x3"]}

    mmd = agent_dir / "mmds" / "001-fix-login-timeout.mmd"
    mmd.write_text(mmd.read_text() + '\n    001-N9["new<br/>status: todo"]')
    ref = agent_dir / "refs" / "2026-06-15T00-00-00-000p08-00.md"
    ref.write_text("# Tool Result: x")  # no row names it: found as the watcher names it
    [delta] = ingest_agent_dir(agent_dir, changed=[mmd, ref]).deltas
    assert [name for _pk, name, _n in delta.canvases_changed] == ["001-fix-login-timeout.mmd"]
    assert delta.new_refs == ["refs/2026-06-15T00-00-00-000p08-00.md"]
    groups = [group for group, _m in delta_messages(delta)]
    assert groups[0] == f"agent.{delta.agent_pk}" and groups[1].startswith("canvas.")
    canvas_msg = delta_messages(delta)[1][1]
    assert canvas_msg["type"] == "canvas.updated" and canvas_msg["payload"]["author"] == "agent"
