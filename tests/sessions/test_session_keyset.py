"""A session's timeline is keyset-paged: deep pages hold what OFFSET pages held, old links work."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from intake.ingest import ingest_path
from sessions.models import Row
from tests.pages import attr

pytestmark = pytest.mark.django_db

ROWS = 400
URL = "/a/big/s/s/"


@pytest.fixture
def big(tmp_path: Path) -> Path:
    agent = tmp_path / "root" / "big"
    agent.mkdir(parents=True)
    lines = []
    for i in range(ROWS):
        lines.append(json.dumps({"tool_call_id": f"c{i}", "summary": f"s{i}", "score": i % 10}))
        if i % 37 == 0:
            lines.append("{broken")  # a problem line: line numbers have gaps
    (agent / "offload-s.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    ingest_path(tmp_path / "root")
    return agent


def pages(client: Client, query: str, first: str, cursor: str) -> list[dict]:
    """Every page of a view, following its ``after`` (or ``before``) cursors from ``first``."""
    out = [client.get(f"{URL}?format=json&{query}&{first}").json()]
    while out[-1][cursor] is not None:
        out.append(client.get(f"{URL}?format=json&{query}&{cursor}={out[-1][cursor]}").json())
    return out


def test_keyset_pages_hold_what_offset_pages_held(client: Client, big: Path) -> None:
    matching = list(
        Row.objects.filter(session__session_id="s", score__gte=7)
        .order_by("line_no")
        .values_list("tool_call_id", flat=True)
    )
    offset_pages = [matching[i : i + 50] for i in range(0, len(matching), 50)]
    forward = pages(client, "min_score=7", "", "after")
    assert [[r["tool_call_id"] for r in p["rows"]] for p in forward] == offset_pages
    assert forward[0]["count"] == len(matching) and forward[0]["pages"] == len(offset_pages)
    assert forward[0]["before"] is None and forward[-1]["after"] is None
    # Backwards from the last page: the same rows, the last page holding the last 50 matches.
    backward = pages(client, "min_score=7", "last=1", "before")
    rows = [r["tool_call_id"] for p in reversed(backward) for r in p["rows"]]
    assert rows == matching and backward[0]["rows"][-1]["tool_call_id"] == matching[-1]


def test_a_deep_page_reads_no_row_before_it(client: Client, big: Path) -> None:
    """The deep page's query starts at its cursor: no OFFSET, no count of the filtered view."""
    last_line = Row.objects.filter(session__session_id="s").order_by("-line_no")[60].line_no
    with CaptureQueriesContext(connection) as queries:
        page = client.get(f"{URL}?format=json&min_score=3&after={last_line}").json()
    sql = " ".join(q["sql"] for q in queries.captured_queries).upper()
    assert not re.search(r"\bOFFSET\s+\d", sql) and "COUNT(" not in sql
    assert page["rows"] and all(r["line_no"] > last_line for r in page["rows"])
    assert page["count"] is None and page["page"] is None and page["after"] is None


def test_old_page_links_and_row_links_still_open_their_rows(client: Client, big: Path) -> None:
    everything = list(
        Row.objects.filter(session__session_id="s").order_by("line_no").values_list("pk", "line_no")
    )
    third = client.get(f"{URL}?format=json&page=3").json()
    assert [r["id"] for r in third["rows"]] == [pk for pk, _ in everything[100:150]]
    assert third["page"] == 3 and third["before"] == everything[100][1]
    assert third["after"] == everything[149][1]
    # A row's link, as node panels and search hits make it, shows that row.
    for pk, line_no in (everything[0], everything[222], everything[-3]):
        page = BeautifulSoup(client.get(f"{URL}?line={line_no}").content, "html.parser")
        assert page.select_one(f"#timeline li#row-{pk}") is not None, line_no


def test_the_pager_links_walk_the_filtered_view(client: Client, big: Path) -> None:
    page = BeautifulSoup(client.get(f"{URL}?min_score=5").content, "html.parser")
    nxt = attr(next(a for a in page.select("nav.pager a") if "after=" in a["href"]), "href")
    assert nxt.startswith("?min_score=5&after=")
    second = BeautifulSoup(client.get(URL + nxt).content, "html.parser")
    links = {attr(a, "href") for a in second.select("nav.pager a")}
    assert "?min_score=5" in links  # first page
    assert any(h.startswith("?min_score=5&before=") for h in links)
