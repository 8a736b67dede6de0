"""In chromium: from the agent page, pick two runs and read them side by side, also at 390 px."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import SCREENSHOTS
from tests.debug import compare_fixture as cfx

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def test_pick_two_runs_and_compare_them(live_server, page, tmp_path: Path) -> None:
    cfx.build(tmp_path / "root")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{live_server.url}/a/{cfx.AGENT}/")
    page.click(".debug-nav a:text('Compare two sessions')")
    page.select_option("select[name=a]", cfx.A)
    page.select_option("select[name=b]", cfx.B)
    page.click(".compare-pick button")
    page.locator(".pair").first.wait_for()
    assert page.locator(".pair").count() == 7
    assert page.locator("[data-figure=only_b] dd").inner_text() == "2"
    changed = page.locator(".pair[data-status=changed]")
    assert "edit: src/app.py" in changed.locator(".side-a").inner_text()
    assert "edit: src/session.py" in changed.locator(".side-b").inner_text()
    assert page.evaluate("document.body.dataset.pwned") is None  # the run's text stays text
    page.locator("#compare-tokens [data-side=B]").wait_for()  # the ledgers' totals, asked after
    page.screenshot(path=str(SCREENSHOTS / "session-compare.png"), full_page=True)

    page.check("input[name=show]")
    page.click(".compare-pick button")
    page.wait_for_function("document.querySelectorAll('.pair').length === 5")
    # a row's link leads to that row in its own session
    page.locator(".pair[data-status=result] .side-b .row-head a").first.click()
    page.wait_for_url(f"**/s/{cfx.B}/?line=5#row-*")
    assert page.locator(":target").inner_text().count("all 42 passed") == 1
    page.go_back()

    page.set_viewport_size({"width": 390, "height": 844})
    page.locator(".pair").first.wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(SCREENSHOTS / "session-compare-390.png"), full_page=True)
    assert page.errors == []
