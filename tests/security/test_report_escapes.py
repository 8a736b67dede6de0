"""Issue 22 item 11: the Markdown run report keeps tool text inert.

A markdown image of a remote URL in a row's summary stayed active in the downloaded report, so
whoever opened the report in a Markdown viewer fetched it.
"""

from __future__ import annotations

import json
from pathlib import Path

import markdown
import pytest
from bs4 import BeautifulSoup

pytestmark = [pytest.mark.slow]


def test_images_links_and_html_in_tool_text_stay_text_in_the_report(
    served, http_session, hostile_root: Path, hostile
) -> None:
    evil = hostile.evil
    row = {
        "tool_call_id": "call_report_1",
        "tool_call": f"exec: ![t](http://{evil}/tool.png) `x` [l](http://{evil}/l)",
        "summary": f"done ![s](http://{evil}/summary.png) <img src=http://{evil}/raw.png> "
        f"[![n](http://{evil}/nested.png)](http://{evil}/nl) *a* _b_ | c",
        "timestamp": "2026-06-12T10:00:01.000+08:00",
        "score": 5,
        "node_id": f"003-N1 ![n](http://{evil}/node.png) `",
        "result_ref": None,
    }
    path = hostile_root / "main" / f"offload-{hostile.session}.jsonl"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
    server = served(data_root=hostile_root)
    response = http_session(server).request("GET", f"/a/main/s/{hostile.session}/report.md")
    assert response.status == 200
    text = response.body.decode()
    assert f"http://{evil}/summary.png" in text  # the text is kept, only made inert
    html = markdown.markdown(text, extensions=["tables", "fenced_code"])
    page = BeautifulSoup(html, "html.parser")
    for pre in page.select("pre"):  # the canvas source is shown as code: literal by design
        pre.decompose()
    fetching = [str(t) for t in page.select("img, a[href], iframe, script")]
    assert fetching == [], fetching
    summary_cells = [td.get_text() for td in page.select("td") if "done" in td.get_text()]
    assert summary_cells and f"![s](http://{evil}/summary.png)" in summary_cells[0]
