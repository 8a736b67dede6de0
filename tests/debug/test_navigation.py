"""Navigation a debugger expects: node links, a 404 page that leads somewhere, compare any two."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.test import Client

from intake.ingest import ingest_path
from tests.debug import replay_fixture as rfx
from tests.pages import attr, one

pytestmark = pytest.mark.django_db


def test_timeline_node_id_links_to_the_node_on_its_canvas(fixtures_root: Path) -> None:
    ingest_path(fixtures_root / "fixture-a-upstream")
    page = BeautifulSoup(
        Client().get("/a/main/s/3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90/").content, "html.parser"
    )
    link = one(page, ".node-ref a")
    assert link.get_text() == "001-N2" and link["href"] == "/a/main/node/?id=001-N2"
    response = Client().get(attr(link, "href"))
    assert response.status_code == 302
    assert response["Location"] == "/a/main/c/001-fix-login-timeout.mmd/#node=001-N2"
    assert Client().get("/a/main/node/009-N9").status_code == 404


def test_a_pruned_nodes_link_names_the_change_that_removed_it(fixtures_root: Path) -> None:
    from django.contrib.auth.models import User

    from canvases import services
    from sessions.models import Canvas

    ingest_path(fixtures_root / "fixture-a-upstream")
    canvas = Canvas.objects.get(filename="002-migrate-orders-api.mmd")
    services.canvas_apply_edit(
        canvas=canvas,
        op="prune",
        params={"node": "002-N4", "bridge": True},
        base_hash=canvas.content_hash,
        user=User.objects.create_user("alice", password="pw"),
    )
    response = Client().get("/a/main/node/002-N4")
    assert response.status_code == 404
    page = BeautifulSoup(response.content, "html.parser")
    text = one(page, ".not-found").get_text(" ", strip=True)
    assert "002-N4" in text and "prune" in text and "alice" in text and "reclaimer" not in text
    links = [a["href"] for a in page.select(".not-found a")]
    pruned = canvas.revisions.get(op="prune").number
    assert links[0] == f"/a/main/c/002-migrate-orders-api.mmd/history/{pruned}/"
    assert Client().get(links[0]).status_code == 200
    # An id no canvas ever drew says so, without blaming anyone.
    never = BeautifulSoup(Client().get("/a/main/node/002-N99").content, "html.parser")
    assert "never drew" in one(never, ".not-found").get_text(" ", strip=True)


def test_odd_node_ids_still_render_and_link(tmp_path: Path) -> None:
    from tests.debug.memory_factory import canvas, node, write_agent

    odd = ["a/b N?1", "001-N1#x", "wait"]
    rows = [{"minutes": i, "tool": f"read: {i}", "node": n} for i, n in enumerate(odd)]
    write_agent(
        tmp_path, "odd", {"s1": rows}, {"001-x.mmd": canvas("g", [node("001-N1", "x", "done", 0)])}
    )
    ingest_path(tmp_path)
    page = BeautifulSoup(Client().get("/a/odd/s/s1/").content, "html.parser")
    links = [attr(a, "href") for a in page.select(".node-ref a")]
    assert links == ["/a/odd/node/?id=a%2Fb%20N%3F1", "/a/odd/node/?id=001-N1%23x"]  # not "wait"
    assert all(Client().get(url).status_code == 404 for url in links)
    for url in ("/a/odd/s/s1/replay/", "/a/odd/s/s1/diagnostics/", "/a/odd/s/s1/report.md"):
        assert Client().get(url).status_code == 200


def test_not_found_page_has_navigation(settings) -> None:
    settings.DEBUG = False
    response = Client().get("/a/nobody/s/nothing/replay/")
    assert response.status_code == 404
    page = BeautifulSoup(response.content, "html.parser")
    assert one(page, "h1").get_text() == "Not found"
    hrefs = {a["href"] for a in page.select(".not-found a")}
    assert {"/", "/sessions/"} <= hrefs
    assert page.select_one(".not-found form[role=search]") is not None
    assert page.select_one("header.topbar") is not None  # the usual header, search included


def test_compare_any_two_revisions(tmp_path: Path) -> None:
    rfx.build(tmp_path / "root")
    url = f"/a/watched/c/{rfx.FILE}/compare/"
    data = json.loads(Client().get(url, {"a": "1", "b": "3", "format": "json"}).content)
    # not adjacent: r2 between them added N3, r3 added N4 and dropped N2
    assert data["changes"] == {"added": ["001-N3", "001-N4"], "removed": ["001-N2"], "changed": []}
    assert data["a"]["label"] == "r1" and data["b"]["label"] == "r3"
    assert "-    001-N2" in data["diff"]
    assert "+    001-N3 --> 001-N4\n" in data["diff"]  # the last line, which has no newline
    same = json.loads(Client().get(url, {"a": "3", "b": "current", "format": "json"}).content)
    assert same["changes"] == {"added": [], "removed": [], "changed": []} and same["diff"] == ""
    assert Client().get(url, {"a": "9"}).status_code == 404
    page = BeautifulSoup(Client().get(url, {"a": "1", "b": "2"}).content, "html.parser")
    assert one(page, "span[data-changes='added']").get_text() == "001-N3"
    assert len(page.select(".static-diagram")) == 2
