"""The browse pages and their JSON twins, on the spec's example roots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.test import Client

from intake.ingest import ingest_path
from tests.pages import attr, one, streamed

pytestmark = pytest.mark.django_db


@pytest.fixture
def wild(fixtures_root: Path) -> Path:
    ingest_path(fixtures_root / "fixture-b-wild")
    return fixtures_root / "fixture-b-wild" / "coder"


@pytest.fixture
def upstream(fixtures_root: Path) -> Path:
    ingest_path(fixtures_root / "fixture-a-upstream")
    return fixtures_root / "fixture-a-upstream" / "main"


def soup(response) -> BeautifulSoup:
    assert response.status_code == 200, response.content[:500]
    return BeautifulSoup(response.content, "html.parser")


def test_home_lists_agents_with_counts_and_compression(client: Client, upstream: Path) -> None:
    page = soup(client.get("/"))
    row = page.select_one("table.agents tbody tr")
    assert row is not None
    assert one(row, "a").get_text() == "main"
    cells = [td.get_text(strip=True) for td in row.select("td")]
    assert cells[1:5] == ["2", "2", "9", "1"]
    data = client.get("/?format=json").json()
    agent = data["agents"][0]
    assert agent["rows"] == 9 and agent["unmapped_rows"] == 1
    assert agent["compression"]["refs_to_summaries"] > 1
    assert page.select_one('link[rel="alternate"][type="application/json"]') is not None


def test_agent_page_marks_active_canvas_and_lists_unplaced(client: Client, wild: Path) -> None:
    page = soup(client.get("/a/coder/"))
    active = page.select("tr.active a")
    assert active and active[0].get_text() == "004-修复CI缓存.mmd"
    data = client.get("/a/coder/?format=json").json()
    assert data["unplaced_by_kind"]["wait"] == 1
    assert data["unplaced_by_kind"]["dangling"] >= 1  # 004-N9 is on no canvas
    unplaced_ids = {r["tool_call_id"] for r in data["unplaced"]}
    assert "call_02_Xl6Uo9NlP2" in unplaced_ids
    assert data["state"]["data"]["reviewedBy"] == "ops-console"


def test_session_timeline_filters_and_paginates(client: Client, wild: Path) -> None:
    data = client.get("/a/coder/s/main/?format=json").json()
    assert data["count"] == 5
    assert [p["kind"] for p in data["session"]["problems"]].count("invalid") == 1
    unmapped = client.get("/a/coder/s/main/?format=json&unmapped=1").json()
    assert {r["node_id"] for r in unmapped["rows"]} <= {None, "wait"}
    assert unmapped["count"] == 2
    deleted = client.get("/a/coder/s/main/?format=json&offloaded=deleted").json()
    assert deleted["count"] == 1 and deleted["rows"][0]["offloaded"] == "deleted"
    scored = client.get("/a/coder/s/main/?format=json&min_score=8").json()
    assert all(r["score"] >= 8 for r in scored["rows"]) and scored["count"] >= 1
    node = client.get("/a/coder/s/main/?format=json&node=N2").json()
    assert node["count"] == 1
    # the htmx request gets only the timeline partial
    partial = client.get("/a/coder/s/main/?unmapped=1", HTTP_HX_REQUEST="true")
    assert b"<html" not in partial.content and b'id="timeline"' in partial.content


def test_session_pagination(client: Client, tmp_path: Path) -> None:
    agent = tmp_path / "root" / "big"
    agent.mkdir(parents=True)
    rows = [json.dumps({"tool_call_id": f"c{i}", "summary": f"s{i}"}) for i in range(120)]
    (agent / "offload-s.jsonl").write_text("\n".join(rows) + "\n", "utf-8")
    ingest_path(tmp_path / "root")
    first = client.get("/a/big/s/s/?format=json").json()
    third = client.get("/a/big/s/s/?format=json&page=3").json()
    assert first["pages"] == 3 and len(first["rows"]) == 50
    assert [r["tool_call_id"] for r in third["rows"]] == [f"c{i}" for i in range(100, 120)]


def test_ref_page_shows_text_inside_stringified_tool_result(client: Client, upstream: Path) -> None:
    data = client.get("/a/main/refs/2026-06-10T09-12-03-417p08-00.md?format=json").json()
    assert data["tool"] == "read" and data["call_id"] == "call_00_Jk3mQ8vTz1"
    assert data["unwrapped_text"].startswith('import { redis } from "../infra/redis";\n')
    page = soup(client.get("/a/main/refs/2026-06-10T09-12-03-417p08-00.md"))
    assert "export const SESSION_TTL = 1800;" in one(page, ".result").get_text()
    assert page.select_one("details.raw") is not None  # the raw JSON is a click away
    raw = client.get("/a/main/refs/2026-06-10T09-12-03-417p08-00.md?raw=1")
    assert raw["Content-Type"].startswith("text/plain")
    assert streamed(raw) == (upstream / "refs/2026-06-10T09-12-03-417p08-00.md").read_bytes()


def test_hostile_ref_renders_inert(client: Client, upstream: Path) -> None:
    hostile = (
        "# Tool Result: exec\n\n**Timestamp:** x\n\n---\n\n**Tool:** exec\n"
        "**Call ID:** evil <script>alert(1)</script><img src=x onerror=alert(2)>\n"
        "[click](javascript:alert(3))\n\n**Result:**\n```\n</pre><script>alert(4)</script>\n```"
    )
    (upstream / "refs" / "evil.md").write_text(hostile, "utf-8")
    ingest_path(upstream, full=True)  # a ref without a row
    response = client.get("/a/main/refs/evil.md")
    page = soup(response)
    body = one(page, ".ref-view")
    assert body.find("script") is None
    assert not [t for t in body.find_all(True) if any(a.startswith("on") for a in t.attrs)]
    assert not [a for a in body.find_all("a") if "javascript:" in (a.get("href") or "")]
    assert "alert(4)" in body.get_text()  # shown as text, not executed


def test_ref_outside_agent_folder_is_refused(client: Client, upstream: Path) -> None:
    (upstream.parent / "secret.md").write_text("top secret", "utf-8")
    response = client.get("/a/main/refs/../secret.md?format=json")
    assert response.status_code in (400, 404)
    assert b"top secret" not in response.content
    jsonl = upstream / "offload-3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90.jsonl"
    with open(jsonl, "a", encoding="utf-8") as handle:
        handle.write(
            json.dumps({"tool_call_id": "esc", "node_id": "001-N2", "result_ref": "../secret.md"})
            + "\n"
        )
    ingest_path(upstream)
    node = client.get("/a/main/c/001-fix-login-timeout.mmd/n/001-N2/?format=json").json()
    escaped = next(r for r in node["rows"] if r["tool_call_id"] == "esc")
    assert escaped["ref"]["error"].startswith("refused")
    assert escaped["ref"]["exists"] is False


def test_large_ref_is_paged(client: Client, upstream: Path, settings) -> None:
    settings.MEMVIZ_REF_PAGE_BYTES = 4096
    body = "\n".join(f"line {i} " + "x" * 60 for i in range(2000))
    (upstream / "refs" / "big.md").write_text(
        f"# Tool Result: read\n\n**Result:**\n```\n{body}\n```", "utf-8"
    )
    ingest_path(upstream, full=True)  # a ref without a row
    first = client.get("/a/main/refs/big.md?format=json").json()
    assert first["paged"] is True
    assert len(first["text"].encode()) <= 4096 + 4
    second = client.get(f"/a/main/refs/big.md?format=json&offset={first['next_offset']}").json()
    assert second["offset"] == first["next_offset"]
    assert second["text"] and second["text"] != first["text"]


def test_missing_ref_says_so(client: Client, wild: Path) -> None:
    node = client.get("/a/coder/c/004-修复CI缓存.mmd/n/004-N2/?format=json").json()
    assert {r["tool_call_id"] for r in node["rows"]} == {"call_00_Zt8Wq1PnR4", "call_01_Ym7Vp0OmQ3"}
    response = client.get("/a/coder/refs/2026-06-13T11-31-12-040p08-00.md")
    assert response.status_code == 404
    assert "missing" in soup_text(response)


def soup_text(response) -> str:
    return BeautifulSoup(response.content, "html.parser").get_text()


def test_search_across_agents(client: Client, upstream: Path, wild: Path) -> None:
    data = client.get("/search/?q=pytest&format=json").json()
    assert {r["agent"] for r in data["rows"]} == {"main"}
    assert any(n["node_id"] == "002-N3" for n in data["nodes"])
    chinese = client.get("/search/?q=修复&format=json").json()
    assert ("coder", "003-N4") in {(n["agent"], n["node_id"]) for n in chinese["nodes"]}
    cache = client.get("/search/?q=lockfile&format=json").json()
    assert any(r["agent"] == "coder" for r in cache["rows"])


def test_unknown_agent_is_404(client: Client, upstream: Path) -> None:
    assert client.get("/a/nobody/").status_code == 404


def test_huge_ref_is_served_a_page_at_a_time(client: Client, upstream: Path) -> None:
    import tracemalloc

    huge = upstream / "refs" / "huge.md"
    with open(huge, "w", encoding="utf-8") as handle:
        handle.write("# Tool Result: read\n\n**Result:**\n```\n")
        line = "日志 " + "x" * 1000 + "\n"
        for _ in range(30_000):  # ~30 MB
            handle.write(line)
        handle.write("```")
    ingest_path(upstream, full=True)  # a ref without a row
    tracemalloc.start()
    response = client.get("/a/main/refs/huge.md?format=json")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    data = response.json()
    assert data["total_bytes"] > 30_000_000
    assert data["paged"] is True and len(data["text"].encode()) <= 64 * 1024 + 4
    assert peak < 8 * 1024 * 1024  # a page, not the file


def test_viewing_needs_login_when_not_bound_to_loopback(
    client: Client, upstream: Path, settings, django_user_model
) -> None:
    settings.MEMVIZ_ANONYMOUS_VIEW = False
    response = client.get("/a/main/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert client.get("/a/main/?format=json").status_code == 403
    django_user_model.objects.create_user("ana", password="pw-123456")
    assert client.login(username="ana", password="pw-123456")
    assert client.get("/a/main/").status_code == 200


def test_home_headers_say_which_canvases_column_counts_and_which_weighs(
    client: Client, upstream: Path
) -> None:
    page = soup(client.get("/"))
    groups = [th.get_text(strip=True) for th in page.select("table.agents thead th.group")]
    assert groups == ["Counts", "Size on disk"]
    names = [th.get_text(strip=True) for th in page.select("table.agents thead tr:nth-of-type(2) th")]
    assert names.count("Canvases") == 1 and "Canvas text" in names
    assert "refs → row summaries" in one(page, "#compression-note").get_text()


def test_sessions_are_listed_newest_first_whatever_their_ids(client: Client, tmp_path: Path) -> None:
    agent = tmp_path / "root" / "a"
    agent.mkdir(parents=True)
    stamps = {"aaa": "2026-06-01T10:00:00+08:00", "bbb": "2026-06-03T01:00:00Z", "ccc": "2026-06-02T23:30:00-05:00"}
    for sid, stamp in stamps.items():
        row = {"tool_call_id": f"c-{sid}", "summary": "s", "timestamp": stamp}
        (agent / f"offload-{sid}.jsonl").write_text(json.dumps(row) + "\n", "utf-8")
    ingest_path(tmp_path / "root")
    listed = [s["id"] for s in client.get("/a/a/?format=json").json()["sessions"]]
    # ccc is 2026-06-03T04:30Z, bbb 01:00Z, aaa 2026-06-01T02:00Z: instants, not strings
    assert listed == ["ccc", "bbb", "aaa"]
    page = soup(client.get("/a/a/"))
    assert [a.get_text() for a in page.select("a[href^='/a/a/s/']")][:3] == listed


def test_a_rows_session_link_opens_the_page_that_holds_it(client: Client, tmp_path: Path) -> None:
    agent = tmp_path / "root" / "big"
    (agent / "mmds").mkdir(parents=True)
    (agent / "mmds" / "001-t.mmd").write_text('flowchart TD\n    001-N1["late<br/>status: done"]\n')
    rows = [
        {"tool_call_id": f"c{i}", "summary": f"s{i}", "node_id": "001-N1" if i == 130 else None}
        for i in range(150)
    ]
    (agent / "offload-s.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    ingest_path(tmp_path / "root")
    panel = soup(client.get("/a/big/c/001-t.mmd/n/001-N1/"))
    link = one(panel, ".rows a[href*='/s/s/']")
    assert link.get_text() == "s:131"
    timeline = soup(client.get(attr(link, "href")))
    anchor = attr(link, "href").split("#", 1)[1]
    assert timeline.select_one(f"li#{anchor}") is not None  # page 3 of 3, not page 1


def test_the_ref_page_leads_back_to_the_page_it_was_opened_from(
    client: Client, upstream: Path
) -> None:
    ref = "/a/main/refs/2026-06-10T09-12-03-417p08-00.md"
    came_from = "/a/main/c/001-fix-login-timeout.mmd/?x=1#node=001-N2"
    page = soup(client.get(ref, HTTP_REFERER=f"http://testserver{came_from}"))
    assert one(page, "p.back a")["href"] == came_from
    elsewhere = soup(client.get(ref, HTTP_REFERER="https://evil.example/a/main/"))
    assert elsewhere.select_one("p.back") is None  # never a link off this site
