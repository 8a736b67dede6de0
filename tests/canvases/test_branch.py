"""Branch here: the next free number (gaps, numbers rows still carry, a file appearing meanwhile),
the strict line 1 under the new number, the rows of that moment copied into memviz (never into
the agent's files), every other byte of the folder untouched, login, CSRF, live agent, journal."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.db import DatabaseError
from django.test import Client

from agentfs import journal
from agentfs.atomic import TEMP_MARKER
from canvases import branches, lineage, services, write_path
from canvases.mermaid import parse
from canvases.mermaid.branch import branch_text, next_free_number
from canvases.models import CanvasBranch
from canvases.page_types import BranchRoot
from canvases.refused import EditConflict
from intake.ingest import ingest_path
from sessions.models import Canvas
from tests.pages import attr, one
from tests.shapes import shape_problems

_spec = importlib.util.spec_from_file_location(
    "reference", Path(__file__).parents[1] / "conformance" / "reference.py"
)
assert _spec and _spec.loader
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)

FILE = "002-migrate-orders-api.mmd"
N2_ROWS = {"toolu_01A7xKq3VbN9mT2pLc8dWe4R", "call_03_Tq2kD7fUo5"}
N3_ROW = "toolu_01B2yLr4WcP0nU3qMd9eXf5S"
N4_ROW = "toolu_01C3zMs5XdQ1oV4rNe0fYg6T"


def snapshot(agent_dir: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(agent_dir)): p.read_bytes() for p in agent_dir.rglob("*") if p.is_file()
    }


def copied_calls(branch: CanvasBranch, node: str) -> set[str]:
    return {tool_call_id for _file, _line, tool_call_id in branch.rows.get(node, [])}


def test_the_next_number_is_above_every_number_in_use_and_fills_no_gap() -> None:
    names = ["001-a.mmd", "002-b.mmd", "005-c.mmd", "notes.txt", "x.mmd", ".005-c.mmd.memviz-tmp-1"]
    assert next_free_number(names) == 6  # 003 and 004 may be deleted canvases with rows left
    assert next_free_number(names, counter=8) == 9  # the agent's mmdCounter (spec §5)
    assert next_free_number(names, counter=2, used=[7]) == 8  # rows of a gone 007 canvas
    assert next_free_number(["1000-big.mmd"]) == 1001
    assert next_free_number([]) == 1


def test_branch_text_takes_the_new_number_and_a_strict_line_one() -> None:
    source = (
        "%% taskGoal: 修复缓存\n%% progress: 40\nflowchart LR\n"
        '    004-N1(["修复CI缓存"]) --> 004-N2["诊断<br/>status: done"]\n'
        '    n_004-N3["go drawn"] -.-> 001-N9["other canvas"]\n'
        "    class 004-N2,001-N9 done\n    style 004-N1 fill:#fff\n    click n_004-N3 callback\n"
    )
    branch = branch_text(source, source_file="004-修复CI缓存.mmd", number=12)
    assert reference.strict_line_one(branch.text)
    assert reference.goal(branch.text) == "修复缓存"
    assert branch.id_map == {"004-N1": "012-N1", "004-N2": "012-N2", "n_004-N3": "n_012-N3"}
    doc = parse(branch.text)
    assert set(doc.nodes) == {"012-N1", "012-N2", "n_012-N3", "001-N9"}  # another canvas's id kept
    assert [(e.source, e.target) for e in doc.edges] == [
        ("012-N1", "012-N2"),
        ("n_012-N3", "001-N9"),
    ]
    assert "class 012-N2,001-N9 done" in branch.text and "style 012-N1 fill:#fff" in branch.text
    assert "click n_012-N3 callback" in branch.text and "004-N" not in branch.text
    assert reference.fallback(branch.text, "012") == "012-N2"  # unmapped rows go to the branch


@pytest.fixture
def agent_dir(fixtures_root: Path) -> Path:
    folder = fixtures_root / "fixture-a-upstream" / "main"
    # a row of canvas 004, deleted since (its rows stay): 003 and 004 are not free
    offload = next(folder.glob("offload-3f2b*.jsonl"))
    row = {
        "tool_call_id": "call_gone_1",
        "tool_call": "read",
        "summary": "gone canvas row",
        "timestamp": "2026-06-09T08:00:00.000+08:00",
        "score": 5,
        "node_id": "004-N1",
    }
    with offload.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.utime(offload, (os.path.getmtime(folder / "state.json"),) * 2)  # not "live"
    ingest_path(fixtures_root / "fixture-a-upstream")
    return folder


@pytest.mark.django_db(transaction=True)
def test_branch_from_revisions_copies_their_rows_and_changes_no_byte_of_the_folder(
    agent_dir: Path,
) -> None:
    client = Client()
    user = User.objects.create_user("dave", password="pw")
    client.force_login(user)
    canvas = Canvas.objects.get(filename=FILE)
    merged = services.canvas_apply_edit(
        canvas=canvas,
        op="merge",
        params={"nodes": ["002-N2", "002-N3"]},
        base_hash=canvas.content_hash,
        user=user,
    )
    services.canvas_undo(canvas=canvas, user=user)  # r3: the N3 row is back on 002-N3
    before = snapshot(agent_dir)

    answer = client.post(
        "/a/main/branch/",
        json.dumps({"file": FILE, "revision": 2}),
        content_type="application/json",
    )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    name = "005-migrate-orders-api-r2.mmd"
    assert body["file"] == name and body["preview"] == f"/a/main/c/{name}/preview/"
    text = (agent_dir / "mmds" / name).read_text("utf-8")
    assert text == branch_text(merged.text, source_file=FILE, number=5).text
    assert reference.strict_line_one(text) and reference.goal(text) == reference.goal(merged.text)
    assert set(parse(text).nodes) == {"005-N1", "005-N2", "005-N4", "005-N5"}
    after = snapshot(agent_dir)
    assert after.pop(f"mmds/{name}") == text.encode("utf-8")
    assert after == before  # the live canvas, the offload rows, state.json: byte for byte

    branch = CanvasBranch.objects.get(canvas__filename=name)
    assert (branch.source_file, branch.source_revision, branch.origin) == (FILE, 2, "revision")
    assert copied_calls(branch, "005-N2") == N2_ROWS | {N3_ROW}  # merged at r2, undone later
    page = client.get(f"/a/main/c/{name}/?format=json").json()
    assert {n["id"]: n["rows"] for n in page["nodes"]}["005-N2"] == 3
    panel = client.get(f"/a/main/c/{name}/n/005-N2/?format=json").json()
    assert {r["tool_call_id"] for r in panel["rows"]} == N2_ROWS | {N3_ROW}

    answer = client.post("/a/main/branch/", {"file": FILE, "revision": "1"})
    assert answer.status_code == 302 and answer["Location"].startswith("/a/main/c/006-")
    first = CanvasBranch.objects.get(canvas__filename="006-migrate-orders-api-r1.mmd")
    assert copied_calls(first, "006-N3") == {N3_ROW} and copied_calls(first, "006-N2") == N2_ROWS
    with pytest.raises(services.EditRefused, match="nothing to undo"):  # r1 created the file
        services.canvas_undo(canvas=first.canvas, user=user)

    tree = client.get("/a/main/?format=json").json()["branches"]
    assert [(t["file"], [c["file"] for c in t["children"]]) for t in tree] == [
        (FILE, [name, "006-migrate-orders-api-r1.mmd"])
    ]
    assert tree[0]["children"][0]["rows_copied"] == 5  # 005-N2: 3, 005-N4: 1, 005-N5: 1
    assert journal.intent_load_all(write_path.journal_dir()) == []

    # curating the branch: a merge there carries its copied rows (their files keep 002- ids)
    mine = Canvas.objects.get(filename=name)
    services.canvas_apply_edit(
        canvas=mine,
        op="merge",
        params={"nodes": ["005-N2", "005-N4"]},
        base_hash=mine.content_hash,
        user=user,
    )
    panel = client.get(f"/a/main/c/{name}/n/005-N2/?format=json").json()
    assert {r["tool_call_id"] for r in panel["rows"]} == N2_ROWS | {N3_ROW, N4_ROW}
    # and a branch of the branch takes them along, nested under it in the tree
    again = branches.canvas_branch(canvas=mine, user=user)
    assert again.file == "007-migrate-orders-api-r2-r2.mmd"
    nested = CanvasBranch.objects.get(canvas__filename=again.file)
    assert copied_calls(nested, "007-N2") == N2_ROWS | {N3_ROW, N4_ROW}
    tree = client.get("/a/main/?format=json").json()["branches"]
    assert [c["file"] for c in tree[0]["children"][0]["children"]] == [again.file]
    assert shape_problems(tree, list[BranchRoot]) == []  # nested branches included


@pytest.mark.django_db(transaction=True)
def test_a_file_of_the_number_appearing_meanwhile_refuses_the_branch(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = User.objects.create_user("dave", password="pw")
    canvas = Canvas.objects.get(filename=FILE)
    mmds = agent_dir / "mmds"
    real_checkpoint = write_path.checkpoint
    agent_files = {"005-agent-task.mmd": "flowchart TD\n    005-N1[agent]", "006-x-r1.mmd": "mine"}

    def agent_creates(name: str) -> None:  # between memviz's check and its link
        if name == "prepared":
            for file, text in agent_files.items():
                if not (mmds / file).exists():
                    (mmds / file).write_text(text, "utf-8")
                    break
        real_checkpoint(name)

    monkeypatch.setattr(write_path, "checkpoint", agent_creates)
    before = snapshot(agent_dir)
    with pytest.raises(EditConflict, match="005-agent-task.mmd appeared"):  # another 005 file
        branches.canvas_branch(canvas=canvas, revision=1, user=user)
    with pytest.raises(EditConflict, match="006-x-r1.mmd appeared"):  # the very name
        # (the agent's write just now makes it look live: the person confirmed)
        branches.canvas_branch(
            canvas=canvas, revision=1, label="x-r1", user=user, confirm_live=True
        )
    after = snapshot(agent_dir)
    assert {k: v for k, v in after.items() if k not in {f"mmds/{f}" for f in agent_files}} == before
    assert (mmds / "006-x-r1.mmd").read_text() == "mine"  # the agent's file, never replaced
    assert not [p for p in agent_dir.rglob("*") if TEMP_MARKER in p.name]
    assert not CanvasBranch.objects.exists() and Canvas.objects.count() == 2
    assert journal.intent_load_all(write_path.journal_dir()) == []

    monkeypatch.setattr(write_path, "checkpoint", real_checkpoint)
    real_link = os.link

    def agent_creates_at_the_link(source, target):
        (mmds / "007-agent-late.mmd").write_text("flowchart TD", "utf-8")  # the same instant
        real_link(source, target)

    monkeypatch.setattr(os, "link", agent_creates_at_the_link)
    with pytest.raises(EditConflict, match="007-agent-late.mmd appeared"):
        branches.canvas_branch(canvas=canvas, revision=1, user=user, confirm_live=True)
    monkeypatch.setattr(os, "link", real_link)
    assert sorted(p.name for p in mmds.iterdir()) == sorted(
        [FILE, "001-fix-login-timeout.mmd", *agent_files, "007-agent-late.mmd"]
    )  # ours was taken back, nothing else left
    assert not CanvasBranch.objects.exists() and not journal.intent_load_all(
        write_path.journal_dir()
    )
    result = branches.canvas_branch(canvas=canvas, revision=1, user=user, confirm_live=True)
    assert result.file == "008-migrate-orders-api-r1.mmd"


@pytest.mark.django_db(transaction=True)
def test_a_database_failure_is_finished_from_the_journal_lineage_included(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = User.objects.create_user("dave", password="pw")
    canvas = Canvas.objects.get(filename=FILE)
    real = lineage.lineage_record
    calls = {"n": 0}

    def failing_once(*args):
        calls["n"] += 1
        if calls["n"] == 1:
            raise DatabaseError("deadlock detected")
        return real(*args)

    monkeypatch.setattr(lineage, "lineage_record", failing_once)
    with pytest.raises(EditConflict, match="finished it from its journal as r1"):
        branches.canvas_branch(canvas=canvas, revision=1, user=user)
    branch = CanvasBranch.objects.get()
    assert branch.canvas.filename == "005-migrate-orders-api-r1.mmd"
    assert branch.canvas.revisions.get().op == "branch" and copied_calls(branch, "005-N3") == {
        N3_ROW
    }
    assert (agent_dir / "mmds" / branch.canvas.filename).read_text() == branch.canvas.text


@pytest.mark.django_db
def test_branching_needs_login_csrf_and_a_confirmation_on_a_live_agent(agent_dir: Path) -> None:
    before = snapshot(agent_dir)
    body = json.dumps({"file": FILE, "revision": 1})
    assert (
        Client().post("/a/main/branch/", body, content_type="application/json").status_code == 403
    )
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(User.objects.create_user("dave", password="pw"))
    assert strict.post("/a/main/branch/", {"file": FILE, "revision": "1"}).status_code == 403
    assert snapshot(agent_dir) == before

    client = Client()
    client.force_login(User.objects.get(username="dave"))
    next(agent_dir.glob("offload-*.jsonl")).touch()  # the agent just wrote
    live = client.post("/a/main/branch/", body, content_type="application/json")
    assert live.status_code == 409 and "looks live" in live.json()["error"]
    history = BeautifulSoup(client.get(f"/a/main/c/{FILE}/history/").content, "html.parser")
    assert history.select_one(".branch-form input[name=confirm_live]") is not None
    assert snapshot(agent_dir).keys() == before.keys()
    confirmed = json.dumps({"file": FILE, "revision": 1, "confirm_live": True})
    assert (
        client.post("/a/main/branch/", confirmed, content_type="application/json").status_code
        == 201
    )


@pytest.mark.django_db
def test_branch_from_a_replay_instant_keeps_what_existed_then(fixtures_root: Path) -> None:
    """Row 2 of the session is 002-N3's call: N4, N5 and later rows did not exist yet."""
    ingest_path(fixtures_root / "fixture-a-upstream")
    client = Client()
    client.force_login(User.objects.create_user("dave", password="pw"))
    session = "b7e4d2a0-1c9f-4e63-a8d5-2f0c7b9e6d14"
    replay = BeautifulSoup(client.get(f"/a/main/s/{session}/replay/?row=2").content, "html.parser")
    form = one(replay, "form.branch-form")
    assert one(form, "input[name=session]")["value"] == session
    assert one(form, "input#replay-branch-row")["value"] == "2"
    answer = client.post(attr(form, "action"), {"session": session, "row": "2"})
    assert answer.status_code == 302
    branch = CanvasBranch.objects.get()
    assert (branch.origin, branch.session_id, branch.replay_row) == ("replay", session, 2)
    assert set(parse(branch.canvas.text).nodes) == {"003-N1", "003-N2", "003-N3"}
    assert copied_calls(branch, "003-N2") == N2_ROWS and copied_calls(branch, "003-N3") == {N3_ROW}
    assert set(branch.rows) == {"003-N2", "003-N3"}

    compare = client.get(f"/a/main/c/{FILE}/compare/?a=1&b=current")
    sides = compare.context["sides"]
    assert [(s["label"], s["revision"]) for s in sides] == [("r1", 1), ("now", None)]
    forms = BeautifulSoup(compare.content, "html.parser").select(".branch-choices form")
    assert [f.select_one("input[name=revision]") is None for f in forms] == [False, True]
    data = client.get(f"/a/main/c/{FILE}/compare/?a=1&b=current&format=json").json()
    assert data["branch_url"] == "/a/main/branch/" and data["sides"][1]["revision"] is None
