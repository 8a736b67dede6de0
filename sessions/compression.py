"""How much smaller each memory layer is than the one below it: one rule for the home page's
bytes and the token ledger's tokens. Plain Python."""

from __future__ import annotations

from sessions.page_types import Compression


def ratio(high: float, low: float) -> float | None:
    """``high / low`` as a page shows it (one decimal, two below 1 so 0.04 is not "0×"); None when
    there is nothing to compare against."""
    if not low:
        return None
    value = high / low
    return round(value, 1) if value >= 1 else round(value, 2)


def compression(refs: float, summaries: float, canvas: float) -> Compression:
    """The layers' ratios: raw results to summaries, summaries to the canvas, results to canvas."""
    return {
        "refs_to_summaries": ratio(refs, summaries),
        "summaries_to_canvas": ratio(summaries, canvas),
        "refs_to_canvas": ratio(refs, canvas),
    }
