"""In chromium: diagnostics, ledger chart, report export with SVG, filters, compare, Chinese UI."""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path

import markdown
import pytest
from bs4 import BeautifulSoup

from tests.conftest import ARTIFACTS
from tests.debug import diagnosis_fixture as dfx
from tests.debug import replay_fixture as rfx
from tests.pages import attr, one

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def test_diagnostics_ledger_and_session_list(live_server, page, tmp_path: Path) -> None:
    dfx.build(tmp_path / "root")
    page.goto(f"{live_server.url}/a/troubled/s/{dfx.BAD}/diagnostics/")
    assert page.locator("li#loop").get_attribute("data-count") == "1"
    page.screenshot(path=str(ARTIFACTS / "diagnostics.png"), full_page=True)
    page.locator("li#failing_call .evidence a", has_text="line 2").click()
    page.wait_for_function("() => document.body.dataset.replayReady === '1'", timeout=20000)
    assert page.evaluate("document.body.dataset.frame") == "1"  # line 2 is the second frame

    # the agent page draws at once; its sessions' badges arrive in one request after it
    page.goto(f"{live_server.url}/a/troubled/")
    bad_row = page.locator("tr", has=page.locator(f"a:text-is('{dfx.BAD}')"))
    bad_row.locator(".diag-badges .badge[data-diagnosis='loop']").wait_for(timeout=20000)
    page.screenshot(path=str(ARTIFACTS / "agent-badges.png"), full_page=True)

    page.goto(f"{live_server.url}/a/troubled/s/{dfx.BAD}/ledger/")
    page.wait_for_function("() => document.body.dataset.ledgerChart === 'ok'", timeout=20000)
    assert page.locator("#ledger-chart canvas").count() == 1
    assert page.locator("#ledger-chart .u-legend").inner_text().count("refs") == 1
    # the axis reads the agent's clock (+08:00), whatever the browser's zone
    assert "(UTC+08:00)" in page.locator("#ledger-chart .u-legend").inner_text()
    over = page.locator("#ledger-chart .u-over").bounding_box()
    page.mouse.move(over["x"] + over["width"] - 2, over["y"] + over["height"] / 2)
    legend = page.locator("#ledger-chart .u-legend").inner_text()
    assert "10:30" in legend and "2:30" not in legend, legend  # 10:30 +08:00, not the UTC 02:30
    page.screenshot(path=str(ARTIFACTS / "ledger.png"), full_page=True)

    # filters: a change adds exactly one history entry, and back restores the unfiltered list
    page.goto(f"{live_server.url}/sessions/")
    assert page.locator("tr[data-session]").count() == 2
    before = page.evaluate("history.length")
    page.select_option("select[name=diagnosis]", "loop")
    page.wait_for_function("() => document.querySelectorAll('tr[data-session]').length === 1")
    page.fill("input[name=from]", "2026-06-10T08:00+08:00")
    page.press("input[name=from]", "Enter")  # change and submit at once: still one entry
    page.wait_for_url(re.compile(r"from=2026"))
    page.wait_for_timeout(400)
    assert page.evaluate("history.length") == before + 2
    page.screenshot(path=str(ARTIFACTS / "sessions.png"), full_page=True)
    page.go_back()
    page.wait_for_url(re.compile(r"from=&.*diagnosis=loop"))
    assert page.errors == []


def test_report_export_embeds_the_rendered_svg(live_server, page, tmp_path: Path) -> None:
    rfx.build(tmp_path / "root")
    page.goto(f"{live_server.url}/a/watched/s/{rfx.SESSION}/replay/")
    page.wait_for_function("() => document.body.dataset.replayReady === '1'", timeout=20000)
    with page.expect_download() as info:
        page.click("#replay-export")
    text = Path(info.value.path()).read_text("utf-8")
    (ARTIFACTS / "report.md").write_text(text, "utf-8")
    html = BeautifulSoup(
        markdown.markdown(text, extensions=["tables", "fenced_code"]), "html.parser"
    )
    image = one(html, "img[src^='data:image/svg+xml;base64,']")
    svg = base64.b64decode(attr(image, "src").split(",", 1)[1]).decode("utf-8")
    assert svg.startswith("<svg") and "001-N4" in svg and "document" in svg
    assert html.select_one("code.language-mermaid") is not None


def test_compare_and_chinese_ui(live_server, chromium_launch, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    rfx.build(tmp_path / "root")
    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium_launch)
        tab = browser.new_context(
            locale="zh-CN", viewport={"width": 1300, "height": 900}
        ).new_page()
        tab.goto(f"{live_server.url}/a/watched/c/{rfx.FILE}/compare/?a=1&b=3")
        tab.wait_for_function(
            "() => document.querySelectorAll('.static-diagram[data-rendered=ok]').length === 2",
            timeout=20000,
        )
        assert tab.locator("html").get_attribute("lang") == "zh-hans"
        assert tab.locator("g.node.diff-added").count() == 2
        assert tab.locator("g.node.diff-removed").count() == 1
        tab.screenshot(path=str(ARTIFACTS / "compare-zh.png"), full_page=True)
        tab.goto(f"{live_server.url}/a/after/s/{rfx.SESSION}/replay/")
        tab.wait_for_function("() => document.body.dataset.replayReady === '1'", timeout=20000)
        assert "由节点 Timestamp 和行时间重建" in tab.inner_text("#replay-source")
        tab.screenshot(path=str(ARTIFACTS / "replay-zh.png"), full_page=True)
        tab.select_option(".language-switch select", "en")  # submits on change
        tab.wait_for_function("() => document.documentElement.lang === 'en'")
        assert "reconstructed" in tab.inner_text("#replay-source")
        browser.close()
