"""The token ledger counts what the agent saved; the run report renders cleanly as Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import markdown
import pytest
from bs4 import BeautifulSoup
from django.test import Client

from agentfs.state_edit import resume_block
from canvases.mermaid.tokens import token_count as count_tokens
from intake.ingest import ingest_path
from sessions.models import Canvas, Row
from tests.debug import diagnosis_fixture as dfx
from tests.pages import one

pytestmark = pytest.mark.django_db
SESSION = "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90"


@pytest.fixture
def upstream(fixtures_root: Path) -> Path:
    ingest_path(fixtures_root / "fixture-a-upstream")
    return fixtures_root / "fixture-a-upstream" / "main"


def test_session_ledger_counts_each_layer_exactly(upstream: Path) -> None:
    data = json.loads(Client().get(f"/a/main/s/{SESSION}/ledger/", {"format": "json"}).content)
    rows = Row.objects.filter(session__session_id=SESSION).order_by("line_no")
    layers = data["layers"]
    assert layers["summaries"] == {
        "tokens": sum(count_tokens(r.summary) for r in rows),
        "items": rows.count(),
        "exact_items": rows.count(),
        "exact": True,
        "chars": sum(len(r.summary) for r in rows),
    }
    refs = []
    for r in rows:
        assert r.result_ref is not None, r.line_no  # every row of this session has its refs file
        refs.append((upstream / r.result_ref).read_text("utf-8"))
    assert layers["refs"]["tokens"] == sum(count_tokens(t) for t in refs)
    used = Canvas.objects.filter(
        filename__in=["001-fix-login-timeout.mmd", "002-migrate-orders-api.mmd"]
    )
    assert layers["canvas"]["tokens"] == sum(count_tokens(c.text) for c in used)
    final = Canvas.objects.get(filename="002-migrate-orders-api.mmd")  # the last row's canvas
    goal = "把 orders API 迁移到 v2 (Decimal money + cursor pagination)"
    assert layers["block"]["tokens"] == count_tokens(final.text) + count_tokens(
        resume_block("main", final.filename, "", goal)
    )
    assert data["compression"]["refs_to_summaries"] == round(
        layers["refs"]["tokens"] / layers["summaries"]["tokens"], 1
    )
    series = data["series"]
    assert len(series["t"]) == rows.count()
    assert series["refs"][-1] == layers["refs"]["tokens"]
    assert series["summaries"] == sorted(series["summaries"])  # cumulative
    assert "cl100k_base" in data["method"]


def test_a_big_layer_is_sampled_and_says_so(
    upstream: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from debugging import token_ledger

    monkeypatch.setattr(token_ledger, "EXACT_BUDGET_CHARS", 120)
    data = json.loads(Client().get("/a/main/ledger/", {"format": "json"}).content)
    summaries = data["layers"]["summaries"]
    assert summaries["exact"] is False and 0 < summaries["exact_items"] < summaries["items"]
    exact = sum(count_tokens(r.summary) for r in Row.objects.all())
    assert abs(summaries["tokens"] - exact) / exact < 0.35  # estimated from the sample's ratio
    page = BeautifulSoup(Client().get("/a/main/ledger/").content, "html.parser")
    assert "rest estimated" in one(page, "tr[data-layer='summaries']").get_text()


def test_report_renders_cleanly_with_python_markdown(tmp_path: Path) -> None:
    dfx.build(tmp_path / "root")
    response = Client().get(f"/a/troubled/s/{dfx.BAD}/report.md")
    assert response["Content-Type"].startswith("text/markdown")
    assert "attachment" in response["Content-Disposition"]
    text = response.content.decode()
    html = markdown.markdown(text, extensions=["tables", "fenced_code"])
    page = BeautifulSoup(html, "html.parser")
    assert [h.get_text() for h in page.select("h2")] == [
        "Goal",
        "Timeline summary",
        "Canvas",
        "Diagnostics",
        "Token ledger",
    ]
    assert one(page, "h1").get_text().startswith("Run report: session")
    assert one(page, "code.language-mermaid").get_text().startswith("flowchart TD")
    assert "%%{" in one(page, "code.language-text").get_text()  # the source as on disk
    timeline, diagnostics, ledger = page.select("table")
    assert len(timeline.select("tbody tr")) == 10
    found = {
        tr.select("td")[0].get_text(): int(tr.select("td")[1].get_text())
        for tr in diagnostics.select("tbody tr")
    }
    assert found["Loops"] == 1 and found["Failing tool calls"] == 1
    assert [tr.select("td")[0].get_text() for tr in ledger.select("tbody tr")] == [
        "raw results (refs)",
        "summaries",
        "canvas",
        "injected block",
    ]
    twin = json.loads(
        Client().get(f"/a/troubled/s/{dfx.BAD}/report.md", {"format": "json"}).content
    )
    assert twin["session"]["id"] == dfx.BAD and len(twin["rows"]) == 10


def test_hostile_text_cannot_break_the_report(tmp_path: Path) -> None:
    from debugging.run_report import cell, fence

    assert cell("a | b\nc") == "a \\| b c"
    body = "x\n```\n<script>alert(1)</script>\n````"
    html = markdown.markdown(fence(body, "text"), extensions=["fenced_code"])
    code = BeautifulSoup(html, "html.parser").select_one("pre code")
    assert code is not None and code.get_text().rstrip("\n") == body


def test_a_canvas_numbered_with_a_digit_that_is_no_number_keeps_the_ledger_up(
    upstream: Path,
) -> None:
    """`²-x.mmd`: "²" is a digit to str.isdigit but no number to int(); the ledger read canvas
    numbers its own way and answered 500. One rule numbers canvases (agentfs/layout.NUMBER_PREFIX):
    such a file has no number, and the ledger, the replay and the agent page go on."""
    (upstream / "mmds" / "²-odd.mmd").write_text('flowchart TD\n  N1["odd"]\n', "utf-8")
    ingest_path(upstream.parent)
    for path in ("/a/main/ledger/?format=json", "/a/main/", "/a/main/diagnostics/"):
        assert Client().get(path).status_code == 200, path
    session = next(upstream.glob("offload-*.jsonl")).stem.removeprefix("offload-")
    assert Client().get(f"/a/main/s/{session}/replay/?format=json").status_code == 200
