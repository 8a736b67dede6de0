"""Issue 22 item 12: no 500 or page error from any query string or fragment.

``/search/?q=a%00b`` answered 500, and ``#node=%`` on a canvas threw URIError in the page so
nothing was drawn. Every GET view is also tried with odd values of every parameter memviz reads.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

pytestmark = [pytest.mark.slow]
SESSION = "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90"
CANVAS = "001-fix-login-timeout.mmd"
PAGES = [
    "/",
    "/search/",
    "/sessions/",
    "/uploads/",
    "/tokens/",
    "/jobs/1/",
    "/a/main/",
    f"/a/main/s/{SESSION}/",
    f"/a/main/s/{SESSION}/replay/",
    f"/a/main/s/{SESSION}/diagnostics/",
    f"/a/main/s/{SESSION}/ledger/",
    f"/a/main/s/{SESSION}/report.md",
    f"/a/main/c/{CANVAS}/",
    f"/a/main/c/{CANVAS}/n/001-N2/",
    f"/a/main/c/{CANVAS}/history/",
    f"/a/main/c/{CANVAS}/preview/",
    f"/a/main/c/{CANVAS}/lint/",
    f"/a/main/c/{CANVAS}/live/",
    f"/a/main/c/{CANVAS}/compare/",
    "/a/main/diagnostics/",
    "/a/main/badges/",
    "/a/main/ledger/",
    "/a/main/node/001-N2",
    "/a/main/refs/2026-06-10T09-12-03-417p08-00.md",
]
# every parameter a view reads (grep GET.get / params.get), each with values a fuzzer would try
PARAMS = [
    "q", "format", "page", "offset", "raw", "node", "nodes", "collapsed", "only", "sort", "order",
    "agent", "session", "diagnosis", "from", "to", "a", "b", "at", "row", "revision", "limit",
    "unplaced_after", "canvases_before", "offloaded", "unmapped", "min_score", "max_score",
    "status", "source", "target", "into", "held", "progress", "task_goal", "canvas",
    "nodes_before", "rows_before",
]  # fmt: skip
VALUES = [
    "%00", "a%00b", "%01", "%7F", "%", "%ZZ", "%ff%fe", "-1", "99999999999999999999999", "1e400",
    "NaN", "..%2F..%2Fadmin", "%E2%80%A8", "'%22<>", "[]", "%0d%0aX-Evil:%201", "x" * 3000,
]  # fmt: skip


def test_no_query_string_gives_a_500(served, http_session) -> None:
    server = served()
    client = http_session(server)
    nul = client.request("GET", "/search/?q=a%00b&format=json")
    assert nul.status == 400, nul.status
    assert "control characters" in json.loads(nul.body)["error"]
    assert client.request("GET", "/search/?q=login&format=json").status == 200
    failures = []

    def probe(url: str) -> None:
        response = client.request("GET", url)
        if response.status >= 500:
            failures.append((url[:120], response.status))

    for page in PAGES:
        for number, value in enumerate(VALUES[:-1]):  # every parameter at once (URI < 16 kB)
            query = "&".join(f"{param}={value}" for param in PARAMS if param != "format")
            probe(f"{page}?{query}" + ("&format=json" if number % 2 else ""))
        for number, param in enumerate(PARAMS):  # each parameter alone (no other one masks it)
            value = VALUES[number % len(VALUES)]
            probe(f"{page}?{param}={value}" + ("&format=json" if number % 2 else ""))
    # path segments: controls and odd escapes in every position an id takes
    for odd in ("%00", "a%00b", "%0a", "%25", "..", "%2e%2e", quote("../../admin/", safe="")):
        for template in ("/a/{}/", "/a/main/s/{}/", "/a/main/c/{}/", f"/a/main/c/{CANVAS}/n/{{}}/",
                         "/a/main/refs/{}", "/a/main/node/{}", "/a/main/s/{}/report.md"):  # fmt: skip
            probe(template.format(odd))
    assert failures == []
    log = server.log.read_text()
    assert "Traceback" not in log, log[-3000:]


@pytest.mark.browser
def test_a_malformed_node_fragment_still_draws_the_canvas(served, page) -> None:
    server = served()
    for fragment in ("#node=%", "#node=%E0%A4%A", "#node=%ZZ"):
        page.errors.clear()
        page.goto(f"{server.url}/a/main/c/{CANVAS}/{fragment}")
        page.wait_for_function(
            "() => document.body.dataset.canvasRendered === 'ok'", timeout=30000
        )
        assert page.locator(".mermaid-host svg").count() == 1
        assert page.errors == [], (fragment, page.errors)
    # a good fragment still selects its node
    page.goto(f"{server.url}/a/main/c/{CANVAS}/#node=001-N2")
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=30000)
    assert page.errors == []


