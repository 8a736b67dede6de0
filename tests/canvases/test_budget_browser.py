"""In Debian's chromium: the budget box on a canvas page, a target, the suggestions with their
diffs, apply as one revision, undo; screenshots of the panel and of the curated canvas."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from canvases.mermaid import parse
from tests.canvases.browser_login import PASSWORD, USER, log_in
from tests.canvases.budget_folder import FILE, URL, write_folder
from tests.conftest import SCREENSHOTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"


def rendered(page) -> None:
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=20000)


def test_curate_to_a_budget_in_the_browser(live_server, page, tmp_path: Path, django_user_model) -> None:
    folder = write_folder(tmp_path)
    original = (folder / "mmds" / FILE).read_bytes()
    django_user_model.objects.create_user(USER, password=PASSWORD)
    log_in(page, live_server, URL)
    rendered(page)

    page.locator(".budget-box summary").click()  # the box loads its panel when opened
    shares = page.locator(".budget-box .budget-shares tbody tr")
    shares.first.wait_for()
    assert shares.count() == 6  # five nodes and the block's fixed part
    first = shares.first.locator("td")
    assert first.nth(0).inner_text() in {"008-N1", "008-N2", "008-N5"}  # a long summary each
    assert float(first.nth(4).inner_text().strip()) > 10  # percent of the injected block

    target = page.locator(".budget-box input[name=target]")
    target.fill("400")
    target.press("Enter")  # the panel's own page, for that target
    page.wait_for_url("**/budget/?*target=400*")
    suggestions = page.locator(".budget-suggestion")
    assert [s.get_attribute("data-kind") for s in suggestions.all()] == ["merge", "prune", "shorten"]
    suggestions.first.locator("summary").click()
    assert "008-N2" in suggestions.first.locator(".budget-diff").inner_text()
    assert "→" in suggestions.first.locator(".budget-size").inner_text()
    page.screenshot(path=str(SCREENSHOTS / "budget-suggestions.png"), full_page=True)

    suggestions.nth(2).locator("input[type=checkbox]").uncheck()  # keep the long summary
    page.locator(".budget-apply button[type=submit]").click()
    page.wait_for_url(f"**{URL}")
    assert "batch written" in page.locator(".messages").inner_text()
    rendered(page)
    assert page.locator(".mermaid-host svg g.node").count() == 2
    text = (folder / "mmds" / FILE).read_text("utf-8")
    assert set(parse(text).nodes) == {"008-N1", "008-N5"}
    assert len(parse(text).nodes["008-N5"].fields.summary or "") > 60  # not shortened
    page.screenshot(path=str(SCREENSHOTS / "budget-applied.png"))

    page.locator("#undo-button").click()
    page.wait_for_function(
        "() => (document.querySelector('#flash')?.textContent || '').includes('undo written')"
    )
    rendered(page)
    assert page.locator(".mermaid-host svg g.node").count() == 5
    assert (folder / "mmds" / FILE).read_bytes() == original
