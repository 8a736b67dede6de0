"""The canvas page and node panel on real-shaped and broken canvases (read-only behaviour)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from django.test import Client

from canvases import services
from intake.ingest import ingest_path
from sessions.models import Canvas
from tests.pages import one

pytestmark = pytest.mark.django_db


@pytest.fixture
def upstream(fixtures_root: Path) -> Path:
    ingest_path(fixtures_root / "fixture-a-upstream")
    return fixtures_root / "fixture-a-upstream" / "main"


def test_canvas_json_carries_meta_nodes_edges_raw_and_hash(client: Client, upstream: Path) -> None:
    data = client.get("/a/main/c/002-migrate-orders-api.mmd/?format=json").json()
    raw = (upstream / "mmds" / "002-migrate-orders-api.mmd").read_text("utf-8")
    assert data["raw"] == raw
    assert len(data["content_hash"]) == 64
    assert data["meta"]["task_goal"].startswith("把 orders API 迁移到 v2")
    assert data["meta"]["progress"] == 55
    assert data["meta"]["updated"] == "2026-06-11T14:15:30.004+08:00"
    nodes = {n["id"]: n for n in data["nodes"]}
    assert list(nodes) == [f"002-N{i}" for i in range(1, 6)]
    assert nodes["002-N2"]["rows"] == 2  # merged from two sessions
    assert nodes["002-N3"]["shape"] == "hexagon"
    assert nodes["002-N4"]["status"] == "blocked"
    assert nodes["002-N5"]["subgraph"] == "impl"
    assert nodes["002-N5"]["timestamp"] == "2026-06-11T14:15:30.004+08:00"
    edges = {(e["source"], e["target"]): e for e in data["edges"]}
    assert edges[("002-N3", "002-N4")]["label"] == "测试失败"
    assert edges[("002-N4", "002-N5")]["kind"] == "dotted"
    assert data["active"] is True
    # mermaid gets a body without the plugin's header, which it would reject
    assert not data["render_body"].lstrip().startswith("%%{")


def test_canvas_page_lists_nodes_and_carries_the_scene_not_the_render_body(
    client: Client, upstream: Path
) -> None:
    response = client.get("/a/main/c/002-migrate-orders-api.mmd/")
    page = BeautifulSoup(response.content, "html.parser")
    assert [li["data-node"] for li in page.select(".node-list li")] == [
        f"002-N{i}" for i in range(1, 6)
    ]
    # the page draws from the scene; the render-ready text (for export) is in the JSON twin only
    scene = json.loads(one(page, "script#canvas-scene").get_text())
    assert [n["id"] for n in scene["nodes"]] == [f"002-N{i}" for i in range(1, 6)]
    assert page.select_one("script#render-body") is None
    data = client.get("/a/main/c/002-migrate-orders-api.mmd/?format=json").json()
    assert "taskGoal" not in data["render_body"] and "flowchart TD" in data["render_body"]
    # the JSON twin carries the very scene the page draws (selectors compute it, not a template)
    assert data["scene"] == scene
    assert page.select_one(".legend") is not None


def test_revision_and_compare_json_carry_the_scenes_their_pages_draw(
    client: Client, upstream: Path, django_user_model: Any
) -> None:
    canvas = Canvas.objects.get(filename="002-migrate-orders-api.mmd")
    number = services.canvas_apply_edit(
        canvas=canvas,
        op="annotate",
        params={"node": "002-N2", "text": "看这里"},
        base_hash=canvas.content_hash,
        user=django_user_model.objects.create_user("ann", password="pw"),
    ).revision.number
    base = "/a/main/c/002-migrate-orders-api.mmd"
    for url, keys in (
        (f"{base}/history/{number}/", ["before", "after"]),
        (f"{base}/compare/?a={number}&b=current", ["a", "b"]),
    ):
        page = BeautifulSoup(client.get(url).content, "html.parser")
        data = client.get(url + ("&" if "?" in url else "?") + "format=json").json()
        assert [p["key"] for p in data["pictures"]] == keys, url
        for picture in data["pictures"]:
            drawn = json.loads(one(page, f"script#{picture['key']}-scene").get_text())
            assert drawn["nodes"] and picture["scene"] == drawn, (url, picture["key"])
            colours = json.loads(one(page, f"script#{picture['key']}-mermaid").get_text())
            assert colours == picture["mermaid"], (url, picture["key"])


def test_node_json_has_rows_across_sessions_with_ref_existence(
    client: Client, upstream: Path
) -> None:
    data = client.get("/a/main/c/002-migrate-orders-api.mmd/n/002-N2/?format=json").json()
    assert data["node"]["status"] == "done"
    sessions = {r["session"] for r in data["rows"]}
    assert len(sessions) == 2
    assert all(r["ref"]["exists"] for r in data["rows"])
    assert {r["ref"]["name"] for r in data["rows"]} == {
        "refs/2026-06-10T10-02-11-530p08-00.md",
        "refs/2026-06-11T14-03-27-118p08-00.md",
    }


def test_broken_canvases_are_listed_with_problems_never_a_500(
    client: Client, upstream: Path
) -> None:
    mmds = upstream / "mmds"
    (mmds / "003-oneliner.mmd").write_text(
        '```mermaid\\nflowchart TD\\n    003-N1[\\"x\\"]\\n    003-N1 --> 003-N2\\n```', "utf-8"
    )
    (mmds / "004-garbage.mmd").write_bytes(b"\xff\xfe not mermaid at all {{{ [[[ ((( \x00")
    (mmds / "005-unclosed.mmd").write_text(
        'flowchart TD\n  005-N1["never closed\n  A --> B\n', "utf-8"
    )
    ingest_path(upstream)
    agent = client.get("/a/main/?format=json").json()
    listed = {c["file"]: c for c in agent["canvases"]}
    assert {"003-oneliner.mmd", "004-garbage.mmd", "005-unclosed.mmd"} <= set(listed)
    for name in ("003-oneliner.mmd", "004-garbage.mmd", "005-unclosed.mmd"):
        response = client.get(f"/a/main/c/{name}/")
        assert response.status_code == 200, name
        data = client.get(f"/a/main/c/{name}/?format=json").json()
        assert data["raw"]
        assert data["problems"], name
    assert client.get("/a/main/c/003-oneliner.mmd/?format=json").json()["escaped_oneliner"] is True
    unclosed = client.get("/a/main/c/005-unclosed.mmd/?format=json").json()
    assert unclosed["has_errors"] is True
    assert any(p["line"] == 2 for p in unclosed["problems"])


def test_viewing_never_changes_files_on_disk(client: Client, upstream: Path) -> None:
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in upstream.rglob("*") if p.is_file()}
    for url in [
        "/a/main/",
        "/a/main/c/002-migrate-orders-api.mmd/",
        "/a/main/c/002-migrate-orders-api.mmd/?format=json",
        "/a/main/c/002-migrate-orders-api.mmd/n/002-N2/",
        "/a/main/refs/2026-06-10T10-02-11-530p08-00.md",
    ]:
        assert client.get(url).status_code == 200
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in upstream.rglob("*") if p.is_file()}
    assert after == before


def test_canvas_changed_on_disk_is_noticed_not_synced_by_a_page_view(
    client: Client, upstream: Path
) -> None:
    """Reads never write: the page says the file changed; the re-sync action indexes it."""
    from canvases.models import Revision

    mmd = upstream / "mmds" / "001-fix-login-timeout.mmd"
    mmd.write_text(mmd.read_text("utf-8") + '\n    001-N4["新: step<br/>status: doing"]\n', "utf-8")
    revisions = Revision.objects.count()
    data = client.get("/a/main/c/001-fix-login-timeout.mmd/?format=json").json()
    assert data["editor"]["disk"] == {"missing": False, "changed": True}
    assert "001-N4" not in {n["id"] for n in data["nodes"]}  # the index is as it was
    page = BeautifulSoup(client.get("/a/main/c/001-fix-login-timeout.mmd/").content, "html.parser")
    assert "changed on disk" in one(page, "#live").get_text()
    assert Revision.objects.count() == revisions
    assert client.post("/a/main/c/001-fix-login-timeout.mmd/sync/?format=json").status_code == 403
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_user("bob", password="pw"))
    answer = client.post("/a/main/c/001-fix-login-timeout.mmd/sync/?format=json").json()
    assert answer == {"changed": True}
    data = client.get("/a/main/c/001-fix-login-timeout.mmd/?format=json").json()
    assert "001-N4" in {n["id"] for n in data["nodes"]}
    assert data["editor"]["disk"]["changed"] is False
    latest = Revision.objects.order_by("-id").first()
    assert latest is not None and latest.author == "agent" and latest.op == "disk"


def test_large_canvas_opens_as_overview_and_expands(client: Client, tmp_path: Path) -> None:
    agent = tmp_path / "root" / "big"
    (agent / "mmds").mkdir(parents=True)
    (agent / "refs").mkdir()  # the plugin creates both folders with the agent
    lines = ["flowchart TD"]
    for group in range(5):
        lines.append(f"  subgraph g{group} [阶段 {group}]")
        lines += [f'    001-N{group * 20 + i}["step {i}<br/>status: done"]' for i in range(20)]
        lines.append("  end")
    lines += [f"  001-N{i} --> 001-N{i + 1}" for i in range(99)]
    (agent / "mmds" / "001-big.mmd").write_text("\n".join(lines) + "\n", "utf-8")
    ingest_path(tmp_path / "root")
    overview = client.get("/a/big/c/001-big.mmd/?format=json").json()
    assert overview["collapsed"] == [f"g{i}" for i in range(5)]
    assert "001-N7[" not in overview["render_body"]
    focus = client.get("/a/big/c/001-big.mmd/?format=json&collapsed=g1,g2,g3,g4").json()
    assert "001-N7" in focus["render_body"] and "001-N27[" not in focus["render_body"]
    full = client.get("/a/big/c/001-big.mmd/?format=json&collapsed=").json()
    assert full["collapsed"] == []


def test_the_legend_says_how_many_nodes_wear_the_authors_colours(
    client: Client, upstream: Path
) -> None:
    """The author's classDef colours win over memviz's status colours (issue 21); the legend says
    so, and a canvas the author did not colour has no such entry."""
    coloured = BeautifulSoup(client.get("/a/main/c/002-migrate-orders-api.mmd/").content, "html.parser")
    entry = coloured.select_one(".map-legend .legend-author")
    assert entry is not None and "(1 node)" in entry.get_text()
    plain = BeautifulSoup(client.get("/a/main/c/001-fix-login-timeout.mmd/").content, "html.parser")
    assert plain.select_one(".map-legend") is not None
    assert plain.select_one(".map-legend .legend-author") is None
