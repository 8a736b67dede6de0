"""In Debian's chromium against a real daphne (``manage.py run``): the agent writes to its folder,
the open canvas page shows the new node and rows without reloading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts"
CANVAS = "002-etl-chunked-rewrite.mmd"
SESSION = "1a2b3c4d-5e6f-4a8b-9c0d-ef1234567890"


def _append_rows(path: Path, rows: list[dict]) -> None:
    with open(path, "ab") as handle:
        for row in rows:
            handle.write(
                (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
            )


def test_canvas_follows_the_agent_without_reload(run_server, live_root: Path, page) -> None:
    server = run_server(live_root)
    agent_dir = live_root / "main"
    page.goto(f"{server.url}/a/main/c/{CANVAS}/")
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=20000)
    page.wait_for_function("() => document.body.dataset.liveState === 'live'", timeout=10000)
    assert page.locator("#live-status").inner_text().endswith("live")
    page.evaluate("window.__notReloaded = true")

    # Open node 002-N3's panel (its rows), then zoom so there is a view to keep.
    page.locator(".node-list a.node-link", has_text="002-N3").first.click()
    page.locator("#node-panel .node-detail").wait_for(timeout=10000)
    assert "live row A" not in page.locator("#node-panel").inner_text()
    page.locator("[data-zoom=in]").click()
    page.locator("[data-zoom=in]").click()
    view_before = page.locator(".svg-pan-zoom_viewport").first.get_attribute("transform")

    # The agent: L2 rewrites the canvas (truncate + write) with a new node, and L1 appends rows.
    mmd = agent_dir / "mmds" / CANVAS
    text = mmd.read_text(encoding="utf-8")
    text += '\n    002-N4["验证: live node from the agent<br/>status: doing<br/>summary: appeared without reload"]\n    002-N3 --> 002-N4'
    with open(mmd, "w", encoding="utf-8") as handle:
        handle.write(text)
    _append_rows(
        agent_dir / f"offload-{SESSION}.jsonl",
        [
            {
                "tool_call_id": "call_live_A",
                "tool_call": "exec: pytest",
                "summary": "live row A",
                "timestamp": "2026-06-15T09:45:00.000+08:00",
                "score": 6,
                "node_id": "002-N3",
            },
            {
                "tool_call_id": "call_live_B",
                "tool_call": "exec: ruff",
                "summary": "live row B",
                "timestamp": "2026-06-15T09:45:05.000+08:00",
                "score": 6,
                "node_id": "002-N4",
            },
        ],
    )

    try:
        page.locator(".mermaid-host svg", has_text="live node from the agent").wait_for(
            timeout=10000
        )
    except Exception:
        print(page.evaluate("JSON.stringify(document.body.dataset)"), page.errors)
        print(server.log.read_text()[-3000:])
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "live-canvas-failed.png"), full_page=True)
        raise
    page.locator(".node-list", has_text="002-N4").wait_for(timeout=10000)
    page.locator("#node-panel", has_text="live row A").wait_for(timeout=10000)
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=10000)
    page.wait_for_timeout(500)
    assert page.evaluate("window.__notReloaded") is True
    # The re-render keeps the user's zoom (canvas.js restores it when the new #diagram carries
    # data-keep-view); the matrix itself changes because the bigger diagram fits differently.
    assert page.evaluate("document.getElementById('diagram').dataset.keepView") == "1"
    view_after = page.locator(".svg-pan-zoom_viewport").first.get_attribute("transform")
    assert view_after != view_before
    assert page.locator("#node-panel .node-detail").count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "live-canvas.png"), full_page=True)

    # While the user edits, the page warns instead of swapping the form away.
    page.evaluate(
        "document.body.setAttribute('data-editing', '1'); window.__editorEl = document.getElementById('editor') || document.getElementById('diagram')"
    )
    with open(mmd, "a", encoding="utf-8") as handle:
        handle.write('\n    002-N5["second rewrite<br/>status: todo"]')
    page.locator("#live-banner", has_text="The agent just rewrote this canvas").wait_for(
        timeout=10000
    )
    assert page.evaluate("window.__editorEl.isConnected") is True
    page.screenshot(path=str(ARTIFACTS / "live-canvas-editing.png"), full_page=True)

    # The session page follows too.
    page.goto(f"{server.url}/a/main/s/{SESSION}/")
    page.wait_for_function("() => document.body.dataset.liveState === 'live'", timeout=10000)
    _append_rows(
        agent_dir / f"offload-{SESSION}.jsonl",
        [
            {
                "tool_call_id": "call_live_C",
                "tool_call": "exec: deploy",
                "summary": "live row C on the timeline",
                "timestamp": "2026-06-15T09:46:00.000+08:00",
                "score": 7,
                "node_id": None,
            }
        ],
    )
    page.locator("#timeline", has_text="live row C on the timeline").wait_for(timeout=10000)
    page.screenshot(path=str(ARTIFACTS / "live-session.png"), full_page=True)

    # The agent page: its figures follow.
    page.goto(f"{server.url}/a/main/")
    page.wait_for_function("() => document.body.dataset.liveState === 'live'", timeout=10000)
    rows_figure = page.locator("dt:text-is('Rows') + dd")
    before = int(rows_figure.inner_text())
    _append_rows(
        agent_dir / f"offload-{SESSION}.jsonl",
        [{"tool_call_id": "call_live_D", "summary": "live row D", "node_id": None}],
    )
    page.wait_for_function(
        "() => document.querySelector('main').innerText.includes('live row D')", timeout=10000
    )
    assert int(rows_figure.inner_text()) == before + 1
    assert not page.errors, page.errors
