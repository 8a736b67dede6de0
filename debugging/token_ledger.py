"""The token ledger: raw results (refs) vs their summaries vs the canvas vs the injected block.

Plain Python. Counting every token of a 250k-row agent takes minutes on this kind of machine,
so each layer is counted exactly up to a budget of characters and, past it, on an even sample
whose tokens-per-character ratio estimates the rest; the ledger says which layers are exact.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from agentfs.row_fields import node_aliases
from canvases.mermaid import Node
from debugging.page_types import LayerCount, LedgerSeries

EXACT_BUDGET_CHARS = 400_000
SERIES_POINTS = 300
Counter = Callable[[list[str]], list[int]]


@dataclass(slots=True)
class Layer:
    tokens: int
    items: int
    exact_items: int
    chars: int

    @property
    def exact(self) -> bool:
        return self.exact_items == self.items

    def as_json(self) -> LayerCount:
        return {
            "tokens": self.tokens,
            "items": self.items,
            "exact_items": self.exact_items,
            "exact": self.exact,
            "chars": self.chars,
        }


def measure(
    sizes: list[int],
    load: Callable[[int], str | None],
    count_many: Counter,
    *,
    budget: int | None = None,
) -> tuple[list[float], Layer]:
    """Tokens of each item: exact for an even sample within ``budget``, estimated by size else.

    ``sizes`` are in any unit (characters, or bytes for files); the estimate uses the sample's
    tokens per unit, so the unit only has to be the same for all items.
    """
    budget = EXACT_BUDGET_CHARS if budget is None else budget
    total = sum(sizes)
    stride = 1 if total <= budget else math.ceil(total / budget)
    sample = list(range(0, len(sizes), stride))
    texts: list[str] = []
    kept: list[int] = []
    for index in sample:
        text = load(index)
        if text is not None:
            texts.append(text)
            kept.append(index)
    counts = count_many(texts)
    per_item: list[float] = [0.0] * len(sizes)
    for index, tokens in zip(kept, counts, strict=True):
        per_item[index] = float(tokens)
    sampled_size = sum(sizes[i] for i in kept)
    ratio = sum(counts) / sampled_size if sampled_size else 0.0
    exact = set(kept)
    for index, size in enumerate(sizes):
        if index not in exact:
            per_item[index] = size * ratio
    layer = Layer(round(sum(per_item)), len(sizes), len(kept), total)
    return per_item, layer


def _line_ids(text: str, ids: list[str]) -> list[set[str]]:
    if not ids:
        return [set() for _ in text.split("\n")]
    pattern = re.compile(
        r"(?<![\w-])("
        + "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
        + r")(?![\w-])"
    )
    return [set(pattern.findall(line)) for line in text.split("\n")]


@dataclass(slots=True)
class CanvasGrowth:
    """A canvas's tokens over time: each line counts from the moment all its nodes exist."""

    file: str
    steps: list[tuple[datetime | None, float]]  # (from when, tokens added); None: always there
    total: int

    def at(self, moment: datetime | None) -> float:
        if moment is None:
            return float(self.total)
        return sum(t for when, t in self.steps if when is None or when <= moment)


def canvas_growth(
    file: str,
    text: str,
    node_times: dict[str, datetime | None],
    line_tokens: list[float],
    exact_total: int | None,
) -> CanvasGrowth:
    """``node_times``: each node's first appearance; ``line_tokens`` per line of ``text``."""
    lines = _line_ids(text, list(node_times))
    steps: dict[datetime | None, float] = {}
    for ids, tokens in zip(lines, line_tokens, strict=True):
        known = [t for i in ids if (t := node_times.get(i)) is not None]
        when = max(known) if known else None
        steps[when] = steps.get(when, 0.0) + tokens
    line_sum = sum(line_tokens)
    total = exact_total if exact_total is not None else round(line_sum)
    scale = total / line_sum if line_sum else 0.0
    ordered = sorted(steps.items(), key=lambda s: (s[0] is not None, s[0] or datetime.min))
    return CanvasGrowth(file, [(w, t * scale) for w, t in ordered], total)


def node_times(
    doc_nodes: Mapping[str, Node],
    first_row: dict[str, datetime],
    parse: Callable[[str | None], datetime | None],
) -> dict[str, datetime | None]:
    out: dict[str, datetime | None] = {}
    for node_id, node in doc_nodes.items():
        known = [parse(node.fields.timestamp)] + [first_row.get(a) for a in node_aliases(node_id)]
        dated = [k for k in known if k is not None]
        out[node_id] = min(dated) if dated else None
    return out


def ledger_series(
    times: list[datetime | None],
    ref_tokens: list[float],
    summary_tokens: list[float],
    active: list[str | None],
    growth: dict[str, CanvasGrowth],
    block_overhead: dict[str, int],
) -> LedgerSeries:
    """Cumulative refs and summaries, and the active canvas / injected block, at ≤300 rows."""
    n = len(times)
    step = max(1, math.ceil(n / SERIES_POINTS))
    picks = sorted(set(range(step - 1, n, step)) | ({n - 1} if n else set()))
    # The agent's own UTC offset (its last stamp's): the chart's axis reads as its stamps do.
    offset = next((t.utcoffset() for t in reversed(times) if t is not None), None)
    out: LedgerSeries = {
        "t": [],
        "refs": [],
        "summaries": [],
        "canvas": [],
        "block": [],
        "utc_offset_minutes": offset.total_seconds() / 60 if offset is not None else None,
    }
    cum_refs = cum_summaries = 0.0
    pick_set = set(picks)
    for index in range(n):
        cum_refs += ref_tokens[index]
        cum_summaries += summary_tokens[index]
        moment = times[index]
        if index not in pick_set or moment is None:
            continue
        file = active[index]
        canvas = growth[file].at(moment) if file in growth else 0.0
        block = canvas + block_overhead.get(file or "", 0) if file in growth else 0.0
        out["t"].append(moment.timestamp())
        out["refs"].append(round(cum_refs))
        out["summaries"].append(round(cum_summaries))
        out["canvas"].append(round(canvas))
        out["block"].append(round(block))
    return out


