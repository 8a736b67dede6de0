"""Search through the databases' text indexes finds what a plain substring scan finds (issue 11).

Every test compares with a brute-force scan of the tables in Python (case-insensitive
substring, as the old ``icontains`` search did), on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from canvases import services
from intake.ingest import ingest_agent_dir, ingest_path
from sessions import search, search_postgres
from sessions.models import Agent, AgentSession, Canvas, CanvasNode, Ref, Row
from tests.pages import attr, one

pytestmark = pytest.mark.django_db
SID = "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90"
# Whole words, CJK of 2 and more characters, ids, paths, punctuation, LIKE wildcards.
QUERIES = [
    "pytest",
    "修复",
    "缓存",
    "测试失败",
    "lockfile",
    "SESSION_TTL",
    "session",
    "orders",
    "src/auth",
    "001-N",
    "v2",
    "helm template",
    "%s",
    "_T",
    "nothing-like-this",
]
# Substrings inside words: found on SQLite (trigrams); PostgreSQL matches words from their start.
INFIX_QUERIES = ["ockfil", "ession", "ea"]


def scan(model, columns: tuple[str, ...], query: str) -> set[int]:
    needle = query.lower()
    return {
        values[0]
        for values in model.objects.values_list("pk", *columns)
        if any(needle in (v or "").lower() for v in values[1:])
    }


def everything(query: str, filters: search.Filters | None = None, limit: int = 50) -> dict:
    """Follow "more" until the end; check newest-first order and no repeats on the way."""
    filters = filters or search.Filters()
    out: dict[str, list[int]] = {"nodes": [], "rows": []}
    cursors: dict[str, int | None] = {"nodes": None, "rows": None}
    for kind in out:
        while True:
            found = search.search_ids(
                query,
                filters,
                limit=limit,
                kinds=(kind,),
                **{f"{kind}_before": cursors[kind]},
            )[kind]
            out[kind] += found.ids
            if found.before is None:
                break
            cursors[kind] = found.before
        assert out[kind] == sorted(out[kind], reverse=True), "not newest first"
        assert len(out[kind]) == len(set(out[kind]))
    return {k: set(v) for k, v in out.items()}


@pytest.fixture
def roots(fixtures_root: Path) -> Path:
    for root in ("fixture-a-upstream", "fixture-b-wild", "fixture-c-enhanced"):
        ingest_path(fixtures_root / root)
    return fixtures_root


@pytest.mark.parametrize("query", QUERIES)
def test_same_hits_as_a_substring_scan(roots: Path, query: str) -> None:
    got = everything(query, limit=3)
    assert got["rows"] == scan(Row, ("tool_call", "summary"), query)
    assert got["nodes"] == scan(CanvasNode, ("node_id", "title", "summary"), query)


def test_substrings_inside_words(roots: Path) -> None:
    for query in INFIX_QUERIES:
        expected = scan(Row, ("tool_call", "summary"), query)
        got = everything(query)["rows"]
        assert expected, query
        if connection.vendor == "sqlite":
            assert got == expected
        else:
            assert got <= expected  # every hit contains the query; words match from their start


def test_short_queries(roots: Path) -> None:
    for char in ("a", "缓"):  # one character: the nodes (a scan), never the rows
        got = everything(char)
        assert got["rows"] == set()
        assert got["nodes"] == scan(CanvasNode, ("node_id", "title", "summary"), char) != set()
    two = everything("修复")
    assert ("coder", "003-N4") in {
        (n.agent.slug, n.node_id) for n in CanvasNode.objects.filter(pk__in=two["nodes"])
    }
    if connection.vendor == "sqlite":  # 2 Latin characters: any substring on SQLite
        assert everything("ts")["rows"] == scan(Row, ("tool_call", "summary"), "ts")


def test_what_the_canvas_shows_beside_nodes_is_found(client: Client, roots: Path) -> None:
    """Goals, edge labels, group titles and notes: on screen, so searchable."""
    def places(query: str) -> dict[str, list[tuple[str, str]]]:
        data = client.get("/search/", {"q": query, "format": "json"}).json()
        return {f"{c['agent']}/{c['canvas']}": [tuple(p) for p in c["places"]] for c in data["canvases"]}

    assert places("登录")["main/001-fix-login-timeout.mmd"][0][0] == "goal"
    assert places("测试失败")["main/002-migrate-orders-api.mmd"] == [
        ("edge", "002-N3 → 002-N4: 测试失败")
    ]
    canvas = Canvas.objects.get(filename="002-migrate-orders-api.mmd")
    services.canvas_apply_edit(
        canvas=canvas,
        op="annotate",
        params={"node": "002-N2", "text": "复核迁移脚本 later"},
        base_hash=canvas.content_hash,
        user=User.objects.create_user("reviewer", password="pw"),
    )
    assert ("note", "002-N2: 复核迁移脚本 later") in places("复核迁移")["main/002-migrate-orders-api.mmd"]
    assert places("no such words anywhere") == {}
    page = BeautifulSoup(client.get("/search/", {"q": "缓"}).content, "html.parser")
    assert "two characters" in one(page, "#short-query").get_text()
    assert page.select("#node-hits li a") and not page.select("#row-hits li a")


def test_filters(roots: Path) -> None:
    coder = Agent.objects.get(slug="coder")
    main = AgentSession.objects.get(agent=coder, session_id="main")
    by_agent = everything("exec", search.Filters(agent_id=coder.pk))["rows"]
    assert by_agent == scan(Row, ("tool_call", "summary"), "exec") & set(
        Row.objects.filter(agent=coder).values_list("pk", flat=True)
    )
    by_session = everything("exec", search.Filters(agent_id=coder.pk, session_pk=main.pk))
    assert by_session["rows"] == by_agent & set(
        Row.objects.filter(session=main).values_list("pk", flat=True)
    )
    blocked = everything("00", search.Filters(status="blocked"))
    assert blocked["nodes"] and all(
        n.status == "blocked" for n in CanvasNode.objects.filter(pk__in=blocked["nodes"])
    )
    for row in Row.objects.filter(pk__in=blocked["rows"]):
        assert CanvasNode.objects.filter(
            agent=row.agent, node_id__in=[row.node_id, f"n_{row.node_id}"], status="blocked"
        ).exists()


def test_the_index_follows_appends_rewrites_and_edits(roots: Path) -> None:
    agent_dir = roots / "fixture-a-upstream" / "main"
    path = agent_dir / f"offload-{SID}.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"tool_call_id": "n1", "summary": "灰度发布 zebra"}) + "\n")
    ingest_agent_dir(agent_dir, changed=[path])
    assert everything("zebra")["rows"] == set(
        Row.objects.filter(tool_call_id="n1").values_list("pk", flat=True)
    )
    # a rewrite re-indexes the session: old entries go, the new text is found once
    path.write_text(path.read_text().replace("zebra", "okapi"))
    ingest_agent_dir(agent_dir, changed=[path])
    assert everything("zebra")["rows"] == set()
    assert len(everything("okapi")["rows"]) == 1
    assert everything("灰度")["rows"] == scan(Row, ("tool_call", "summary"), "灰度")
    # a canvas edit through the editor: the node is found by its new words only
    canvas = Canvas.objects.get(filename="002-migrate-orders-api.mmd")
    user = User.objects.create_user("ana", password="pw")
    services.canvas_apply_edit(
        canvas=canvas,
        op="edit",
        params={"node": "002-N4", "title": "尝试 giraffe 方案"},
        base_hash=canvas.content_hash,
        user=user,
    )
    assert everything("giraffe")["nodes"] == set(
        CanvasNode.objects.filter(canvas=canvas, node_id="002-N4").values_list("pk", flat=True)
    )
    assert everything("复用 v1 AmountField")["nodes"] == set()
    # a canvas deleted on disk leaves the index
    (agent_dir / "mmds" / "002-migrate-orders-api.mmd").unlink()
    ingest_agent_dir(agent_dir)
    assert everything("giraffe")["nodes"] == set()
    assert everything("orders")["nodes"] == scan(
        CanvasNode, ("node_id", "title", "summary"), "orders"
    )


def test_time_budget_stops_early_and_more_goes_on(roots: Path, settings, monkeypatch) -> None:
    settings.MEMVIZ_SEARCH_BUDGET_MS = 0
    monkeypatch.setattr(search, "FIRST_WINDOW", 1)  # one id per window: stops after the first
    monkeypatch.setattr(search_postgres, "COMMON_SHARE", -1.0)  # every word common: windows
    first = search.search_ids("ex", search.Filters(), kinds=("rows",))["rows"]
    assert first.before is not None
    found = search.search_ids("session", search.Filters(), kinds=("rows",))["rows"]
    assert found.partial and found.before is not None
    assert everything("session")["rows"] == scan(Row, ("tool_call", "summary"), "session")


def test_search_page_filters_and_more_link(client: Client, roots: Path) -> None:
    page = BeautifulSoup(client.get("/search/?q=exec").content, "html.parser")
    assert {o.get_text() for o in page.select("select[name=agent] option")} >= {
        "any",
        "main",
        "coder",
    }
    data = client.get("/search/?q=exec&format=json").json()
    assert [r["id"] for r in data["rows"]] == sorted((r["id"] for r in data["rows"]), reverse=True)
    assert data["more"]["rows"] is None  # everything fits on one page
    coder = client.get("/search/?q=exec&agent=coder&session=main&format=json").json()
    assert {r["agent"] for r in coder["rows"]} == {"coder"}
    assert {r["session"] for r in coder["rows"]} == {"main"}
    unknown = client.get("/search/?q=exec&agent=nobody&format=json").json()
    assert unknown["unknown_filters"] == ["agent"] and unknown["rows"] == []


def test_more_link_pages_with_htmx(client: Client, roots: Path, monkeypatch) -> None:
    monkeypatch.setattr(search, "PAGE", 2)
    page = BeautifulSoup(client.get("/search/?q=exec").content, "html.parser")
    more = page.select_one("#row-hits li.more a")
    assert more is not None and "rows_before=" in more["hx-get"]
    partial = client.get(attr(more, "hx-get"), HTTP_HX_REQUEST="true")
    assert b"<html" not in partial.content and b"<li" in partial.content


@pytest.mark.parametrize("indexed", [True, False])
def test_ref_texts_are_searchable_when_asked(fixtures_root: Path, settings, indexed: bool) -> None:
    settings.MEMVIZ_INDEX_REF_TEXT = indexed
    agent_dir = fixtures_root / "fixture-a-upstream" / "main"
    ingest_path(agent_dir)
    found = search.search_ids("touchSession", search.Filters(), kinds=("refs",))["refs"]
    names = set(Ref.objects.filter(pk__in=found.ids).values_list("name", flat=True))
    if not indexed:
        assert names == set()
        return
    assert "refs/2026-06-10T09-12-03-417p08-00.md" in names
    (agent_dir / "refs" / "2026-06-10T09-12-03-417p08-00.md").unlink()
    ingest_path(agent_dir, full=True)  # a deleted ref: found by a full pass
    found = search.search_ids("touchSession", search.Filters(), kinds=("refs",))["refs"]
    assert "refs/2026-06-10T09-12-03-417p08-00.md" not in set(
        Ref.objects.filter(pk__in=found.ids).values_list("name", flat=True)
    )


def test_postgres_asks_the_gin_index_only_for_rare_words(monkeypatch) -> None:
    """A common word's GIN bitmap is every row; the id index walked newest first is cheaper."""
    shares = {"deploy": 0.18, "module": 1.0, "py": 1.0, "部署": 0.2, "deployment": 0.01}
    monkeypatch.setattr(search_postgres, "common_lexemes", lambda table, column: shares)
    rare = search_postgres.plan("module_123.py", "t", "c")
    assert rare.index == "'123'" and rare.check == "'module' & '123' & 'py':*"
    assert search_postgres.plan("deploy", "t", "c").index is None  # prefix of common words
    assert search_postgres.plan("部署", "t", "c").index is None
    assert search_postgres.plan("de", "t", "c").index is None  # a short prefix: many words
    assert search_postgres.plan("zqxjv", "t", "c").index == "'zqxjv':*"


