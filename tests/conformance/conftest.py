"""The real mermaid for the conformance suite: one chromium page parses many texts in a batch."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
MERMAID_JS = REPO / "static" / "vendor" / "mermaid" / "mermaid.min.js"
PARSE_ALL = """async (texts) => {
  mermaid.initialize({startOnLoad: false, securityLevel: "strict"});
  const results = [];
  for (const text of texts) {
    try { await mermaid.parse(text); results.push(null); }
    catch (error) { results.push(String(error && error.message || error).slice(0, 300)); }
  }
  return results;
}"""


@pytest.fixture(scope="module")
def mermaid_page(chromium_launch: dict) -> Iterator[Any]:
    """One blank chromium page with mermaid loaded, per module: Playwright's sync API holds an
    event loop while it runs, so it must be closed before other modules' tests use asyncio."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**chromium_launch)
        page = browser.new_page()
        page.set_content("<html><body></body></html>")
        page.add_script_tag(path=str(MERMAID_JS))
        yield page
        browser.close()


@pytest.fixture(scope="module")
def mermaid_verdicts(mermaid_page: Any) -> Callable[[list[str]], list[str | None]]:
    """`verdicts(texts)`: mermaid.parse() of each text in one page; None when it parses."""
    page = mermaid_page

    def verdicts(texts: list[str]) -> list[str | None]:
        results: list[str | None] = []
        for start in range(0, len(texts), 400):  # keeps each round trip small
            results += page.evaluate(PARSE_ALL, texts[start : start + 400])
        return results

    return verdicts


def assert_mermaid_parses(
    verdicts: Callable[[list[str]], list[str | None]], texts: dict[str, str]
) -> None:
    names = list(texts)
    results = verdicts([texts[n] for n in names])
    failures = {n: r for n, r in zip(names, results, strict=True) if r is not None}
    assert not failures, "\n\n".join(
        f"{n}:\n{r}\n---\n{texts[n]}" for n, r in list(failures.items())[:5]
    )
