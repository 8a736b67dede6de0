"""What a write answers a script has the shape its TypedDict declares (canvases/page_types.py):
an edit, undo and restore (EditAnswer), a refusal (EditRefusal: conflict, bad input, not signed
in), sync, resume and branch. A script reads these keys to chain its next edit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from canvases.mermaid import content_hash
from canvases.page_types import (
    BranchAnswer,
    EditAnswer,
    EditRefusal,
    ResumeAnswer,
    SyncAnswer,
)
from intake.ingest import ingest_path
from sessions.models import Canvas
from tests.shapes import shape_problems

pytestmark = pytest.mark.django_db
FILE = "002-migrate-orders-api.mmd"
CANVAS = f"/a/main/c/{FILE}/"
SESSION = "b7e4d2a0-1c9f-4e63-a8d5-2f0c7b9e6d14"


@pytest.fixture
def client(fixtures_root: Path) -> Client:
    ingest_path(fixtures_root / "fixture-a-upstream")
    client = Client()
    client.force_login(User.objects.create_user("bob", password="pw"))
    return client


def _post(client: Client, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    answer = client.post(path, json.dumps(body), content_type="application/json")
    return answer.status_code, answer.json()


def _base() -> str:
    return Canvas.objects.get(filename=FILE).content_hash


def test_an_edit_undo_and_restore_answer_an_edit_answer(client: Client, fixtures_root: Path) -> None:
    merge = {"op": "merge", "base": _base(), "nodes": ["002-N2", "002-N3"]}
    status, merged = _post(client, CANVAS + "ops/", merge)
    assert status == 200 and shape_problems(merged, EditAnswer) == []
    on_disk = (fixtures_root / "fixture-a-upstream" / "main" / "mmds" / FILE).read_text("utf-8")
    assert merged["hash"] == content_hash(on_disk) and merged["text"] == on_disk
    status, undone = _post(client, CANVAS + "ops/", {"op": "undo", "base": merged["hash"]})
    assert status == 200 and shape_problems(undone, EditAnswer) == []
    assert undone["revision"] == merged["revision"] + 1
    status, restored = _post(client, CANVAS + f"history/{merged['revision']}/restore/", {})
    assert status == 200 and shape_problems(restored, EditAnswer) == []
    assert restored["text"] == on_disk


def test_each_refusal_answers_an_edit_refusal(client: Client) -> None:
    stale = {"op": "annotate", "base": "0" * 64, "node": "002-N2", "text": "hi"}
    status, conflict = _post(client, CANVAS + "ops/", stale)
    assert status == 409 and shape_problems(conflict, EditRefusal) == []
    assert conflict["conflict"] is True and conflict["current_hash"] == _base()
    status, unknown = _post(client, CANVAS + "ops/", {"op": "nope", "base": _base()})
    assert status == 400 and shape_problems(unknown, EditRefusal) == []
    assert unknown["code"] == "unknown_op" and unknown["status"] == 400
    status, anonymous = _post(Client(), CANVAS + "ops/", {"op": "undo", "base": _base()})
    assert status == 403 and shape_problems(anonymous, EditRefusal) == []


def test_a_restore_sent_as_json_on_a_stale_base_is_refused(
    client: Client, fixtures_root: Path
) -> None:
    """The base a script sends in a JSON body is checked as a form's is: the agent changed the
    canvas since, so nothing is written and the answer says where the canvas is now."""
    mmd = fixtures_root / "fixture-a-upstream" / "main" / "mmds" / FILE
    stale = _base()
    mmd.write_text(mmd.read_text("utf-8") + '    002-N9["agent step<br/>status: todo"]\n', "utf-8")
    before = mmd.read_bytes()
    status, refused = _post(client, CANVAS + "history/1/restore/", {"base": stale})
    assert status == 409 and shape_problems(refused, EditRefusal) == []
    assert refused["current_hash"] == content_hash(before.decode()) != stale
    assert mmd.read_bytes() == before
    # a base that is not text is refused, not read as "no base" (which skips the check)
    bodies: list[tuple[str, dict[str, Any]]] = [
        (CANVAS + "history/1/restore/", {"base": False}),
        (CANVAS + "ops/", {"op": "undo", "base": 0}),
    ]
    for path, body in bodies:
        status, refused = _post(client, path, body)
        assert (status, refused["error"]) == (400, "'base' must be text"), path
    assert mmd.read_bytes() == before


def test_sync_resume_and_branch_answer_their_shapes(client: Client) -> None:
    status, synced = _post(client, CANVAS + "sync/", {})
    assert status == 200 and shape_problems(synced, SyncAnswer) == []
    assert synced == {"changed": False}
    status, resumed = _post(client, CANVAS + "resume/", {})
    assert status == 200 and shape_problems(resumed, ResumeAnswer) == []
    assert resumed["held"] is True and resumed["active"] == FILE
    status, branched = _post(client, "/a/main/branch/", {"file": FILE, "revision": 1})
    assert status == 201 and shape_problems(branched, BranchAnswer) == []
    assert branched["source"] == {"source": FILE, "revision": 1, "origin": "revision"}
    assert Canvas.objects.filter(filename=branched["file"]).exists()
    replay = {"session": SESSION, "row": 2}  # the canvas as it stood at row 2 of a session
    status, then = _post(client, "/a/main/branch/", replay)
    assert status == 201 and shape_problems(then, BranchAnswer) == []
    assert (then["source"]["origin"], then["source"]["session"], then["source"]["row"]) == (
        "replay",
        SESSION,
        2,
    )


def test_the_checker_sees_a_key_an_answer_does_not_declare() -> None:
    refusal = {"error": "e", "status": 409, "conflict": True, "current_hash": "h"}
    assert shape_problems(refusal, EditRefusal) == []
    assert shape_problems({**refusal, "retry": 1}, EditRefusal) == ["$.retry: not declared"]
    assert shape_problems({"error": "e"}, EditRefusal) == ["$.status: missing"]