def test_sqlite_asks_for_a_rare_trigram_the_cover_skips(tmp_path: Path, monkeypatch) -> None:
    """In "module_123.py" the cover's trigrams (mod ule _12 3.p .py) are all common here; only
    "123" and "23." are rare, and the index is asked for those, with the same hits."""
    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL matches words, not trigrams")
    monkeypatch.setattr(search, "PROBE", 3)
    agent = tmp_path / "coder"
    agent.mkdir()
    calls = ["module_12.py"] * 4 + ["module_3.py"] * 4 + ["module_123.py", "module_7.py"]
    lines = [
        json.dumps({"tool_call_id": f"c{i}", "tool_call": f"read {c}", "summary": "ok"})
        for i, c in enumerate(calls)
    ]
    (agent / f"offload-{SID}.jsonl").write_text("\n".join(lines) + "\n")
    ingest_path(agent)
    low, high = search._id_range(search.ROWS, search.Filters())
    cover = search.trigram_cover("module_123.py")
    assert cover == ["mod", "ule", "_12", "3.p", ".py"]
    expression = search._rarest(search.ROWS, cover, low, high, "module_123.py")
    assert expression == '"123" AND "23."'
    hits = everything("module_123.py")["rows"]
    assert hits == scan(Row, ("tool_call", "summary"), "module_123.py") and len(hits) == 1
