"""The offline file opened from disk in chromium with the network off: it draws, opens a node
panel with its rows and a ref's text, moves the replay slider, and no hostile script runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.test import Client

from tests.conftest import SCREENSHOTS
from tests.share import share_fixture as fx

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

# Recorded before any script of the file runs (init scripts are the browser's, not the page's).
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


def test_offline_files_work_from_disk_without_network(page, tmp_path: Path) -> None:
    fx.build(tmp_path / "root")
    client = Client()
    session_file = tmp_path / "session.html"
    session_file.write_bytes(client.get(f"/a/{fx.AGENT}/s/{fx.S1}/offline.html").content)
    canvas_file = tmp_path / "canvas.html"
    canvas_file.write_bytes(client.get(f"/a/{fx.AGENT}/c/{fx.FILE}/offline.html").content)
    context = page.context
    context.set_offline(True)
    requests: list[str] = []
    allowed = {session_file.as_uri(), canvas_file.as_uri()}

    def only_the_file(route) -> None:
        requests.append(route.request.url)
        route.continue_() if route.request.url in allowed else route.abort()

    context.route("**/*", only_the_file)
    page.on("request", lambda r: requests.append(r.url))
    page.add_init_script(WATCH)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    page.goto(session_file.as_uri())
    page.wait_for_function("document.body.dataset.ready === '1'")
    assert (
        page.eval_on_selector_all(
            "#offline-diagram svg g.node[data-memviz-id]", "els => els.length"
        )
        == 3
    )
    assert page.evaluate("document.body.dataset.frame") == "2"  # the last row
    page.click("#offline-diagram g.node[data-memviz-id='001-N2']")
    panel = page.locator("#offline-node")
    panel.wait_for(state="visible")
    assert "Rows: 2" in panel.inner_text()
    assert "built it" in panel.inner_text() and "hostile ref" in panel.inner_text()
    page.click("#offline-node details.offline-ref:has-text('hostile.md') summary")
    body = page.locator("#offline-node details[open] .ref-body")
    body.wait_for()
    text = body.inner_text()
    assert (
        "REF-BODY-MARKER" in text and "<script>window.pwned='body'</script>" in text
    )  # inert text
    assert (
        "click me" in text
        and page.locator("#offline-node .ref-body a, #offline-node .ref-body img").count() == 0
    )
    page.screenshot(path=str(SCREENSHOTS / "offline-session-node.png"), full_page=True)

    page.fill("#offline-slider", "0")  # the first row: N3 does not exist yet
    page.wait_for_function("document.body.dataset.frame === '0'")
    faded = page.eval_on_selector_all(
        "#offline-diagram g.node.replay-absent", "els => els.map(e => e.dataset.memvizId)"
    )
    assert "001-N3" in faded and "001-N2" not in faded
    assert "Row 1" in page.inner_text("#offline-frame")
    page.screenshot(path=str(SCREENSHOTS / "offline-session-slider.png"), full_page=True)
    assert page.evaluate("window.pwned") is None
    assert page.evaluate("window.__violations") == []

    page.goto(canvas_file.as_uri())
    page.wait_for_function("document.body.dataset.ready === '1'")
    page.click("#offline-diagram g.node[data-memviz-id='001-N3']")
    page.locator("#offline-node").wait_for(state="visible")
    assert "s2 row" in page.inner_text("#offline-node")  # a canvas file holds every session's rows
    page.screenshot(path=str(SCREENSHOTS / "offline-canvas-node.png"), full_page=True)
    assert page.evaluate("window.pwned") is None and page.evaluate("window.__violations") == []
    assert set(requests) <= allowed, requests
    assert page.errors == []
