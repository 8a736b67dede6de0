"""In chromium, in zh-hans: what the scripts write (find hits, an emptied selection) is Chinese too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from intake.ingest import ingest_path
from tests.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
FILE = "002-migrate-orders-api.mmd"


def test_canvas_scripts_speak_the_page_language(
    live_server, page, fixtures_root: Path, django_user_model
) -> None:
    ingest_path(fixtures_root / "fixture-a-upstream")
    django_user_model.objects.create_user("lin", password="pw-lin")
    page.set_extra_http_headers({"Accept-Language": "zh-CN,zh;q=0.9"})
    page.goto(f"{live_server.url}/login/?next=/a/main/")
    page.fill("input[name=username]", "lin")
    page.fill("input[name=password]", "pw-lin")
    page.click("button.primary")
    page.wait_for_url("**/a/main/")
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    assert page.locator("h2", has_text="任务画布").count() == 1
    page.screenshot(path=str(ARTIFACTS / "agent-zh-hans.png"), full_page=True)

    page.goto(f"{live_server.url}/a/main/c/{FILE}/")
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=20000)
    node = page.locator('.mermaid-host svg g.node[data-memviz-id="002-N2"]')
    node.click()
    assert page.locator("#selection-list").inner_text() == "002-N2"
    page.keyboard.press("Escape")  # cleared: the script writes the empty selection itself
    page.wait_for_function("() => document.getElementById('selection-list').textContent === '无'")
    page.locator("#canvas-search").fill("002")
    page.wait_for_function(
        "() => document.querySelector('#diagram .hit-count').textContent === '5 个结果'"
    )
    page.locator("#canvas-search").press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#diagram .hit-count').textContent === '第 1 个，共 5 个'"
    )
    page.screenshot(path=str(ARTIFACTS / "canvas-zh-hans.png"), full_page=True)
    assert page.errors == []
