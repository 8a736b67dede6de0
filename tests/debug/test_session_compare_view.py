"""The comparison page of two sessions: its JSON twin, its links, paging, escaping, the picker."""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.test import Client

from debugging import compare_selectors
from tests.debug import compare_fixture as cfx
from tests.pages import attr, one

pytestmark = pytest.mark.django_db
URL = f"/a/{cfx.AGENT}/compare/"


def test_json_twin_aligns_rows_and_names_what_differs(tmp_path: Path) -> None:
    cfx.build(tmp_path / "root")
    data = Client().get(URL, {"a": cfx.A, "b": cfx.B, "format": "json"}).json()
    assert data["a"]["id"] == cfx.A and data["b"]["rows"] == 6
    got = [
        (r["a"] and r["a"]["tool_call"], r["b"] and r["b"]["tool_call"], r["status"], r["differs"])
        for r in data["rows"]
    ]
    assert got == [
        ("read: docs/spec.md", "read: docs/spec.md", "same", []),
        (None, "grep: TODO src/", "only_b", []),
        ("exec: pytest -q", "exec: pytest -q", "same", []),
        ("edit: src/app.py", "edit: src/session.py", "changed", ["call", "summary"]),
        ("exec: pytest -q", "exec: pytest -q", "result", ["summary", "score"]),
        (f"write: notes {cfx.HOSTILE}.md", None, "only_a", []),
        (None, "exec: ./deploy.sh", "only_b", []),
    ]
    summary = data["summary"]
    assert (summary["same"], summary["result"], summary["changed"]) == (2, 1, 1)
    assert (summary["only_a"], summary["only_b"], summary["score_differs"]) == (1, 2, 1)
    assert summary["nodes"] == {"both": 2, "only_a": 1, "only_b": 1}
    nodes = {(n["a"] and n["a"]["id"], n["b"] and n["b"]["id"]): n for n in data["nodes"]}
    assert set(nodes) == {
        ("001-N1", "001-N1"),
        ("001-N2", "001-N2"),
        ("001-N3", None),
        (None, "001-N4"),
    }
    assert nodes[("001-N2", "001-N2")]["a"]["title"] == "Fix the tests"
    assert nodes[("001-N2", "001-N2")]["a"]["status"] == "doing"
    side = data["rows"][0]["a"]
    assert side["row_url"] == f"/a/{cfx.AGENT}/s/{cfx.A}/?line=1#row-{side['row']}"
    assert side["result_size"] > 0 and Client().get(side["ref_url"]).status_code == 200
    assert data["before"] is None and data["after"] is None and data["count"] == 7


def test_pages_follow_their_cursors_and_the_differences_view(tmp_path: Path, monkeypatch) -> None:
    cfx.build(tmp_path / "root")
    monkeypatch.setattr(compare_selectors, "PAGE", 2)
    query = {"a": cfx.A, "b": cfx.B, "format": "json", "show": "diff"}
    first = Client().get(URL, query).json()
    assert [r["index"] for r in first["rows"]] == [1, 3] and first["count"] == 5
    second = Client().get(URL, {**query, "after": first["after"]}).json()
    assert [r["index"] for r in second["rows"]] == [4, 5]
    assert len(first["nodes"]) == 4 and second["nodes"] is None  # the first page has them
    back = Client().get(URL, {**query, "before": second["before"]}).json()
    assert [r["index"] for r in back["rows"]] == [1, 3] and back["before"] is None
    jump = Client().get(URL, {**query, "show": "all", "at": "6"}).json()
    assert [r["index"] for r in jump["rows"]] == [6] and jump["after"] is None


def test_page_escapes_the_runs_text_and_groups_rows_by_node(tmp_path: Path) -> None:
    cfx.build(tmp_path / "root")
    response = Client().get(URL, {"a": cfx.A, "b": cfx.B})
    assert response.status_code == 200
    page = BeautifulSoup(response.content, "html.parser")
    assert page.select("img") == [] and cfx.HOSTILE in page.get_text()
    groups = [g.get_text(" ", strip=True) for g in page.select(".pair-group")]
    assert len(groups) == 4 and "Fix the tests" in groups[1] and "doing" in groups[1]
    assert page.select_one(".pair.status-only_a .side-b .gap") is not None


