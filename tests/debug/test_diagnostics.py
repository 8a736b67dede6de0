"""Each diagnosis is found on a generated session that has it, and not on one that has none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.test import Client

from debugging.diagnostics import KINDS
from tests.debug import diagnosis_fixture as fx
from tests.pages import attr, one

pytestmark = pytest.mark.django_db

EXPECTED = {
    "loop": 1,
    "failing_call": 1,
    "stuck_node": 2,  # N1 doing and N2 blocked, both far older than the last row
    "never_placed": 2,  # the old null row and the row on 009-N9
    "map_builder_lag": 1,
    "over_budget": 1,
    "missing_ref": 1,
    "empty_summary": 1,
    "summary_longer_than_ref": 1,
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    fx.build(tmp_path / "root")
    return tmp_path / "root"


def findings(url: str) -> dict[str, dict]:
    data = json.loads(Client().get(url, {"format": "json"}).content)
    return {f["kind"]: f for f in data["findings"]}


def test_every_diagnosis_on_the_troubled_session_and_none_on_the_healthy_one(root: Path) -> None:
    bad = findings(f"/a/troubled/s/{fx.BAD}/diagnostics/")
    good = findings(f"/a/healthy/s/{fx.GOOD}/diagnostics/")
    assert set(bad) == set(KINDS) == set(EXPECTED)
    assert {k: bad[k]["count"] for k in KINDS} == EXPECTED
    assert {k: good[k]["count"] for k in KINDS} == dict.fromkeys(KINDS, 0)


def test_findings_point_at_their_evidence(root: Path) -> None:
    bad = findings(f"/a/troubled/s/{fx.BAD}/diagnostics/")
    loop = bad["loop"]["evidence"][0]
    assert loop["repeats"] == 3 and [r["line_no"] for r in loop["rows"]] == [2, 3, 4]
    assert bad["failing_call"]["evidence"][0]["line_no"] == 2
    assert "exited with code 1" in bad["failing_call"]["evidence"][0]["detail"]
    assert {e["detail"] for e in bad["never_placed"]["evidence"]} == {"null", "node on no canvas"}
    assert bad["map_builder_lag"]["evidence"][0]["line_no"] == 6
    assert bad["missing_ref"]["evidence"][0]["line_no"] == 7
    assert bad["empty_summary"]["evidence"][0]["line_no"] == 8
    assert bad["summary_longer_than_ref"]["evidence"][0]["line_no"] == 9
    assert {e["node_id"] for e in bad["stuck_node"]["evidence"]} == {"001-N1", "001-N2"}
    assert bad["over_budget"]["evidence"][0]["canvas"] == "001-fix-tests.mmd"

    page = BeautifulSoup(
        Client().get(f"/a/troubled/s/{fx.BAD}/diagnostics/").content, "html.parser"
    )
    links = [a["href"] for a in page.select("li#failing_call .evidence a")]
    assert f"/a/troubled/s/{fx.BAD}/replay/?row=2" in links
    assert "/a/troubled/node/?id=001-N2" in links
    stuck = [a["href"] for a in page.select("li#stuck_node .evidence a")]
    assert "/a/troubled/c/001-fix-tests.mmd/#node=001-N2" in stuck


def test_agent_rollup_sums_sessions_and_badges_show_on_shared_pages(root: Path) -> None:
    rollup = findings("/a/troubled/diagnostics/")
    assert {k: rollup[k]["count"] for k in KINDS} == EXPECTED
    assert all(f["count"] == 0 for f in findings("/a/healthy/diagnostics/").values())
    timeline = BeautifulSoup(Client().get(f"/a/troubled/s/{fx.BAD}/").content, "html.parser")
    assert {b["data-diagnosis"] for b in timeline.select(".diag-badges .badge")} == set(KINDS)
    twin = Client().get(f"/a/troubled/s/{fx.BAD}/", {"format": "json"}).json()
    assert {b["kind"] for b in twin["badges"]} == set(KINDS)  # what the page's badges show
    # The agent page shows at once and asks for its sessions' badges after (one request, each
    # badge swapped out of band into its session's slot).
    agent_page = BeautifulSoup(Client().get("/a/troubled/").content, "html.parser")
    (loader,) = agent_page.select("[hx-get$='/badges/'][hx-trigger='load']")
    badges = BeautifulSoup(Client().get(attr(loader, "hx-get")).content, "html.parser")
    for slot in badges.select("[hx-swap-oob]"):
        assert agent_page.select(f"#{slot['id']}")  # lands in a slot of the page
    bad_link = agent_page.find("a", string=fx.BAD)
    bad_row = bad_link.find_parent("td") if bad_link is not None else None
    assert bad_row is not None, f"no cell links to {fx.BAD}"
    bad_slot = one(bad_row, "span[id]")
    (bad,) = badges.select(f"#{bad_slot['id']}")
    assert bad.select(".diag-badges .badge[data-diagnosis='loop']")
    # The canvas page (drawn by the canvas app, which knows nothing of diagnostics) shows the
    # badges debugging provides (canvases/page_extras.py), in the page and in its JSON.
    canvas = BeautifulSoup(Client().get("/a/troubled/c/001-fix-tests.mmd/").content, "html.parser")
    twin = Client().get("/a/troubled/c/001-fix-tests.mmd/", {"format": "json"}).json()
    assert {b["kind"] for b in twin["badges"]} == {"over_budget", "stuck_node"}
    assert {b["href"] for b in twin["badges"]} == {
        "/a/troubled/diagnostics/#over_budget",
        "/a/troubled/diagnostics/#stuck_node",
    }
    assert {b["data-diagnosis"] for b in canvas.select(".diag-badges .badge")} == {
        "over_budget",
        "stuck_node",
    }
    healthy = BeautifulSoup(Client().get(f"/a/healthy/s/{fx.GOOD}/").content, "html.parser")
    assert not healthy.select(".diag-badges .badge")


def test_session_list_filters_by_diagnosis_agent_and_time(root: Path) -> None:
    def listed(**params: str) -> list[str]:
        data = json.loads(Client().get("/sessions/", {**params, "format": "json"}).content)
        return [s["id"] for s in data["sessions"]]

    assert sorted(listed()) == sorted([fx.BAD, fx.GOOD])
    assert listed(diagnosis="loop") == [fx.BAD]
    assert listed(agent="healthy") == [fx.GOOD]
    assert listed(**{"from": "2026-06-10T10:00+08:00"}) == [fx.BAD]  # ends at minute 90
    assert listed(to="2026-06-10T08:00+08:00") == []
    assert listed(sort="findings", order="desc") == [fx.BAD, fx.GOOD]
    assert listed(sort="findings", order="asc") == [fx.GOOD, fx.BAD]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("building\nProcess exited with code 2\n", "Process exited with code 2"),
        ("Traceback (most recent call last):\n  File x", "Traceback (most recent call last):"),
        (
            "ok\nerror: timed out waiting for the condition",
            "error: timed out waiting for the condition",
        ),
        ("x\nMemoryError: Unable to allocate 6.1 GiB", "MemoryError: Unable to allocate 6.1 GiB"),
        ("2026-06-12T08:51:40Z ERROR upstream reset", "2026-06-12T08:51:40Z ERROR upstream reset"),
        ("3 failed, 21 passed in 2.41s", "3 failed, 21 passed in 2.41s"),
        ('{"content": [], "isError": true}', '{"content": [], "isError": true}'),
        ("24 passed in 2.18s\nexit code 0", None),
        ("no error found, 0 failed", None),
        ("handles errors: retries on failure", None),
    ],
)
def test_error_markers(text: str, line: str | None) -> None:
    from debugging.diagnostics import error_line

    assert error_line(text) == line
