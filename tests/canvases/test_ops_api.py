"""The ops JSON API and its htmx twin: 200/400/403/409, CSRF, nothing written on error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.test import Client

from canvases.mermaid import content_hash, parse
from intake.ingest import ingest_agent_dir, ingest_path
from sessions.models import Canvas
from tests.pages import attr, one

pytestmark = pytest.mark.django_db
FILE = "002-migrate-orders-api.mmd"
OPS = f"/a/main/c/{FILE}/ops/"


@pytest.fixture
def agent_dir(fixtures_root: Path) -> Path:
    ingest_path(fixtures_root / "fixture-a-upstream")
    return fixtures_root / "fixture-a-upstream" / "main"


@pytest.fixture
def user(db) -> User:
    return User.objects.create_user("bob", password="pw")


@pytest.fixture
def client_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def base() -> str:
    return Canvas.objects.get(filename=FILE).content_hash


def post(client: Client, body: dict, **extra):
    return client.post(OPS, data=json.dumps(body), content_type="application/json", **extra)


def files(agent_dir: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(agent_dir.rglob("*")) if p.is_file()}


def test_merge_ok_returns_hash_and_revision(client_in: Client, agent_dir: Path) -> None:
    response = post(client_in, {"op": "merge", "base": base(), "nodes": ["002-N2", "002-N3"]})
    assert response.status_code == 200, response.content
    data = response.json()
    text = (agent_dir / "mmds" / FILE).read_text()
    assert data["hash"] == content_hash(text)
    assert data["revision"] >= 2 and data["op"] == "merge"
    assert data["rows_changed"] == 1
    assert "002-N3" not in parse(text).nodes


@pytest.mark.parametrize(
    "body",
    [
        {"op": "merge", "nodes": []},
        {"op": "merge", "nodes": ["002-N2", "002-N99"]},
        {"op": "annotate", "node": "002-N2", "text": "y" * 600},
        {"op": "annotate", "node": "002-N77", "text": "hi"},
        {"op": "prune"},
        {"op": "nope"},
        {"base": "x"},
    ],
)
def test_bad_request_is_400_and_writes_nothing(client_in: Client, agent_dir: Path, body) -> None:
    before = files(agent_dir)
    response = post(client_in, {"base": base(), **body})
    assert response.status_code == 400
    assert response.json()["error"]
    assert files(agent_dir) == before


def test_not_json_is_400(client_in: Client, agent_dir: Path) -> None:
    response = client_in.post(OPS, data="{nope", content_type="application/json")
    assert response.status_code == 400


def test_vanished_file_is_400(client_in: Client, agent_dir: Path) -> None:
    (agent_dir / "mmds" / FILE).unlink()
    response = post(client_in, {"op": "annotate", "base": base(), "node": "002-N2", "text": "x"})
    assert response.status_code in (400, 404)
    assert not (agent_dir / "mmds" / FILE).exists()


def test_anonymous_is_403_and_writes_nothing(agent_dir: Path) -> None:
    before = files(agent_dir)
    response = post(Client(), {"op": "annotate", "base": base(), "node": "002-N2", "text": "x"})
    assert response.status_code == 403
    assert files(agent_dir) == before


def test_csrf_enforced_for_session_users(user: User, agent_dir: Path) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    body = {"op": "annotate", "base": base(), "node": "002-N2", "text": "x"}
    assert post(client, body).status_code == 403
    page = client.get(f"/a/main/c/{FILE}/")
    token = page.cookies["csrftoken"].value
    assert post(client, body, HTTP_X_CSRFTOKEN=token).status_code == 200


def test_conflict_is_409_and_keeps_agent_text(client_in: Client, agent_dir: Path) -> None:
    old = base()
    path = agent_dir / "mmds" / FILE
    agent_text = path.read_text().replace("3 failed", "5 failed")
    path.write_text(agent_text)
    response = post(client_in, {"op": "annotate", "base": old, "node": "002-N3", "text": "x"})
    assert response.status_code == 409
    data = response.json()
    assert data["conflict"] and data["current_hash"] == content_hash(agent_text)
    assert "agent changed" in data["error"]
    assert path.read_text() == agent_text


def test_clean_reapply_is_200_and_says_so(client_in: Client, agent_dir: Path) -> None:
    old = base()
    path = agent_dir / "mmds" / FILE
    path.write_text(path.read_text().replace("3 failed", "5 failed"))  # 002-N3 only
    response = post(
        client_in, {"op": "set_status", "base": old, "node": "002-N5", "status": "done"}
    )
    assert response.status_code == 200
    data = response.json()
    assert data["reapplied_on_newer_text"] is True
    text = path.read_text()
    assert "5 failed" in text and parse(text).nodes["002-N5"].fields.status == "done"


def test_all_ops_through_api(client_in: Client, agent_dir: Path) -> None:
    steps: list[dict[str, object]] = [
        {"op": "annotate", "node": "002-N2", "text": "read the spec first"},
        {"op": "set_status", "node": "002-N5", "status": "done"},
        {"op": "edit", "node": "002-N1", "title": "orders v2", "summary": "the task"},
        {"op": "add_edge", "source": "002-N1", "target": "002-N5", "label": "then"},
        {"op": "remove_edge", "source": "002-N1", "target": "002-N5"},
        {"op": "set_meta", "task_goal": "Ship orders v2", "progress": 80},
        {"op": "prune", "node": "002-N4", "bridge": False},
        {"op": "undo"},
        {"op": "redo"},
    ]
    for step in steps:
        response = post(client_in, {"base": base(), **step})
        assert response.status_code == 200, (step, response.content)
    doc = parse((agent_dir / "mmds" / FILE).read_text())
    assert doc.meta.task_goal == "Ship orders v2" and doc.meta.progress == 80
    assert "002-N4" not in doc.nodes
    assert doc.nodes["002-N2"].fields.extra["note"] == "read the spec first"
    assert doc.nodes["002-N1"].fields.title == "orders v2"


def test_htmx_form_post_answers_only_the_changed_regions(client_in: Client, agent_dir: Path) -> None:
    response = client_in.post(
        OPS,
        {"op": "merge", "base": base(), "nodes": "002-N2,002-N3", "label": "merged"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    # no main swap: the regions come out of band, and the next edit's base hash in an event
    assert response["HX-Reswap"] == "none"
    assert json.loads(response["HX-Trigger"]) == {"memviz:canvas-edited": {"hash": base()}}
    soup = BeautifulSoup(response.content, "html.parser")
    assert soup.select_one("#editor") is None and soup.select_one(".op-form") is None
    assert [li["data-node"] for li in soup.select("#node-items li")] == [
        "002-N1",
        "002-N2",
        "002-N4",
        "002-N5",
    ]
    assert "merge written" in one(soup, "#flash").get_text()
    scene = json.loads(one(soup, "#scene-data script#canvas-scene").get_text())
    assert [n["id"] for n in scene["nodes"]] == ["002-N1", "002-N2", "002-N4", "002-N5"]
    assert one(soup, "#undo-redo #undo-button").get("disabled") is None
    assert one(soup, "#live")["data-hash"] == base()
    assert "4 nodes" in " ".join(one(soup, "#canvas-head").get_text().split())
    assert all(el.get("hx-swap-oob") for el in soup.find_all(recursive=False) if el.name)


def test_htmx_conflict_still_redraws_the_whole_editor(client_in: Client, agent_dir: Path) -> None:
    response = client_in.post(
        OPS,
        {"op": "annotate", "base": "sha256:stale", "node": "002-N2", "text": "late"},
        HTTP_HX_REQUEST="true",
    )
    soup = BeautifulSoup(response.content, "html.parser")
    editor = soup.select_one("#editor")
    assert editor is not None and editor["data-hash"] == base()
    assert "HX-Reswap" not in response
    assert soup.select_one("#flash .flash.error") is not None


def test_htmx_error_goes_to_flash(client_in: Client, agent_dir: Path) -> None:
    response = client_in.post(
        OPS,
        {"op": "annotate", "base": base(), "node": "002-N2", "text": ""},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#flash"
    soup = BeautifulSoup(response.content, "html.parser")
    assert "required" in one(soup, ".flash.error").get_text()


def test_canvas_page_shows_edit_controls_only_when_signed_in(
    client_in: Client, agent_dir: Path
) -> None:
    url = f"/a/main/c/{FILE}/"
    anonymous = BeautifulSoup(Client().get(url).content, "html.parser")
    assert anonymous.select_one(".edit-toolbar") is None
    assert anonymous.find("a", string="Log in to edit") is not None
    signed = BeautifulSoup(client_in.get(url).content, "html.parser")
    assert signed.select_one(".edit-toolbar") is not None
    assert {f["data-form"] for f in signed.select(".op-form")} >= {"merge", "annotate", "prune"}
    assert one(signed, "#live .badge").get_text() == "agent idle"
    data = client_in.get(url + "?format=json").json()
    assert data["editor"]["undo"] is None and data["content_hash"] == base()


def test_htmx_edit_form_blank_fields_leave_values(client_in: Client, agent_dir: Path) -> None:
    response = client_in.post(
        OPS,
        {"op": "edit", "base": base(), "node": "002-N5", "title": "money.py 完成", "summary": ""},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    node = parse((agent_dir / "mmds" / FILE).read_text()).nodes["002-N5"]
    assert node.fields.title == "money.py 完成"
    assert node.fields.summary == "to_money() 统一 quantize(0.01)，待全量回归"


def test_repair_of_a_one_line_canvas(client_in: Client, agent_dir: Path) -> None:
    """The plugin's parse-failure fallback writes one line full of literal \\n: repair it."""
    path = agent_dir / "mmds" / FILE
    good = path.read_text()
    path.write_text(good.replace("\n", "\\n"))
    ingest_agent_dir(agent_dir)  # the watcher's unit of work: pages only read
    page = BeautifulSoup(client_in.get(f"/a/main/c/{FILE}/").content, "html.parser")
    assert page.select_one("input[name=op][value=repair]") is not None
    response = post(client_in, {"op": "repair", "base": base()})
    assert response.status_code == 200, response.content
    repaired = path.read_text()
    assert repaired.count("\n") >= good.count("\n") - 1
    assert set(parse(repaired).nodes) == set(parse(good).nodes)


def test_a_merge_of_older_nodes_keeps_updated_time_and_the_head_says_who_edited(
    client_in: Client, agent_dir: Path
) -> None:
    """updatedTime is the newest node Timestamp (the agent's own rule, l2-prompt): merging two
    older nodes leaves it, so the page says when a person last changed the canvas."""
    before = parse((agent_dir / "mmds" / FILE).read_text()).meta.updated
    response = post(client_in, {"op": "merge", "base": base(), "nodes": ["002-N2", "002-N3"]})
    assert response.status_code == 200, response.content
    assert parse((agent_dir / "mmds" / FILE).read_text()).meta.updated == before
    head = BeautifulSoup(client_in.get(f"/a/main/c/{FILE}/").content, "html.parser")
    edited = head.select_one("#canvas-head a.last-edit")
    assert edited is not None and "(merge) by bob" in edited.get_text()
    assert attr(edited, "href").endswith(f"/history/{response.json()['revision']}/")
    data = client_in.get(f"/a/main/c/{FILE}/?format=json").json()
    assert data["editor"]["last_edit"]["op"] == "merge"
    assert data["editor"]["last_edit"]["at"].endswith("Z")
