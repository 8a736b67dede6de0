"""The agent's rules through the pages and services (spec §4.8): the preview page shows exactly
the reference block for every fixture canvas, the one-click metadata conversion, resume on an
agent folder without state.json, and the lint panel's agent warnings."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.test import Client

from canvases import services
from intake.ingest import ingest_path
from sessions.models import Canvas
from tests.pages import attr, one

pytestmark = pytest.mark.django_db
_spec = importlib.util.spec_from_file_location("reference", Path(__file__).with_name("reference.py"))
assert _spec and _spec.loader
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


@pytest.fixture
def all_fixtures(fixtures_root: Path) -> Path:
    for name in ("fixture-a-upstream", "fixture-b-wild", "fixture-c-enhanced"):
        ingest_path(fixtures_root / name)
    return fixtures_root


def test_preview_page_is_the_reference_block_for_every_fixture_canvas(all_fixtures: Path) -> None:
    client = Client()
    canvases = list(Canvas.objects.select_related("agent"))
    assert len(canvases) == 6
    for canvas in canvases:
        text = (Path(canvas.agent.path) / "mmds" / canvas.filename).read_text("utf-8")
        expected = reference.block(canvas.filename, text)
        url = f"/a/{canvas.agent.slug}/c/{canvas.filename}/preview/"
        data = client.get(url + "?format=json").json()
        assert data["block"] == expected, canvas.filename
        assert data["block_chars"] == len(expected)
        page = BeautifulSoup(client.get(url).content, "html.parser")
        assert one(page, "pre.resume-block").get_text() == expected
        no_goal = page.select_one(".no-goal")
        assert (no_goal is not None) == (reference.goal(text) is None), canvas.filename


def test_write_agent_readable_metadata_in_one_click(all_fixtures: Path) -> None:
    """Fixture B's 004 keeps its metadata in `%% key: value` comments: the agent reads no goal."""
    canvas = Canvas.objects.get(filename="004-修复CI缓存.mmd")
    path = Path(canvas.agent.path) / "mmds" / canvas.filename
    before = path.read_text("utf-8")
    assert reference.goal(before) is None
    client = Client()
    client.force_login(User.objects.create_user("eve", password="pw"))
    page = BeautifulSoup(client.get(f"/a/coder/c/{canvas.filename}/preview/").content, "html.parser")
    form = one(page, ".no-goal form")
    assert one(form, "input[name=op]")["value"] == "agent_meta"
    response = client.post(attr(form, "action"), {"op": "agent_meta", "base": canvas.content_hash})
    assert response.status_code == 302
    after = path.read_text("utf-8")
    assert reference.strict_line_one(after)
    assert reference.goal(after) == "修复 CI 依赖缓存失效 (stale pnpm cache)"
    meta = reference.meta_object(after)
    assert meta is not None and {"progress", "createdTime", "updatedTime"} <= set(meta)
    body = after.splitlines()[1:]
    assert [line for line in before.splitlines() if not line.startswith("%%")] == body
    data = client.get(f"/a/coder/c/{canvas.filename}/preview/?format=json").json()
    assert "**任务目标:** 修复 CI 依赖缓存失效" in data["block"]
    # a second conversion has nothing to do
    canvas.refresh_from_db()
    answer = client.post(
        f"/a/coder/c/{canvas.filename}/ops/",
        json.dumps({"op": "agent_meta", "base": canvas.content_hash}),
        content_type="application/json",
    )
    assert answer.status_code == 400


def test_resume_creates_a_minimal_state_for_an_agent_without_one(all_fixtures: Path) -> None:
    agent_dir = all_fixtures / "fixture-a-upstream" / "main"
    (agent_dir / "state.json").unlink()
    canvas = Canvas.objects.get(filename="001-fix-login-timeout.mmd")
    result = services.canvas_resume(canvas=canvas, user=User.objects.create_user("fay", password="pw"))
    assert result.held
    raw = (agent_dir / "state.json").read_text("utf-8")
    assert json.loads(raw) == {
        "activeMmdFile": "001-fix-login-timeout.mmd",
        "activeMmdId": "fix-login-timeout",
    }
    assert raw.startswith('{\n  "activeMmdFile"') and not raw.endswith("\n")


def test_lint_warns_about_an_empty_shell_and_an_unread_goal(tmp_path: Path) -> None:
    agent = tmp_path / "root" / "shell"
    (agent / "mmds").mkdir(parents=True)
    (agent / "refs").mkdir()
    (agent / "mmds" / "001-tiny.mmd").write_text('flowchart TD\n    001-N1["tiny"]\n', "utf-8")
    ingest_path(tmp_path / "root")
    data = Client().get("/a/shell/c/001-tiny.mmd/lint/?format=json").json()
    messages = " ".join(w["message"] for w in data["agent_warnings"])
    assert "deletes this canvas when it switches task" in messages and "no task goal" in messages
    page = BeautifulSoup(Client().get("/a/shell/c/001-tiny.mmd/lint/").content, "html.parser")
    assert "deletes this canvas" in one(page, ".agent-warnings").get_text()
    # any edit through memviz gives it the line that keeps it
    canvas = Canvas.objects.get(filename="001-tiny.mmd")
    services.canvas_apply_edit(
        canvas=canvas, op="annotate", params={"node": "001-N1", "text": "keep me"},
        base_hash=canvas.content_hash, user=User.objects.create_user("gil", password="pw"),
    )
    text = (agent / "mmds" / "001-tiny.mmd").read_text("utf-8")
    assert reference.strict_line_one(text) and not reference.empty_shell(text)
