"""Curation checks of a canvas: empty nodes, rows on no canvas, unmapped rows, missing refs."""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef

from canvases.indexing import parsed
from canvases.mermaid import agent_view
from canvases.models import Canvas, Revision
from sessions import counters
from sessions.memory.row_fields import node_aliases
from sessions.memory.state_edit import CANVAS_BUDGET_CHARS
from sessions.models import Agent, Ref, Row
from sessions.selectors import RefLocator


def pruned_ids(canvas_qs: Any) -> set[str]:
    ids: set[str] = set()
    for params in Revision.objects.filter(
        canvas__in=canvas_qs, op="prune", undone=False
    ).values_list("params", flat=True):
        if isinstance(params, dict) and isinstance(params.get("node"), str):
            ids.add(params["node"])
    return ids


def canvas_lint(agent: Agent, canvas: Canvas) -> dict[str, Any]:
    """Curation checks: empty nodes, rows on no canvas, unmapped rows, missing refs, budget.

    Read from the kept figures (`sessions.counters`: per-node row counts, unplaced counts), not
    from every row and ref name of the agent: 12 ms at 1M rows (docs/performance.md).
    """
    doc = parsed(canvas.text)
    alias_to_node = {alias: nid for nid in doc.nodes for alias in node_aliases(nid)}
    counts: dict[str, int] = {}
    for alias, rows in counters.node_row_counts(agent, alias_to_node).items():
        counts[alias_to_node[alias]] = counts.get(alias_to_node[alias], 0) + rows
    pruned = pruned_ids(agent.canvases.all())
    unplaced = counters.unplaced_counts(agent)
    # The first 2,000 rows with a ref, of which only those whose result_ref is not literally an
    # indexed name are located on disk: few, usually none.
    capped = (
        Row.objects.filter(agent=agent, node_id__in=list(doc.nodes))
        .exclude(result_ref__isnull=True)
        .values("id")[:2000]
    )
    refs_of_rows = list(
        Row.objects.filter(id__in=capped)
        .exclude(Exists(Ref.objects.filter(agent=agent, name=OuterRef("result_ref"))))
        .values_list("node_id", "tool_call_id", "result_ref")
    )
    locator = RefLocator(agent)
    located = {ref: locator.locate(ref) for _n, _t, ref in refs_of_rows}
    names = {loc["name"] for loc in located.values() if loc and loc.get("name")}
    present = set(Ref.objects.filter(agent=agent, name__in=names).values_list("name", flat=True))
    size = len(canvas.text)
    return {
        "agent": agent.slug,
        "file": canvas.filename,
        "content_hash": canvas.content_hash,
        # what the agent itself will make of the file: no goal, deleted as an empty shell, …
        "agent_warnings": [
            {"line": p.line, "message": p.message, "severity": p.severity}
            for p in agent_view.agent_warnings(canvas.text)
        ],
        "nodes_without_rows": [
            {"id": n.id, "title": n.fields.title or n.label}
            for n in doc.nodes.values()
            if not counts.get(n.id)
        ],
        "rows_on_no_canvas": [
            {"node_id": node_id, "rows": rows, "pruned": node_id in pruned}
            for node_id, rows in counters.dangling_node_ids(agent)
            if node_id
        ],
        "unmapped_rows": unplaced.null,
        "wait_rows": unplaced.wait,
        "missing_refs": [
            {"node_id": node_id, "tool_call_id": tcid, "ref": ref}
            for node_id, tcid, ref in refs_of_rows
            if (loc := located[ref]) and loc.get("name") and loc["name"] not in present
        ],
        "size_chars": size,
        "budget_chars": CANVAS_BUDGET_CHARS,
        "over_budget": size > CANVAS_BUDGET_CHARS,
        "node_ids": list(doc.nodes),
    }
