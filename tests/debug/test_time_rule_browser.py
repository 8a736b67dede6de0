"""One time rule on every page: the agent's own stamp as text, the viewer's zone a hover away."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.debug import replay_fixture as fx

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

TIMES = "els => els.map(e => [e.dateTime, e.textContent.trim(), e.title])"


def test_times_read_as_the_agent_wrote_them_with_the_viewers_zone_on_hover(
    live_server, chromium_launch, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    fx.build(tmp_path / "root")
    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium_launch)
        # A viewer far from the agent's +08:00: the text must not follow the viewer's zone.
        page = browser.new_context(timezone_id="America/New_York").new_page()
        seen = []
        for path in ("/sessions/", "/a/after/", f"/a/after/s/{fx.SESSION}/"):
            page.goto(f"{live_server.url}{path}")
            seen += page.eval_on_selector_all("main time[datetime]", TIMES)
        page.goto(f"{live_server.url}/a/after/s/{fx.SESSION}/replay/?at={fx.iso_at(12).replace('+', '%2B')}")
        page.wait_for_function("() => document.body.dataset.replayReady === '1'", timeout=20000)
        seen += page.eval_on_selector_all("#replay-time", TIMES)
        footer = page.inner_text("footer.site-foot")
        browser.close()
    assert len(seen) >= 4
    for stamp, text, title in seen:
        assert text == stamp, (stamp, text)  # the agent's stamp, offset included
        assert title and ("EST" in title or "EDT" in title or "GMT-" in title), title
    assert "as the agent wrote them" in footer
