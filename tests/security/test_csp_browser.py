"""Item 1 of issue 10, in Debian's chromium against a real `manage.py run`: every page type opened
on a hostile data root makes no request that leaves 127.0.0.1, breaks no Content-Security-Policy
rule, shows the hostile labels as text, and still works (mermaid renders, htmx swaps, the live
websocket connects)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
WATCH_CSP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
"""


class Watch:
    """Everything a page did that it must not: requests off the host, CSP violations, errors."""

    def __init__(self, page, port: int) -> None:
        self.page = page
        self.leaks: list[str] = []
        self.console: list[str] = []
        page.add_init_script(WATCH_CSP)
        page.route("**/*", self._route)
        page.on("console", self._console)

    def _route(self, route) -> None:
        url = route.request.url
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob") or parts.hostname == "127.0.0.1":
            route.continue_()
        else:
            self.leaks.append(url)
            route.abort()

    def _console(self, message) -> None:
        if "Content Security Policy" in message.text or message.type == "error":
            self.console.append(message.text)

    def check(self, where: str) -> None:
        violations = self.page.evaluate("window.__csp || []")
        errors = list(self.page.errors)
        assert not self.leaks, f"{where}: requests left 127.0.0.1: {self.leaks}"
        assert not violations, f"{where}: CSP violations: {violations}"
        assert not [c for c in self.console if "Content Security Policy" in c], self.console
        assert not errors, f"{where}: page errors: {errors}"


def _login(page, base: str) -> None:
    page.goto(f"{base}/login/")
    page.fill("input[name=username]", "ana")
    page.fill("input[name=password]", "pw-123456-ok")
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


def test_every_page_type_on_a_hostile_root_stays_on_the_host_and_within_the_policy(
    run_server,
    manage,
    hostile_root: Path,
    hostile,
    page,
) -> None:
    evil, session, ref = hostile.evil, hostile.session, hostile.ref
    server = run_server(hostile_root)
    env = {**server.env, "DJANGO_SUPERUSER_PASSWORD": "pw-123456-ok"}
    manage(env, "createsuperuser", "--noinput", "--username", "ana", "--email", "a@b.example")
    base = server.url
    watch = Watch(page, server.port)
    canvas = f"{base}/a/main/c/{hostile.canvas}/"

    # The canvas, anonymous (loopback): it is drawn, the labels are text, the socket is live.
    response = page.goto(canvas)
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert f"ws://127.0.0.1:{server.port}" in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "same-origin"
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=30000)
    page.wait_for_function("() => document.body.dataset.liveState === 'live'", timeout=15000)
    svg = page.locator(".mermaid-host svg")
    # a label wraps like mermaid's: its drawn lines joined by spaces read as the author's text
    text = svg.evaluate(
        "s => [...s.querySelectorAll('text')].map(t => [...t.children].map(c => c.textContent)"
        ".join(' ')).join(' ')"
    )
    text = " ".join(text.split())
    assert f"<img src='http://{evil}/n1.png'> hostile one" in text
    assert '<a href="http://evil.example/n2">click me</a>' in text
    assert "<details open>" in text and "%%{init:" in text
    assert svg.locator("img, a, details, foreignObject svg, image").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "hostile-canvas.png"), full_page=True)
    # clicking a node swaps its panel in with htmx
    # (the map may have the node outside the visible part of its view: a click event on it)
    page.locator(".mermaid-host g.node", has_text="hostile one").first.dispatch_event("click")
    page.locator("#node-panel .node-detail").wait_for(timeout=10000)
    assert "<img src=http://evil.example/row.png>" in page.locator("#node-panel").inner_text()
    watch.check("canvas")

    pages = {
        "home": f"{base}/",
        "agent": f"{base}/a/main/",
        "session": f"{base}/a/main/s/{session}/",
        "ref": f"{base}/a/main/refs/{quote(ref)}",
        "search": f"{base}/search/?q=hostile",
        "history": f"{canvas}history/",
        "revision": f"{canvas}history/1/",
        "preview": f"{canvas}preview/",
        "lint": f"{canvas}lint/",
        "login": f"{base}/login/",
    }
    for name, url in pages.items():
        response = page.goto(url)
        assert response is not None and response.status == 200, (name, response and response.status)
        assert "content-security-policy" in response.headers, name
        if name == "ref":
            assert f"<img src=http://{evil}/result.png>" in page.locator("main").inner_text()
        if name == "revision":
            page.wait_for_function(
                "() => document.querySelectorAll('.static-diagram svg').length > 0", timeout=30000
            )
            assert "hostile one" in (page.locator(".static-diagram svg").first.text_content() or "")
        watch.check(name)

    # Signed in, the canvas carries the editing UI too; it stays within the policy.
    _login(page, base)
    page.goto(canvas)
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=30000)
    # (the map may have the node outside the visible part of its view: a click event on it)
    page.locator(".mermaid-host g.node", has_text="hostile one").first.dispatch_event("click")
    page.locator("#node-panel .node-detail").wait_for(timeout=10000)
    page.goto(f"{base}/tokens/")
    page.goto(f"{base}/uploads/")
    watch.check("signed in")
