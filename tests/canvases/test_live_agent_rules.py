"""Edits to a live agent are honest (spec §4.8.5–4.8.8): "drop from context" is refused or
confirmed with its reason, every edit changes what the agent compares after a tool call, edits a
map-builder reply lost are found, and a resume the agent moved away from is reported."""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.test import Client

from canvases import history, services
from canvases.models import Revision
from intake.ingest import ingest_agent_dir, ingest_path
from sessions.models import Canvas
from tests.pages import one

pytestmark = pytest.mark.django_db
FILE = "002-migrate-orders-api.mmd"


@pytest.fixture
def env(fixtures_root: Path):
    ingest_path(fixtures_root / "fixture-a-upstream")
    canvas = Canvas.objects.get(filename=FILE)
    return canvas, User.objects.create_user("dora", password="pw"), Path(canvas.agent.path)


def _make_live(agent_dir: Path) -> None:
    """The agent wrote to its folder a moment ago (what the liveness check sees)."""
    os.utime(agent_dir / "state.json", (time.time(), time.time()))


def test_drop_from_context_on_a_live_agent_needs_confirmation(env) -> None:
    canvas, user, agent_dir = env
    _make_live(agent_dir)
    before = {p.name: p.read_bytes() for p in agent_dir.glob("offload-*.jsonl")}
    params = {"node": "002-N4", "drop_from_context": True, "bridge": True}
    with pytest.raises(services.EditConflict) as caught:
        services.canvas_apply_edit(
            canvas=canvas, op="prune", params=params, base_hash=canvas.content_hash, user=user
        )
    assert 'turns "deleted" back into true' in str(caught.value)
    assert {p.name: p.read_bytes() for p in agent_dir.glob("offload-*.jsonl")} == before
    out = services.canvas_apply_edit(
        canvas=canvas,
        op="prune",
        params={**params, "confirm_live": True},
        base_hash=canvas.content_hash,
        user=user,
    )
    assert out.rows_changed == 1
    assert any("only when the session is loaded again" in w for w in out.warnings)
    # a prune without "drop from context" needs no confirmation
    canvas.refresh_from_db()
    services.canvas_apply_edit(
        canvas=canvas, op="prune", params={"node": "002-N5"}, base_hash=canvas.content_hash,
        user=user,
    )


def test_every_edit_changes_what_the_running_agent_compares(env) -> None:
    """The plugin re-injects only when length or the first 64 characters changed (§4.8.6)."""
    canvas, user, agent_dir = env
    path = agent_dir / "mmds" / FILE
    for status in ("todo", "done", "todo"):  # same length as "done": only the fingerprint rule helps
        before = path.read_text("utf-8")
        canvas.refresh_from_db()
        services.canvas_apply_edit(
            canvas=canvas, op="set_status", params={"node": "002-N3", "status": status},
            base_hash=canvas.content_hash, user=user,
        )
        after = path.read_text("utf-8")
        assert (len(after), after[:64]) != (len(before), before[:64])
        assert after.rstrip("\n") != before.rstrip("\n")


def test_edits_a_map_builder_reply_lost_are_offered_again(env) -> None:
    canvas, user, agent_dir = env
    path = agent_dir / "mmds" / FILE
    original = path.read_text("utf-8")
    out = services.canvas_apply_edit(
        canvas=canvas, op="set_status", params={"node": "002-N4", "status": "todo"},
        base_hash=canvas.content_hash, user=user,
    )
    canvas.refresh_from_db()
    services.canvas_apply_edit(
        canvas=canvas, op="prune", params={"node": "002-N5"}, base_hash=out.hash, user=user
    )
    # A reply computed on the old text lands within the window: the status is back, N5 is back.
    path.write_text(original, "utf-8")
    ingest_agent_dir(agent_dir)
    canvas.refresh_from_db()
    lost = {d["op"]: d for d in history.dropped_edits(canvas)}
    assert set(lost) == {"set_status", "prune"}
    assert lost["prune"]["what"] == "node 002-N5: removed → on the canvas"
    # long after an edit, an agent rewrite of a status is its own progress, not a loss
    Revision.objects.filter(canvas=canvas, op="set_status").update(
        created_at=canvas.revisions.get(op="disk").created_at - timedelta(minutes=10)
    )
    assert {d["op"] for d in history.dropped_edits(canvas)} == {"prune"}
    # re-apply on the live agent (it just rewrote the canvas) needs a confirmation, then
    # brings the prune back
    reapply = {"revision": lost["prune"]["revision"]}
    with pytest.raises(services.EditConflict, match="may drop this edit again"):
        services.canvas_apply_edit(
            canvas=canvas, op="reapply", params=reapply, base_hash="", user=user
        )
    services.canvas_apply_edit(
        canvas=canvas, op="reapply", params={**reapply, "confirm_live": True},
        base_hash="", user=user,
    )
    canvas.refresh_from_db()
    assert history.dropped_edits(canvas) == []


