"""History pages: revisions by user and by agent, text and visual diff, restore, undo/redo over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.test import Client

from intake.ingest import ingest_agent_dir, ingest_path
from sessions.models import Canvas
from tests.pages import attr, one

pytestmark = pytest.mark.django_db
FILE = "002-migrate-orders-api.mmd"
URL = f"/a/main/c/{FILE}/"


@pytest.fixture
def env(fixtures_root: Path):
    ingest_path(fixtures_root / "fixture-a-upstream")
    client = Client()
    client.force_login(User.objects.create_user("carol", password="pw"))
    return client, fixtures_root / "fixture-a-upstream" / "main" / "mmds" / FILE


def op(client: Client, **body):
    body.setdefault("base", Canvas.objects.get(filename=FILE).content_hash)
    response = client.post(URL + "ops/", json.dumps(body), content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def test_history_lists_user_and_agent_revisions(env) -> None:
    client, path = env
    op(client, op="annotate", node="002-N2", text="hello")
    path.write_text(path.read_text().replace("待全量回归", "回归完成"))  # the agent rewrites
    client.get(URL)  # the page notices the rewrite
    op(client, op="merge", nodes=["002-N2", "002-N3"])
    soup = BeautifulSoup(client.get(URL + "history/").content, "html.parser")
    rows = soup.select("table.revisions tbody tr")
    ops = [r.select("td")[3].get_text(" ", strip=True).split()[0] for r in rows]
    assert ops == ["merge", "disk", "annotate", "imported"]
    authors = [r.select("td")[2].get_text(strip=True) for r in rows]
    assert authors == ["carol", "agent", "carol", "agent"]
    data = client.get(URL + "history/?format=json").json()
    assert data["revisions"][0]["node_map"] == {"002-N3": "002-N2"}


def test_revision_page_has_text_and_visual_diff(env) -> None:
    client, _path = env
    out = op(client, op="merge", nodes=["002-N2", "002-N3"])
    page = client.get(URL + f"history/{out['revision']}/")
    soup = BeautifulSoup(page.content, "html.parser")
    assert soup.select(".text-diff .del") and soup.select(".text-diff .add")
    before, after = soup.select(".static-diagram")
    assert before["data-removed"] == "002-N3"
    assert after["data-changed"] == "002-N2"
    data = client.get(URL + f"history/{out['revision']}/?format=json").json()
    assert data["changes"] == {"added": [], "removed": ["002-N3"], "changed": ["002-N2"]}
    assert client.get(URL + "history/999/").status_code == 404


def test_restore_over_http_is_a_new_revision(env) -> None:
    client, path = env
    original = path.read_bytes()
    op(client, op="annotate", node="002-N2", text="one")
    op(client, op="annotate", node="002-N3", text="two")
    canvas = Canvas.objects.get(filename=FILE)
    response = client.post(URL + "history/1/restore/", {"base": canvas.content_hash})
    assert response.status_code == 302
    assert path.read_bytes() == original
    latest = canvas.revisions.order_by("-number").first()
    assert latest is not None
    assert latest.op == "restore" and latest.params == {"revision": 1} and latest.number == 4
    # anonymous users cannot restore
    assert Client().post(URL + "history/2/restore/?format=json").status_code == 403


def test_undo_redo_over_http(env) -> None:
    client, path = env
    original = path.read_text()
    merged = op(client, op="merge", nodes=["002-N2", "002-N3"])["text"]
    op(client, op="undo")
    assert path.read_text() == original
    op(client, op="redo")
    assert path.read_text() == merged
    op(client, op="undo")
    response = client.post(
        URL + "ops/", json.dumps({"op": "undo"}), content_type="application/json"
    )
    assert response.status_code == 400 and "nothing to undo" in response.json()["error"]
    canvas = Canvas.objects.get(filename=FILE)
    merge_revision = canvas.revisions.get(op="merge")
    assert merge_revision.undone


def test_live_panel_offers_reapply_after_agent_drops_note(env) -> None:
    client, path = env
    op(client, op="annotate", node="002-N5", text="double-check rounding")
    path.write_text(path.read_text().replace("<br/>note: double-check rounding", ""))
    ingest_agent_dir(path.parent.parent)  # the watcher's unit of work: pages only read
    soup = BeautifulSoup(client.get(URL + "live/").content, "html.parser")
    assert "dropped 1" in one(soup, ".dropped").get_text()
    form = one(soup, ".dropped form")
    assert one(form, "input[name=op]")["value"] == "reapply"
    revision = attr(one(form, "input[name=revision]"), "value")
    # the agent just rewrote the canvas: without a confirmation re-apply is refused, with why
    response = client.post(
        URL + "ops/", {"op": "reapply", "revision": int(revision)}, content_type="application/json"
    )
    assert response.status_code == 409
    assert "may drop this edit again" in response.content.decode()
    # the panel's button is the confirmation (it says the agent is live)
    assert one(form, "input[name=confirm_live]")["value"] == "1"
    fields = {i["name"]: i["value"] for i in form.select("input[type=hidden]")}
    response = client.post(URL + "ops/", fields, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "note: double-check rounding" in path.read_text()
    soup = BeautifulSoup(client.get(URL + "live/").content, "html.parser")
    assert soup.select_one(".dropped") is None