def test_picker_lists_the_agents_sessions_and_unknown_ones_are_404(tmp_path: Path) -> None:
    cfx.build(tmp_path / "root")
    page = BeautifulSoup(Client().get(URL, {"a": cfx.A}).content, "html.parser")
    assert [o["value"] for o in page.select("select[name=b] option")] == ["", cfx.A, cfx.B]
    assert one(page, "select[name=a] option[selected]")["value"] == cfx.A
    assert Client().get(URL, {"a": cfx.A, "b": "nope"}).status_code == 404
    session = BeautifulSoup(Client().get(f"/a/{cfx.AGENT}/s/{cfx.A}/").content, "html.parser")
    assert session.select_one(f"a[href='{URL}?a={cfx.A}']") is not None
    agent = BeautifulSoup(Client().get(f"/a/{cfx.AGENT}/").content, "html.parser")
    assert agent.select_one(f".debug-nav a[href='{URL}']") is not None


def test_zh_hans_page_shows_no_english_ui_text(tmp_path: Path) -> None:
    from tests.debug.test_i18n import english_leaks, english_ui_strings

    cfx.build(tmp_path / "root")
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    response = client.get(URL, {"a": cfx.A, "b": cfx.B})
    assert english_leaks(response.content, english_ui_strings()) == []


def test_token_totals_come_from_each_sessions_ledger(tmp_path: Path) -> None:
    from debugging.ledger_selectors import session_ledger
    from sessions.models import Agent, AgentSession

    cfx.build(tmp_path / "root")
    query = {"a": cfx.A, "b": cfx.B, "part": "tokens"}
    data = Client().get(URL, {**query, "format": "json"}).json()
    agent = Agent.objects.get(slug=cfx.AGENT)
    ledger = session_ledger(agent, AgentSession.objects.get(agent=agent, session_id=cfx.B))
    assert data["b"]["refs"] == ledger["layers"]["refs"]["tokens"] > 0
    assert data["a"]["summaries"] > 0 and set(data) == {"a", "b"}
    page = BeautifulSoup(Client().get(URL, query).content, "html.parser")
    assert one(page, "[data-side=B]").get_text().startswith("B: refs ")
    # the page asks for them once it is shown, and the pager swaps only the list
    full = BeautifulSoup(Client().get(URL, {"a": cfx.A, "b": cfx.B}).content, "html.parser")
    assert "part=tokens" in attr(one(full, "#compare-tokens"), "hx-get")
    partial = Client().get(URL, {"a": cfx.A, "b": cfx.B}, HTTP_HX_REQUEST="true")
    assert partial.content.decode().lstrip().startswith('<div id="pairs">')


def test_a_moved_call_links_to_its_other_place(tmp_path: Path) -> None:
    from intake.ingest import ingest_path
    from tests.debug.memory_factory import canvas, node, write_agent

    calls = ["read: a.py", "exec: make", "write: out.md"]
    rows = {
        "one": [{"minutes": k, "tool": t, "node": "001-N1"} for k, t in enumerate(calls)],
        "two": [
            {"minutes": 9 + k, "tool": t, "node": "001-N1"}
            for k, t in enumerate(calls[1:] + calls[:1])
        ],
    }
    write_agent(
        tmp_path, "mover", rows, {"001-t.mmd": canvas("t", [node("001-N1", "t", "done", 0)])}
    )
    two = tmp_path / "mover" / "offload-two.jsonl"  # session two names its refs bare (spec §3)
    two.write_text(
        two.read_text("utf-8").replace('"result_ref": "refs/', '"result_ref": "'), "utf-8"
    )
    ingest_path(tmp_path)
    query = {"a": "one", "b": "two"}
    data = Client().get("/a/mover/compare/", {**query, "format": "json"}).json()
    moved = {r["index"]: r["partner"] for r in data["rows"] if r["status"] == "moved"}
    assert moved == {0: 3, 3: 0}  # read: a.py, first in one run and last in the other
    bare = [r["b"] for r in data["rows"] if r["b"]]
    assert all(not b["result_ref"].startswith("refs/") and b["result_size"] for b in bare)
    assert all(Client().get(b["ref_url"]).status_code == 200 for b in bare)
    page = BeautifulSoup(Client().get("/a/mover/compare/", query).content, "html.parser")
    link = attr(one(page, "#pair-0 a.partner"), "href")
    assert link.endswith("&at=3#pair-3") and page.select_one("#pair-3") is not None
