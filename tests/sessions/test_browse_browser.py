"""In Debian's chromium: open a canvas, click a node, see its rows, expand a ref; nothing hostile runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from intake.ingest import ingest_path

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts"
HOSTILE_REF = (
    "# Tool Result: exec\n\n**Timestamp:** 2026-06-11T14:20:00.000+08:00\n\n---\n\n"
    "**Tool:** exec\n**Call ID:** evil<script>window.__pwned = 'header'</script>\n\n"
    "<img src=x onerror=\"window.__pwned = 'img'\"> [link](javascript:window.__pwned='link')\n\n"
    "**Result:**\n```\n</pre><script>window.__pwned = 'result'</script>\n```"
)


def test_canvas_node_rows_and_ref_in_the_browser(live_server, page, fixtures_root: Path) -> None:
    agent_dir = fixtures_root / "fixture-a-upstream" / "main"
    (agent_dir / "refs" / "evil.md").write_text(HOSTILE_REF, "utf-8")
    with open(agent_dir / "offload-3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90.jsonl", "a") as handle:
        handle.write(
            json.dumps(
                {
                    "tool_call_id": "evil",
                    "tool_call": "exec: evil",
                    "summary": "<b onmouseover=alert(1)>hostile</b>",
                    "score": 1,
                    "node_id": "002-N2",
                    "result_ref": "refs/evil.md",
                }
            )
            + "\n"
        )
    mmd = agent_dir / "mmds" / "002-migrate-orders-api.mmd"
    before = mmd.read_bytes()
    ingest_path(agent_dir.parent)

    page.goto(f"{live_server.url}/a/main/c/002-migrate-orders-api.mmd/")
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=20000)
    assert page.locator(".mermaid-host svg g.node").count() == 5
    page.screenshot(path=str(ARTIFACTS / "canvas.png"))

    page.locator(".mermaid-host svg g.node", has_text="调研").first.click()
    panel = page.locator("#node-panel .node-detail")
    panel.wait_for(timeout=10000)
    assert panel.get_attribute("data-node") == "002-N2"
    rows = panel.locator("li.row")
    assert rows.count() == 3  # the two merged calls (two sessions) + the hostile row
    assert "router 暴露 6 个 v1 endpoint" in panel.inner_text()

    ref = panel.locator("li.row", has_text="read: src/orders/router.ts").locator("details.ref")
    ref.locator("summary").click()
    ref.locator(".ref-view").wait_for(timeout=10000)
    page.screenshot(path=str(ARTIFACTS / "canvas-node-ref.png"))

    evil = panel.locator("li.row", has_text="exec: evil").locator("details.ref")
    evil.locator("summary").click()
    evil.locator(".ref-view").wait_for(timeout=10000)
    evil.locator(".ref-view").hover()
    panel.locator("li.row", has_text="exec: evil").locator(".summary").hover()
    assert page.evaluate("window.__pwned") is None
    assert "window.__pwned = 'result'" in evil.inner_text()  # shown as text
    page.screenshot(path=str(ARTIFACTS / "canvas-hostile-ref.png"))
    assert page.errors == []
    # viewing never changes the file on disk
    assert mmd.read_bytes() == before


def test_browse_pages_render(live_server, page, fixtures_root: Path) -> None:
    ingest_path(fixtures_root / "fixture-b-wild")
    ingest_path(fixtures_root / "fixture-a-upstream")
    for name, path in [
        ("home", "/"),
        ("agent", "/a/coder/"),
        ("session", "/a/coder/s/main/"),
        ("search", "/search/?q=pytest"),
        ("ref", "/a/main/refs/2026-06-10T09-12-03-417p08-00.md"),
    ]:
        response = page.goto(f"{live_server.url}{path}")
        assert response is not None and response.status == 200, path
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    page.goto(f"{live_server.url}/a/coder/c/003-k8s-canary-deploy.mmd/")
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=20000)
    page.screenshot(path=str(ARTIFACTS / "canvas-wild.png"))
    assert page.errors == []


def test_help_and_search_keys_work_off_canvas_pages(live_server, page, fixtures_root: Path) -> None:
    ingest_path(fixtures_root / "fixture-a-upstream")
    for path in ("/", "/a/main/", "/sessions/"):
        page.goto(f"{live_server.url}{path}")
        page.keyboard.press("?")
        assert page.locator("#site-help[open]").count() == 1, path
        page.keyboard.press("Escape")
        assert page.locator("dialog[open]").count() == 0
        page.keyboard.press("/")
        assert page.evaluate("document.activeElement.name") == "q", path
    page.goto(f"{live_server.url}/a/main/c/002-migrate-orders-api.mmd/")
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=20000)
    page.keyboard.press("?")
    assert page.locator("#shortcut-help[open]").count() == 1  # the canvas page's own, fuller help
    assert page.locator("#site-help").count() == 0
