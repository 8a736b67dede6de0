"""One rule for how much smaller a memory layer is (sessions/compression.py): the home and agent
pages' byte ratios and the token ledger's token ratios round alike, so a canvas bigger than its
summaries reads 0.04×, not 0×, on every page."""

from __future__ import annotations

import pytest

from sessions.compression import compression, ratio
from sessions.models import Agent
from sessions.selectors import agent_summary


def test_a_ratio_keeps_two_decimals_below_one_and_none_without_a_base() -> None:
    assert (ratio(250, 10), ratio(1, 25), ratio(1, 3), ratio(5, 0)) == (25.0, 0.04, 0.33, None)


@pytest.mark.django_db
def test_the_agent_pages_ratio_is_the_ledgers_rule() -> None:
    agent = Agent.objects.create(
        slug="a", name="a", path="/nowhere", refs_bytes=1000, summary_bytes=40, canvas_bytes=1000
    )
    assert agent_summary(agent)["compression"] == compression(1000, 40, 1000) == {
        "refs_to_summaries": 25.0,
        "summaries_to_canvas": 0.04,
        "refs_to_canvas": 1.0,
    }
