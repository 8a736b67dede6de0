"""The write path on real files: exact undo with duplicate ids, a full disk, a read-only or
forbidden folder, a database that refuses the commit, and a change left half done."""

from __future__ import annotations

import contextlib
import errno
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import DatabaseError
from django.test import Client

from agentfs import journal
from agentfs.atomic import TEMP_MARKER
from canvases import services, write_path
from canvases.mermaid import parse
from canvases.models import Revision
from canvases.row_plans import RowPlan
from intake.ingest import ingest_path
from sessions.models import Canvas, Row

pytestmark = pytest.mark.django_db(transaction=True)  # on-commit work (clearing intents) runs
FILE = "002-migrate-orders-api.mmd"


def rows_by_line(agent_dir: Path) -> dict[tuple[str, int], dict]:
    out = {}
    for path in sorted(agent_dir.glob("offload-*.jsonl")):
        for number, line in enumerate(path.read_text().split("\n"), start=1):
            with contextlib.suppress(ValueError):
                out[(path.name, number)] = json.loads(line)
    return out


def snapshot(agent_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(agent_dir)): p.read_bytes() for p in agent_dir.rglob("*") if p.is_file()}


def temps(agent_dir: Path) -> list[str]:
    return [p.name for p in agent_dir.rglob("*") if TEMP_MARKER in p.name]


def intents() -> list[journal.Intent]:
    return journal.intent_load_all(write_path.journal_dir())


@pytest.fixture
def user() -> User:
    return User.objects.create_user("alice", password="pw")


def _setup(root: Path) -> tuple[Canvas, Path]:
    ingest_path(root)
    canvas = Canvas.objects.get(filename=FILE)
    return canvas, Path(canvas.agent.path)


def test_undo_returns_rows_sharing_a_tool_call_id_to_their_own_nodes(
    fixtures_root: Path, user: User
) -> None:
    """Spec §7.6: duplicate ids are normal; a merge + undo must not move the other copy."""
    root = fixtures_root / "fixture-a-upstream"
    agent_dir = root / "main"
    session = agent_dir / "offload-b7e4d2a0-1c9f-4e63-a8d5-2f0c7b9e6d14.jsonl"
    lines = session.read_text().splitlines()
    twin = json.loads(lines[1])  # toolu_01B2… on 002-N3
    twin["node_id"] = "002-N4"  # the same id again, on another node
    twin["summary"] = "duplicate id, other node"
    session.write_text("\n".join([*lines, json.dumps(twin, ensure_ascii=False)]) + "\n")
    canvas, agent_dir = _setup(root)
    before = rows_by_line(agent_dir)
    out = services.canvas_apply_edit(
        canvas=canvas,
        op="merge",
        params={"nodes": ["002-N4", "002-N3"]},  # N3 into N4: the N3 copy moves to N4
        base_hash=canvas.content_hash,
        user=user,
    )
    assert out.rows_changed == 1
    merged = rows_by_line(agent_dir)
    assert [r["node_id"] for r in merged.values() if r["tool_call_id"] == twin["tool_call_id"]] == [
        "002-N4",
        "002-N4",
    ]
    services.canvas_undo(canvas=canvas, user=user)
    assert rows_by_line(agent_dir) == before  # each copy back on its own node, byte for byte
    index = sorted(
        Row.objects.filter(tool_call_id=twin["tool_call_id"]).values_list("line_no", "node_id")
    )
    assert index == [(2, "002-N3"), (len(lines) + 1, "002-N4")]


# ---------------------------------------------------------------------------------------------
# a small real file system: full, read-only


@contextlib.contextmanager
def small_filesystem(where: Path, size_kb: int) -> Iterator[Path]:
    where.mkdir(parents=True)
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(where)],
        capture_output=True,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({result.stderr.decode().strip()})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _big_agent(fixtures_root: Path, target: Path) -> None:
    """Fixture A's agent with offload files large enough to matter on a small disk."""
    shutil.copytree(fixtures_root / "fixture-a-upstream" / "main", target)
    for path in target.glob("offload-*.jsonl"):
        rows = path.read_text().splitlines()
        filler = [
            json.dumps({"tool_call_id": f"fill-{path.name}-{k}", "summary": "x" * 200, "node_id": "002-N3"})
            for k in range(300)
        ]
        path.write_text("\n".join(rows + filler) + "\n")


