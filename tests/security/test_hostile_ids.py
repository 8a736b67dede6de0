"""Issue 22 item 10: links built from hostile ids stay inside the agent's pages.

A row's ``node_id`` of ``../../../../admin/`` became ``/a/main/node/../../../../admin/``: a
same-origin link the browser resolves to ``/admin/``. Node ids now travel as a query value.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.browser]
HOSTILE_IDS = ["../../../../admin/", "..", "a/../../../../logout/", "%2e%2e/%2e%2e/admin", "./x"]


def test_links_from_hostile_node_ids_resolve_inside_the_agent(
    served, page, hostile_root: Path, hostile
) -> None:
    path = hostile_root / "main" / f"offload-{hostile.session}.jsonl"
    with open(path, "a", encoding="utf-8") as handle:
        for number, node_id in enumerate(HOSTILE_IDS):
            row = {
                "tool_call_id": f"call_id_{number}",
                "tool_call": "exec: x",
                "summary": "s",
                "timestamp": f"2026-06-12T10:00:0{number}.000+08:00",
                "score": 5,
                "node_id": node_id,
                "result_ref": None,
            }
            handle.write(json.dumps(row) + "\n")
    server = served(data_root=hostile_root)
    checked = 0
    for url in (
        f"{server.url}/a/main/s/{hostile.session}/",
        f"{server.url}/a/main/s/{hostile.session}/diagnostics/",
        f"{server.url}/a/main/",
    ):
        page.goto(url)
        links = page.eval_on_selector_all(
            "a", "els => els.map(e => [e.textContent.trim(), e.href])"
        )
        for text, href in links:
            if text in HOSTILE_IDS:
                checked += 1
                parts = urlsplit(href)
                assert parts.netloc == f"127.0.0.1:{server.port}", href
                assert parts.path.startswith("/a/main/"), (text, href)
    assert checked >= len(HOSTILE_IDS)
    # following one: memviz looks the id up and answers within the agent (no such node: 404)
    page.goto(f"{server.url}/a/main/s/{hostile.session}/")
    link = page.locator(".node-ref a", has_text="../../../../admin/").first
    with page.expect_navigation():
        link.click()
    assert urlsplit(page.url).path.startswith("/a/main/"), page.url
