"""Issue 22 item 5: memviz's cookies are its port's own; a hostile ref's link to a local port is
not clickable.

Browsers keep cookies per host, not per port: memviz's ``sessionid`` went to every program on
127.0.0.1, and another local app's ``sessionid`` overwrote memviz's login (and the other way
round). Names now carry the port (``__Host-`` behind TLS). Hostile refs kept clickable
``http://127.0.0.1:<port>`` links that lure a signed-in user there.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.browser]
PASSWORD = "pw-123456-ok"


class OtherApp(BaseHTTPRequestHandler):
    """Another program on this host with its own Django-like ``sessionid`` and ``csrftoken``."""

    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        OtherApp.seen.append(self.headers.get("Cookie", ""))
        self.send_response(200)
        if self.path == "/login":
            self.send_header("Set-Cookie", "sessionid=other-app-session; Path=/")
            self.send_header("Set-Cookie", "csrftoken=other-app-csrf; Path=/")
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<p>other app</p>")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def other_app():
    server = ThreadingHTTPServer(("127.0.0.1", 0), OtherApp)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    OtherApp.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_memviz_and_another_local_app_keep_their_own_cookies(
    served, page, other_app: str, hostile_root: Path, hostile
) -> None:
    ref = hostile_root / "main" / "refs" / hostile.ref
    links = (
        f"[open the local tool]({other_app}/steal) [v6](http://[::1]:9/x) "
        "[localhost](http://localhost:9/x) [far](//evil.example/x) [ok](https://example.org/) "
        '<span class="lure-mark badge">borrowed classes</span>'
    )
    text = ref.read_text(encoding="utf-8").replace("**Tool:** exec", f"**Tool:** exec {links}")
    ref.write_text(text, encoding="utf-8")
    server = served(users=[("ana", PASSWORD, False)], data_root=hostile_root)
    page.goto(f"{other_app}/login")  # the other app signs its user in first
    page.goto(f"{server.url}/login/")
    page.fill("input[name=username]", "ana")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server.url}/")
    page.goto(f"{other_app}/after")
    assert "sessionid=other-app-session" in OtherApp.seen[-1]  # memviz did not overwrite it
    assert "csrftoken=other-app-csrf" in OtherApp.seen[-1]
    page.goto(f"{other_app}/login")  # the other app sets its cookies again …
    response = page.goto(f"{server.url}/uploads/")  # … and memviz's user is still signed in
    assert response is not None and response.status == 200 and "/login/" not in page.url
    names = {c["name"] for c in page.context.cookies(server.url)}
    assert f"memviz{server.port}_session" in names
    # the hostile ref: its links to this machine are text, an outside https link stays a link
    page.goto(f"{server.url}/a/main/refs/{hostile.ref}")
    hrefs = page.eval_on_selector_all("main a", "els => els.map(e => e.getAttribute('href'))")
    assert not [h for h in hrefs if h and ("127.0.0.1" in h or "localhost" in h or "[::1]" in h)]
    assert not [h for h in hrefs if h and h.startswith("//")]
    assert "https://example.org/" in hrefs
    assert page.get_by_text("borrowed classes").count() >= 1
    assert page.locator(".lure-mark").count() == 0  # a ref keeps no class of its own choosing
    assert page.get_by_text("open the local tool").count() >= 1  # the text itself is kept