def test_a_resume_the_agent_moved_away_from_is_reported(env, fixtures_root: Path) -> None:
    canvas, user, agent_dir = env
    other = Canvas.objects.get(filename="001-fix-login-timeout.mmd")
    result = services.canvas_resume(canvas=other, user=user)
    assert result.held
    client = Client()
    page = BeautifulSoup(client.get(f"/a/main/c/{FILE}/").content, "html.parser")
    assert page.select_one(".resume-moved") is None
    # the agent's next task judgment switches back (a gateway writes state.json whole)
    state = json.loads((agent_dir / "state.json").read_text("utf-8"))
    state["activeMmdFile"] = FILE
    (agent_dir / "state.json").write_text(json.dumps(state, indent=2), "utf-8")
    ingest_agent_dir(agent_dir)
    page = BeautifulSoup(client.get(f"/a/main/c/{FILE}/").content, "html.parser")
    note = one(page, ".resume-moved").get_text(" ", strip=True)
    assert "dora asked the agent to resume from 001-fix-login-timeout.mmd" in note
    assert FILE in note
    preview = BeautifulSoup(client.get(f"/a/main/c/{FILE}/preview/").content, "html.parser")
    assert "Resume is a request" in one(preview, ".resume-request").get_text()
    assert preview.select_one(".resume-moved") is not None
    # the resume is in the history, and not a step of undo
    assert other.revisions.filter(op="resume", author="dora").exists()
    assert history.undo_target(other) is None


def test_an_agent_whose_folder_cannot_be_listed_is_not_live_and_its_pages_answer(
    fixtures_root: Path,
) -> None:
    """A folder that became a file (or one memviz may not read): nothing memviz could see is being
    written, so the agent is not live, and its canvas page still answers."""
    from canvases import liveness
    from sessions.models import Agent

    folder = fixtures_root / "fixture-a-upstream" / "main"
    ingest_path(folder.parent)
    agent = Agent.objects.get(slug="main")
    moved = folder.with_name("main-moved")
    folder.rename(moved)
    folder.write_text("not a folder any more", "utf-8")
    status = liveness.agent_live(agent)
    assert (status.live, status.reasons) == (False, [])
    canvas = Canvas.objects.filter(agent=agent).order_by("filename").first()
    assert canvas is not None
    assert Client().get(f"/a/main/c/{canvas.filename}/").status_code < 500


def test_the_index_and_the_live_check_name_the_same_active_canvas(env) -> None:
    """What the agent page shows as active (the index) and what resume and the preview compare
    (read live from state.json) follow one rule: a name with a space around it is not the canvas."""
    from canvases import liveness

    canvas, _user, agent_dir = env
    state = json.loads((agent_dir / "state.json").read_text("utf-8"))
    for name in (f" {FILE}", FILE):
        state["activeMmdFile"] = name
        (agent_dir / "state.json").write_text(json.dumps(state), "utf-8")
        ingest_agent_dir(agent_dir)
        canvas.agent.refresh_from_db()
        assert canvas.agent.active_mmd_file == liveness.state_active(canvas.agent) == name
    preview = Client().get(f"/a/main/c/{FILE}/preview/?format=json").json()
    assert preview["active"] is True


def test_a_fresh_claim_is_seen_whatever_spelling_its_stamp_has(env) -> None:
    """A `wait` row stamped a moment ago means a map-builder reply may still land: its stamp is
    read as every page reads one (a lowercase `z` too), not only in the spelling Python parses."""
    from datetime import UTC, datetime

    from canvases import liveness

    canvas, _user, agent_dir = env
    offload = next(agent_dir.glob("offload-*.jsonl"))
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "z"
    row = {"tool_call_id": "call_claimed", "tool_call": "read", "summary": "s", "score": 3,
           "timestamp": stamp, "node_id": "wait", "result_ref": None}
    with offload.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
    ingest_agent_dir(agent_dir)
    long_ago = time.time() - 3600  # the file's own write is old: only the stamp says "now"
    for path in agent_dir.rglob("*"):
        os.utime(path, (long_ago, long_ago))
    assert liveness.map_builder_in_flight(canvas.agent) is not None
