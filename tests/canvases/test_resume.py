"""Resume from a canvas: state.json keeps every other byte, live refusal, preview block and sizes."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.test import Client

from agentfs.state_edit import CANVAS_BUDGET_CHARS
from intake.ingest import ingest_path
from sessions.models import Agent
from tests.pages import one

pytestmark = pytest.mark.django_db
FILE = "001-fix-login-timeout.mmd"
URL = f"/a/main/c/{FILE}/"


@pytest.fixture
def env(fixtures_root: Path):
    ingest_path(fixtures_root / "fixture-a-upstream")
    client = Client()
    client.force_login(User.objects.create_user("dave", password="pw"))
    return client, fixtures_root / "fixture-a-upstream" / "main"


def make_old(folder: Path) -> None:
    """Fixture copies keep their old mtimes; make sure nothing looks live."""
    past = time.time() - 3600
    for path in [folder / "state.json", *folder.glob("offload-*.jsonl"), *folder.glob("mmds/*")]:
        os.utime(path, (past, past))


def test_resume_sets_active_fields_only(env) -> None:
    client, folder = env
    make_old(folder)
    state = folder / "state.json"
    before = state.read_text()
    response = client.post(URL + "resume/", {}, HTTP_ACCEPT="application/json")
    assert response.status_code == 302
    after = state.read_text()
    expected = before.replace(
        '"002-migrate-orders-api.mmd"', '"001-fix-login-timeout.mmd"'
    ).replace('"migrate-orders-api"', '"fix-login-timeout"')
    assert after == expected  # every other byte kept, including no trailing newline
    assert json.loads(after)["mmdCounter"] == 2
    agent = Agent.objects.get(slug="main")
    assert agent.active_mmd_file == FILE
    page = BeautifulSoup(client.get(URL).content, "html.parser")
    assert page.select_one(".canvas-head .badge.active") is not None


def test_resume_json_api_and_live_refusal(env) -> None:
    client, folder = env
    state = folder / "state.json"
    (folder / next(folder.glob("offload-*.jsonl")).name).touch()  # the agent just wrote
    before = state.read_bytes()
    response = client.post(URL + "resume/", "{}", content_type="application/json")
    assert response.status_code == 409
    assert "Stop it first" in response.json()["error"]
    assert state.read_bytes() == before
    response = client.post(
        URL + "resume/", json.dumps({"confirm_live": True}), content_type="application/json"
    )
    assert response.status_code == 200
    assert response.json() == {
        "held": True,
        "active": FILE,
        "message": f"{FILE} is now the active canvas in state.json",
    }
    assert json.loads(state.read_text())["activeMmdFile"] == FILE


def test_resume_needs_login(env) -> None:
    _client, folder = env
    before = (folder / "state.json").read_bytes()
    response = Client().post(URL + "resume/", "{}", content_type="application/json")
    assert response.status_code == 403
    assert (folder / "state.json").read_bytes() == before


def test_preview_shows_block_and_sizes(env) -> None:
    client, folder = env
    text = (folder / "mmds" / FILE).read_text()
    data = client.get(URL + "preview/?format=json").json()
    block = data["block"]
    assert block.startswith("<current_task_context>") and block.endswith("</current_task_context>")
    assert f"**任务文件:** {FILE}" in block
    assert "```mermaid\n" + text + "\n```" in block
    assert data["canvas_chars"] == len(text) and data["block_chars"] == len(block)
    assert data["budget_chars"] == CANVAS_BUDGET_CHARS and data["over_budget"] is False
    assert 0 < data["block_tokens"] < data["block_chars"]
    soup = BeautifulSoup(client.get(URL + "preview/").content, "html.parser")
    assert one(soup, "pre.resume-block").get_text() == block
    assert one(soup, ".canvas-chars").get_text() == str(len(text))
    assert one(soup, "form.resume-form button").get_text() == "Resume from this canvas"


def test_lint_panel(env) -> None:
    client, _folder = env
    data = client.get("/a/main/c/002-migrate-orders-api.mmd/lint/?format=json").json()
    assert data["unmapped_rows"] == 1
    assert {n["id"] for n in data["nodes_without_rows"]} >= {"002-N1"}
    assert data["over_budget"] is False
    soup = BeautifulSoup(
        client.get("/a/main/c/002-migrate-orders-api.mmd/lint/", HTTP_HX_REQUEST="true").content,
        "html.parser",
    )
    assert soup.select_one(".lint-panel") is not None


def test_lint_lists_pruned_rows_and_offers_to_merge_them(env) -> None:
    client, folder = env
    url = "/a/main/c/002-migrate-orders-api.mmd/"
    base = client.get(url + "?format=json").json()["content_hash"]
    body = {"op": "prune", "base": base, "node": "002-N4"}
    assert (
        client.post(url + "ops/", json.dumps(body), content_type="application/json").status_code
        == 200
    )
    data = client.get(url + "lint/?format=json").json()
    assert {"node_id": "002-N4", "rows": 1, "pruned": True} in data["rows_on_no_canvas"]
    soup = BeautifulSoup(client.get(url + "lint/").content, "html.parser")
    form = one(soup, ".lint-panel form")
    assert one(form, "input[name=op]")["value"] == "adopt"
    assert one(form, "input[name=from]")["value"] == "002-N4"
    response = client.post(
        url + "ops/",
        {"op": "adopt", "from": "002-N4", "node": "002-N5", "base": data["content_hash"]},
    )
    assert response.status_code == 302
    rows = [
        json.loads(line)
        for path in folder.glob("offload-*.jsonl")
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    assert not [r for r in rows if r.get("node_id") == "002-N4"]
