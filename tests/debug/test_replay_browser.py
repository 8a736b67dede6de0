"""Replay in Debian's chromium: the slider at three instants shows exactly the expected nodes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import ARTIFACTS
from tests.debug import replay_fixture as fx

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def drawn_nodes(page) -> set[str]:
    """Node ids drawn in the SVG and not faded."""
    return set(
        page.eval_on_selector_all(
            "#replay-diagram g.node[data-memviz-id]:not(.replay-absent)",
            "els => els.map(e => e.dataset.memvizId)",
        )
    )


def wait_frame(page, index: int) -> None:
    page.wait_for_function(
        f"() => document.body.dataset.replayReady === '1' && document.body.dataset.frame === '{index}'",
        timeout=20000,
    )


@pytest.mark.parametrize(
    ("agent", "cases", "source"),
    [("watched", fx.FROM_REVISIONS, "revision"), ("after", fx.FROM_TIMESTAMPS, "reconstructed")],
)
def test_slider_at_three_instants(live_server, page, tmp_path: Path, agent, cases, source) -> None:
    fx.build(tmp_path / "root")
    base = f"{live_server.url}/a/{agent}/s/{fx.SESSION}/replay/"
    for number, (minutes, expected) in enumerate(cases):
        page.goto(f"{base}?at={fx.iso_at(minutes).replace('+', '%2B')}")
        index = int(minutes // 10)
        wait_frame(page, index)
        assert drawn_nodes(page) == expected
        assert set(page.evaluate("document.body.dataset.present").split(",")) == expected
        assert page.evaluate("document.body.dataset.replaySource") == source
        label = page.inner_text("#replay-source")
        assert ("revision" in label) == (source == "revision")
        assert ("reconstructed" in label) == (source == "reconstructed")
        page.screenshot(path=str(ARTIFACTS / f"replay-{agent}-{number}.png"), full_page=True)
    assert page.errors == []


def test_keys_step_one_row_and_nodes_are_clickable(live_server, page, tmp_path: Path) -> None:
    fx.build(tmp_path / "root")
    page.goto(
        f"{live_server.url}/a/after/s/{fx.SESSION}/replay/?at={fx.iso_at(12).replace('+', '%2B')}"
    )
    wait_frame(page, 1)
    page.keyboard.press("ArrowRight")
    wait_frame(page, 2)
    assert drawn_nodes(page) == {"001-N1", "001-N3"}
    assert "at=" in page.url and "09%3A20" in page.url  # the deep link follows the step
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    wait_frame(page, 0)
    assert page.locator("#replay-rows li.row").count() == 1
    page.keyboard.press("End")  # not a step key: nothing changes
    page.locator("#replay-slider").fill("5")
    wait_frame(page, 5)
    page.locator("#replay-diagram g.node[data-memviz-id='001-N4']").click()
    panel = page.locator("#replay-node")
    panel.wait_for(state="visible")
    assert panel.get_attribute("data-node") == "001-N4"
    assert panel.locator("li.row").count() == 2  # its two rows so far
    assert "exec: make release" in panel.inner_text()
    assert page.errors == []
