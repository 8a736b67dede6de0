"""canvas_apply_edit on real fixture files: write-back, row remap, conflicts, nothing written on error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from canvases import history, liveness, services
from canvases.mermaid import content_hash, parse
from intake.ingest import ingest_path
from sessions.models import Canvas, Row

pytestmark = pytest.mark.django_db
FILE = "002-migrate-orders-api.mmd"


@pytest.fixture
def setup(fixtures_root: Path):
    ingest_path(fixtures_root / "fixture-a-upstream")
    canvas = Canvas.objects.get(filename=FILE)
    user = User.objects.create_user("alice", password="pw")
    agent_dir = Path(canvas.agent.path)
    return canvas, user, agent_dir


def rows_on_disk(agent_dir: Path) -> list[dict]:
    out = []
    for path in sorted(agent_dir.glob("offload-*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                out.append(json.loads(line))
    return out


def snapshot(agent_dir: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(agent_dir)): p.read_bytes()
        for p in sorted(agent_dir.rglob("*"))
        if p.is_file()
    }


def test_merge_writes_file_and_remaps_rows_everywhere(setup) -> None:
    canvas, user, agent_dir = setup
    before_rows = rows_on_disk(agent_dir)
    n3_ids = {r["tool_call_id"] for r in before_rows if r.get("node_id") == "002-N3"}
    assert n3_ids
    out = services.canvas_apply_edit(
        canvas=canvas,
        op="merge",
        params={"nodes": ["002-N2", "002-N3"], "label": "调研+测试", "status": "done"},
        base_hash=canvas.content_hash,
        user=user,
    )
    on_disk = (agent_dir / "mmds" / FILE).read_text()
    assert content_hash(on_disk) == out.hash
    doc = parse(on_disk)
    assert "002-N3" not in doc.nodes and "002-N2" in doc.nodes
    after_rows = rows_on_disk(agent_dir)
    assert len(after_rows) == len(before_rows)  # nothing deleted or added
    assert [r["tool_call_id"] for r in after_rows] == [r["tool_call_id"] for r in before_rows]
    for before, after in zip(before_rows, after_rows, strict=True):
        assert set(before) == set(after)  # unknown keys kept
        if before["tool_call_id"] in n3_ids:
            assert after["node_id"] == "002-N2"
    assert not Row.objects.filter(node_id="002-N3").exists()
    revision = out.revision
    assert revision.author == "alice" and revision.op == "merge"
    assert revision.remaps["node_map"] == {"002-N3": "002-N2"}
    assert revision.remaps["rows_changed"] == len(n3_ids)
    canvas.refresh_from_db()
    assert canvas.content_hash == out.hash and canvas.node_count == 4


def test_prune_keeps_rows_and_optionally_marks_them_deleted(setup) -> None:
    canvas, user, agent_dir = setup
    out = services.canvas_apply_edit(
        canvas=canvas,
        op="prune",
        params={"node": "002-N4", "bridge": True, "drop_from_context": True},
        base_hash=canvas.content_hash,
        user=user,
    )
    doc = parse(out.text)
    assert "002-N4" not in doc.nodes
    assert any(e.source == "002-N3" and e.target == "002-N5" for e in doc.edges)  # bridged
    n4 = [r for r in rows_on_disk(agent_dir) if r.get("node_id") == "002-N4"]
    assert n4 and all(r["offloaded"] == "deleted" for r in n4)
    assert Row.objects.filter(node_id="002-N4", offloaded="deleted").count() == len(n4)
    # undo restores both the node and the rows' previous offloaded value
    services.canvas_undo(canvas=canvas, user=user)
    assert "002-N4" in parse((agent_dir / "mmds" / FILE).read_text()).nodes
    assert all(
        r.get("offloaded") != "deleted"
        for r in rows_on_disk(agent_dir)
        if r.get("node_id") == "002-N4"
    )


@pytest.mark.parametrize(
    ("op", "params", "message"),
    [
        ("merge", {"nodes": []}, "at least two"),
        ("merge", {"nodes": ["002-N2", "nope"]}, "nope"),
        ("annotate", {"node": "002-N2", "text": "x" * 501}, "limit"),
        ("annotate", {"node": "ghost", "text": "hi"}, "ghost"),
        ("set_status", {"node": "002-N2"}, "status"),
        ("frobnicate", {}, "unknown operation"),
    ],
)
def test_bad_requests_write_nothing(setup, op, params, message) -> None:
    canvas, user, agent_dir = setup
    before = snapshot(agent_dir)
    with pytest.raises(services.EditRefused) as info:
        services.canvas_apply_edit(
            canvas=canvas, op=op, params=params, base_hash=canvas.content_hash, user=user
        )
    assert info.value.status == 400
    assert message in str(info.value)
    assert snapshot(agent_dir) == before
    assert not canvas.revisions.exclude(author="agent").exists()


def test_vanished_file_is_a_clear_error(setup) -> None:
    canvas, user, agent_dir = setup
    (agent_dir / "mmds" / FILE).unlink()
    with pytest.raises(services.EditRefused, match="vanished"):
        services.canvas_apply_edit(
            canvas=canvas,
            op="annotate",
            params={"node": "002-N2", "text": "hi"},
            base_hash=canvas.content_hash,
            user=user,
        )
    assert not (agent_dir / "mmds" / FILE).exists()


def test_conflict_when_edited_node_changed_on_disk(setup) -> None:
    canvas, user, agent_dir = setup
    path = agent_dir / "mmds" / FILE
    base = canvas.content_hash
    agent_text = path.read_text().replace("3 failed", "4 failed")
    path.write_text(agent_text)
    with pytest.raises(services.EditConflict) as info:
        services.canvas_apply_edit(
            canvas=canvas,
            op="annotate",
            params={"node": "002-N3", "text": "hi"},
            base_hash=base,
            user=user,
        )
    assert info.value.status == 409
    assert path.read_text() == agent_text
    # the agent's rewrite is in the history
    assert canvas.revisions.filter(author="agent", op="disk").exists()


def test_clean_reapply_when_other_nodes_changed(setup) -> None:
    canvas, user, agent_dir = setup
    path = agent_dir / "mmds" / FILE
    base = canvas.content_hash
    path.write_text(path.read_text().replace("待全量回归", "全量回归中"))  # only 002-N5
    out = services.canvas_apply_edit(
        canvas=canvas,
        op="annotate",
        params={"node": "002-N2", "text": "see docs/orders-v2.md"},
        base_hash=base,
        user=user,
    )
    assert out.reapplied and out.warnings
    text = path.read_text()
    assert "全量回归中" in text and "note: see docs/orders-v2.md" in text


def test_undo_redo_restore_round_trip(setup) -> None:
    canvas, user, agent_dir = setup
    path = agent_dir / "mmds" / FILE
    original = path.read_bytes()
    rows_original = {p.name: p.read_bytes() for p in agent_dir.glob("offload-*.jsonl")}
    merged = services.canvas_apply_edit(
        canvas=canvas,
        op="merge",
        params={"nodes": ["002-N2", "002-N3"]},
        base_hash=canvas.content_hash,
        user=user,
    )
    services.canvas_undo(canvas=canvas, user=user)
    assert path.read_bytes() == original
    assert {p.name: p.read_bytes() for p in agent_dir.glob("offload-*.jsonl")} == rows_original
    assert Row.objects.filter(node_id="002-N3").exists()
    services.canvas_redo(canvas=canvas, user=user)
    assert path.read_text() == merged.text
    assert not any(r.get("node_id") == "002-N3" for r in rows_on_disk(agent_dir))
    with pytest.raises(services.EditRefused, match="nothing to redo"):
        services.canvas_redo(canvas=canvas, user=user)
    first = canvas.revisions.order_by("number").first()
    canvas.refresh_from_db()
    out = services.canvas_restore(
        canvas=canvas, number=first.number, base_hash=canvas.content_hash, user=user
    )
    assert path.read_bytes() == original
    assert out.revision.op == "restore" and out.revision.number > merged.revision.number


def test_undo_refused_after_agent_rewrite(setup) -> None:
    canvas, user, agent_dir = setup
    services.canvas_apply_edit(
        canvas=canvas,
        op="annotate",
        params={"node": "002-N2", "text": "keep me"},
        base_hash=canvas.content_hash,
        user=user,
    )
    path = agent_dir / "mmds" / FILE
    rewritten = path.read_text().replace("<br/>note: keep me", "")
    path.write_text(rewritten)
    with pytest.raises(services.EditConflict):
        services.canvas_undo(canvas=canvas, user=user)
    assert path.read_text() == rewritten
    canvas.refresh_from_db()
    dropped = history.dropped_edits(canvas)
    assert [d["op"] for d in dropped] == ["annotate"]
    # the rewrite came a moment after the edit: the agent is live, whatever memviz wrote last
    with pytest.raises(services.EditConflict, match="looks live"):
        services.canvas_reapply(canvas=canvas, number=dropped[0]["revision"], user=user)
    services.canvas_reapply(
        canvas=canvas, number=dropped[0]["revision"], user=user, confirm_live=True
    )
    assert "note: keep me" in path.read_text()
    canvas.refresh_from_db()
    assert history.dropped_edits(canvas) == []


def test_adopt_unplaced_rows(setup) -> None:
    canvas, user, agent_dir = setup
    path = next(agent_dir.glob("offload-*.jsonl"))
    with path.open("a") as handle:
        handle.write(json.dumps({"tool_call_id": "call_x", "node_id": "002-N9", "k": 1}) + "\n")
    out = services.canvas_apply_edit(
        canvas=canvas,
        op="adopt",
        params={"from": "002-N9", "node": "002-N5"},
        base_hash=canvas.content_hash,
        user=user,
    )
    assert out.rows_changed == 1
    last = json.loads(path.read_text().splitlines()[-1])
    assert last == {"tool_call_id": "call_x", "node_id": "002-N5", "k": 1}


def test_live_detection(setup) -> None:
    canvas, _user, agent_dir = setup
    assert not liveness.agent_live(canvas.agent).live  # fixture copies keep old mtimes
    (agent_dir / "state.json").touch()
    status = liveness.agent_live(canvas.agent)
    assert status.live and "written" in status.reasons[0]


def test_merges_and_undos_lose_no_concurrent_append(setup, tmp_path: Path, caplog) -> None:
    """A real second process appends rows while merges and undos run through the service."""
    import logging
    import subprocess
    import sys
    import time

    canvas, user, agent_dir = setup
    files = [p.name for p in sorted(agent_dir.glob("offload-*.jsonl"))]
    stop = tmp_path / "stop"
    script = Path(__file__).resolve().parents[1] / "agentfs" / "appender_proc.py"
    proc = subprocess.Popen(
        [sys.executable, str(script), str(agent_dir), str(stop), "1500", *files],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        caplog.set_level(logging.WARNING, logger="agentfs.remap")
        for _round in range(3):  # a fixed count: a loaded machine takes longer, not fewer
            canvas.refresh_from_db()
            services.canvas_apply_edit(
                canvas=canvas,
                op="merge",
                params={"nodes": ["002-N2", "002-N3"]},
                base_hash=canvas.content_hash,
                user=user,
            )
            services.canvas_undo(canvas=canvas, user=user)
            time.sleep(0.2)  # the appender runs between rounds too
        stop.touch()
        counts = json.loads(proc.stdout.readline())
    finally:
        proc.wait(timeout=10)
    for name in files:
        lines = (agent_dir / name).read_bytes().split(b"\n")
        assert lines[-1] == b""  # ends with a complete line
        rows = [json.loads(line) for line in lines[:-1] if line.strip()]  # every line is JSON
        appended = [r for r in rows if str(r.get("tool_call_id", "")).startswith("app-")]
        assert len(appended) == counts[name]
        if not any(r.getMessage().startswith(f"{name}:") for r in caplog.records):
            # in order, unless the remap said it had to re-append late rows (remap.py)
            assert [r["seq"] for r in appended] == sorted(r["seq"] for r in appended)
        assert all(r["x_future"]["flag"] is True for r in appended)  # unknown keys kept
    # the last undo put the merged node's rows back
    assert any(r.get("node_id") == "002-N3" for r in rows_on_disk(agent_dir))
