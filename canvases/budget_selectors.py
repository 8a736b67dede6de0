"""The budget panel's reads: node shares, the rows' scores per node, suggestions to a target."""

from __future__ import annotations

import copy

from django.db.models import Count, Q

from agentfs.row_fields import node_aliases
from canvases import budget
from canvases.indexing import parsed
from canvases.panel_types import BudgetPage, PlanItem, SharesItem
from sessions.models import Canvas, Row


def row_stats(canvas: Canvas, node_ids: list[str], low_score: float) -> dict[str, budget.RowStats]:
    """Per node: its rows, and those with a score at or below `low_score` or marked deleted."""
    alias_to_node = {alias: nid for nid in node_ids for alias in node_aliases(nid)}
    low = Q(offloaded="deleted") | Q(score__lte=low_score)
    counts = (
        Row.objects.filter(agent_id=canvas.agent_id, node_id__in=list(alias_to_node))
        .values("node_id")
        .annotate(n=Count("id"), low=Count("id", filter=low))
    )
    totals: dict[str, list[int]] = {}
    for item in counts:
        total = totals.setdefault(alias_to_node[item["node_id"] or ""], [0, 0])
        total[0] += item["n"]
        total[1] += item["low"]
    return {nid: budget.RowStats(rows, low) for nid, (rows, low) in totals.items()}


def _number(raw: str | None, default: float, low: float, high: float) -> float:
    try:
        value = float(raw) if raw not in (None, "") else default
    except ValueError:
        return default
    return min(max(value, low), high)


def budget_detail(canvas: Canvas, query: dict[str, str]) -> BudgetPage:
    """The shares and the suggestions for the target in `query` (`target`, `low`, `limit`)."""
    target = int(_number(query.get("target"), budget.DEFAULT_TARGET, 200, 1_000_000))
    low_score = _number(query.get("low"), budget.DEFAULT_LOW_SCORE, 0, 10)
    limit = int(_number(query.get("limit"), budget.DEFAULT_SUMMARY_LIMIT, 10, 150))
    doc = parsed(canvas.text)
    stats = row_stats(canvas, list(doc.nodes), low_score)
    shares = budget.node_shares(canvas.filename, canvas.text)
    plan = budget.suggest(canvas.filename, canvas.text, stats, target=target, summary_limit=limit)
    return {
        "agent": canvas.agent.slug,
        "file": canvas.filename,
        "content_hash": canvas.content_hash,
        "target": target,
        "low": low_score,
        "limit": limit,
        "shares": _shares_json(shares),
        "plan": _plan_json(plan),
        "groups": [{"id": s.id, "title": s.title} for s in doc.subgraphs],
        "rows": {
            nid: {"rows": s.rows, "low_or_dropped": s.low_or_dropped} for nid, s in stats.items()
        },
    }


# Field for field, in the dataclasses' order (tests/canvases/test_panel_shapes.py checks that
# the JSON names every field of budget.Shares, NodeShare, Plan, Suggestion and RowStats).
def _shares_json(shares: budget.Shares) -> SharesItem:
    return {
        "block_chars": shares.block_chars,
        "block_tokens": shares.block_tokens,
        "canvas_chars": shares.canvas_chars,
        "overhead": shares.overhead,
        "nodes": [
            {"id": n.id, "title": n.title, "status": n.status, "chars": n.chars, "percent": n.percent}
            for n in shares.nodes
        ],
    }


def _plan_json(plan: budget.Plan) -> PlanItem:
    return {
        "target": plan.target,
        "canvas_chars": plan.canvas_chars,
        "block_chars": plan.block_chars,
        "after_canvas_chars": plan.after_canvas_chars,
        "after_block_chars": plan.after_block_chars,
        "after_block_tokens": plan.after_block_tokens,
        "reached": plan.reached,
        "elapsed_ms": plan.elapsed_ms,
        "more": plan.more,
        "suggestions": [
            {
                "key": s.key,
                "kind": s.kind,
                "nodes": list(s.nodes),
                "step": copy.deepcopy(s.step),  # as asdict gave it: the page's own copy
                "before_chars": s.before_chars,
                "after_chars": s.after_chars,
                "diff": s.diff,
                "saved": s.saved,
            }
            for s in plan.suggestions
        ],
    }
