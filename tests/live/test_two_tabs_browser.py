"""Two tabs on one canvas in Debian's chromium, against a real daphne: an edit made in one tab
appears in the other without a reload (the write path broadcasts every committed change)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts"
CANVAS = "002-etl-chunked-rewrite.mmd"


def test_an_edit_in_one_tab_appears_in_the_other(run_server, live_root: Path, page, manage) -> None:
    server = run_server(live_root)
    manage(
        server.env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; User.objects.create_user('tabs', password='two-tabs-pw')",
    )
    # Tab 1: signed in, edits. Tab 2: another browser context (another person) just watching.
    page.goto(f"{server.url}/login/?next=/a/main/c/{CANVAS}/")
    page.fill("input[name=username]", "tabs")
    page.fill("input[name=password]", "two-tabs-pw")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=20000)
    other = page.context.browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
    other.goto(f"{server.url}/a/main/c/{CANVAS}/")
    other.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=20000)
    other.wait_for_function("() => document.body.dataset.liveState === 'live'", timeout=10000)
    other.evaluate("() => { window.__notReloaded = true; }")
    hash_before = other.locator("#editor").get_attribute("data-hash")

    # Annotate 002-N3 in tab 1 through the page's own form.
    page.locator(".node-list input.node-select[value='002-N3']").check()
    page.locator("[data-open=annotate]").click()
    page.fill("form[data-form=annotate] textarea[name=text]", "checked in the other tab")
    page.locator("form[data-form=annotate] button[type=submit]").click()
    page.locator("#flash", has_text="annotate written").wait_for(timeout=10000)

    # Tab 2 shows it: new hash, the note badge on 002-N3, no reload.
    other.wait_for_function(
        f"() => document.querySelector('#editor').dataset.hash !== '{hash_before}'", timeout=10000
    )
    other.locator(".node-list li[data-node='002-N3'] .badge.note").wait_for(timeout=10000)
    assert other.evaluate("() => window.__notReloaded") is True
    assert other.locator("#editor").get_attribute("data-hash") == page.locator("#editor").get_attribute("data-hash")
    other.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=20000)
    other.screenshot(path=str(ARTIFACTS / "two-tabs-other.png"), full_page=True)