def test_full_disk_mid_merge_changes_nothing_and_names_the_file(
    fixtures_root: Path, tmp_path: Path, user: User
) -> None:
    with small_filesystem(tmp_path / "fs", 512) as fs:
        _big_agent(fixtures_root, fs / "root" / "main")
        canvas, agent_dir = _setup(fs / "root")
        largest = max(p.stat().st_size for p in agent_dir.glob("offload-*.jsonl"))
        # Room for the canvas's temp copy, not for an offload file's: the old bug left the
        # canvas merged and the rows not.
        free = shutil.disk_usage(fs).free
        (fs / "filler").write_bytes(b"\0" * (free - largest // 2))
        before = snapshot(agent_dir)
        client = Client()
        client.force_login(user)
        response = client.post(
            f"/a/main/c/{FILE}/ops/",
            json.dumps({"op": "merge", "nodes": ["002-N2", "002-N3"], "base": canvas.content_hash}),
            content_type="application/json",
        )
        assert response.status_code == 507
        body = response.json()
        assert body["reason"] == "the disk is full"
        assert body["file"].startswith("offload-") and body["file"] in body["error"]
        assert "nothing was changed" in body["error"]
        assert str(fs) not in json.dumps(body)  # no absolute data-root path
        assert snapshot(agent_dir) == before
        assert temps(agent_dir) == [] and intents() == []
        assert not Revision.objects.filter(op="merge").exists()
        # the htmx page shows the same message in the editor
        response = client.post(
            f"/a/main/c/{FILE}/ops/",
            {"op": "merge", "nodes": "002-N2,002-N3", "base": canvas.content_hash},
            HTTP_HX_REQUEST="true",
        )
        assert response.status_code == 200 and b"the disk is full" in response.content
        # with room again, the same merge goes through whole
        (fs / "filler").unlink()
        out = services.canvas_apply_edit(
            canvas=canvas,
            op="merge",
            params={"nodes": ["002-N2", "002-N3"]},
            base_hash=canvas.content_hash,
            user=user,
        )
        assert out.rows_changed > 600
        assert not any(r.get("node_id") == "002-N3" for r in rows_by_line(agent_dir).values())
        assert temps(agent_dir) == [] and intents() == []


def test_read_only_folder_is_a_clear_error(fixtures_root: Path, tmp_path: Path, user: User) -> None:
    with small_filesystem(tmp_path / "fs", 2048) as fs:
        shutil.copytree(fixtures_root / "fixture-a-upstream", fs / "root")
        canvas, agent_dir = _setup(fs / "root")
        before = snapshot(agent_dir)
        subprocess.run(["mount", "-o", "remount,ro", str(fs)], check=True)
        with pytest.raises(services.EditRefused) as caught:
            services.canvas_apply_edit(
                canvas=canvas,
                op="annotate",
                params={"node": "002-N5", "text": "check rounding"},
                base_hash=canvas.content_hash,
                user=user,
            )
        assert caught.value.status == 507
        assert str(caught.value) == f"could not write {FILE}: the file system is read-only; nothing was changed"
        assert snapshot(agent_dir) == before and intents() == []


def test_permission_denied_is_a_clear_error(
    fixtures_root: Path, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root no mode bit refuses us, so the refusal the kernel would give is injected."""
    canvas, agent_dir = _setup(fixtures_root / "fixture-a-upstream")
    before = snapshot(agent_dir)
    from agentfs import atomic

    real_open = atomic.os.open

    def refusing_open(path, flags, *args):
        if TEMP_MARKER in str(path) and str(path).endswith(tuple("0123456789abcdef")):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(atomic.os, "open", refusing_open)
    with pytest.raises(services.EditRefused) as caught:
        services.canvas_apply_edit(
            canvas=canvas,
            op="merge",
            params={"nodes": ["002-N2", "002-N3"]},
            base_hash=canvas.content_hash,
            user=user,
        )
    assert "permission denied; nothing was changed" in str(caught.value)
    assert snapshot(agent_dir) == before and intents() == []


# ---------------------------------------------------------------------------------------------
# the journal: the database refuses, the process dies


def test_database_refusing_the_commit_is_finished_from_the_journal(
    fixtures_root: Path, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    canvas, agent_dir = _setup(fixtures_root / "fixture-a-upstream")
    real = write_path.intent_record
    calls = {"n": 0}

    def failing_once(intent, rows):
        calls["n"] += 1
        if calls["n"] == 1:
            raise DatabaseError("deadlock detected")
        return real(intent, rows)

    monkeypatch.setattr(write_path, "intent_record", failing_once)
    with pytest.raises(services.EditConflict) as caught:
        services.canvas_apply_edit(
            canvas=canvas,
            op="merge",
            params={"nodes": ["002-N2", "002-N3"]},
            base_hash=canvas.content_hash,
            user=user,
        )
    assert "finished it from its journal as r2" in str(caught.value)
    revision = Revision.objects.get(canvas=canvas, number=2)
    assert (revision.author, revision.op, revision.user_id) == ("alice", "merge", user.pk)
    assert revision.remaps["node_map"] == {"002-N3": "002-N2"}
    assert "002-N3" not in parse((agent_dir / "mmds" / FILE).read_text()).nodes
    assert not any(r.get("node_id") == "002-N3" for r in rows_by_line(agent_dir).values())
    assert not Row.objects.filter(node_id="002-N3").exists()
    assert intents() == []
    # the watcher's next pass records nothing as the agent's
    ingest_path(fixtures_root / "fixture-a-upstream")
    assert not canvas.revisions.filter(author="agent", number__gt=1).exists()


def test_change_left_after_the_canvas_rename_is_finished_by_the_next_ingest(
    fixtures_root: Path, user: User
) -> None:
    """What a kill between the canvas rename and the rows leaves behind, finished at start-up."""
    canvas, agent_dir = _setup(fixtures_root / "fixture-a-upstream")
    text = (agent_dir / "mmds" / FILE).read_text()
    from canvases.edit_ops import engine_apply

    merged = engine_apply(text, "merge", {"nodes": ["002-N2", "002-N3"]})
    plan = RowPlan.forward(merged.id_map, set())
    assert plan is not None
    intent = journal.Intent(
        agent_dir=str(agent_dir),
        op="merge",
        payload={
            "canvas_pk": canvas.pk,
            "file": FILE,
            "params": {"nodes": ["002-N2", "002-N3"]},
            "author": "alice",
            "user_id": user.pk,
            "before_text": text,
            "after_text": merged.text,
            "before_hash": canvas.content_hash,
            "after_hash": write_path.content_hash(merged.text),
            "rows": plan.as_json(),
            "flips": None,
            "keep_remaps_on": None,
        },
        stage="canvas",
    )
    journal.intent_save(write_path.journal_dir(), intent)
    (agent_dir / "mmds" / FILE).write_text(merged.text)  # the canvas was renamed; rows were not
    ingest_path(fixtures_root / "fixture-a-upstream")  # what the watcher does at start-up
    assert not any(r.get("node_id") == "002-N3" for r in rows_by_line(agent_dir).values())
    revisions = list(canvas.revisions.order_by("number").values_list("author", "op"))
    assert revisions == [("agent", "imported"), ("alice", "merge")]
    assert intents() == []


def test_change_journaled_but_never_renamed_is_dropped(fixtures_root: Path, user: User) -> None:
    canvas, agent_dir = _setup(fixtures_root / "fixture-a-upstream")
    before = snapshot(agent_dir)
    intent = journal.Intent(
        agent_dir=str(agent_dir),
        op="annotate",
        payload={
            "canvas_pk": canvas.pk,
            "file": FILE,
            "params": {},
            "author": "alice",
            "user_id": user.pk,
            "before_text": canvas.text,
            "after_text": canvas.text + "\n%% never written",
            "before_hash": canvas.content_hash,
            "after_hash": write_path.content_hash(canvas.text + "\n%% never written"),
            "rows": None,
            "flips": None,
            "keep_remaps_on": None,
        },
    )
    journal.intent_save(write_path.journal_dir(), intent)
    ingest_path(fixtures_root / "fixture-a-upstream")
    assert snapshot(agent_dir) == before
    assert canvas.revisions.count() == 1 and intents() == []


def test_intent_half_written_by_a_killed_process_is_swept_by_the_next_ingest(
    fixtures_root: Path,
) -> None:
    """A writer killed while writing the intent itself leaves only its temp in the journal."""
    _setup(fixtures_root / "fixture-a-upstream")
    folder = write_path.journal_dir()
    folder.mkdir(parents=True, exist_ok=True)
    exited = subprocess.Popen(["true"])
    exited.wait()
    half = folder / f".abc{journal.SUFFIX}{TEMP_MARKER}{exited.pid}-0000"
    half.write_bytes(b'{"agent_dir": ')
    ingest_path(fixtures_root / "fixture-a-upstream")
    assert list(folder.iterdir()) == []
