"""Curation checks of a canvas: empty nodes, rows on no canvas, unmapped rows, missing refs."""

from __future__ import annotations

from typing import Any

from django.db.models import Count

from canvases.indexing import parsed
from canvases.mermaid import agent_view
from canvases.models import Canvas, Revision
from canvases.selectors import row_counts
from sessions.memory.state_edit import CANVAS_BUDGET_CHARS
from sessions.models import Agent, Ref, Row
from sessions.selectors import placed_node_ids, ref_locate


def pruned_ids(canvas_qs: Any) -> set[str]:
    ids: set[str] = set()
    for params in Revision.objects.filter(
        canvas__in=canvas_qs, op="prune", undone=False
    ).values_list("params", flat=True):
        if isinstance(params, dict) and isinstance(params.get("node"), str):
            ids.add(params["node"])
    return ids


def canvas_lint(agent: Agent, canvas: Canvas) -> dict[str, Any]:
    """Curation checks: empty nodes, rows on no canvas, unmapped rows, missing refs, budget."""
    doc = parsed(canvas.text)
    counts = row_counts(agent, doc)
    placed = placed_node_ids(agent)
    pruned = pruned_ids(agent.canvases.all())
    orphans = (
        Row.objects.filter(agent=agent)
        .exclude(node_id__isnull=True)
        .exclude(node_id__in=[*placed, "wait", ""])
        .values("node_id")
        .annotate(n=Count("id"))
        .order_by("node_id")
    )
    unmapped = Row.objects.filter(agent=agent).filter(node_id__isnull=True).count()
    waiting = Row.objects.filter(agent=agent, node_id="wait").count()
    refs = set(Ref.objects.filter(agent=agent).values_list("name", flat=True))
    missing = []
    for row in Row.objects.filter(agent=agent, node_id__in=list(doc.nodes)).exclude(
        result_ref__isnull=True
    )[:2000]:
        located = ref_locate(agent, row.result_ref)
        if located and located.get("name") and located["name"] not in refs:
            missing.append(
                {"node_id": row.node_id, "tool_call_id": row.tool_call_id, "ref": row.result_ref}
            )
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
            {"node_id": o["node_id"], "rows": o["n"], "pruned": o["node_id"] in pruned}
            for o in orphans
        ],
        "unmapped_rows": unmapped,
        "wait_rows": waiting,
        "missing_refs": missing,
        "size_chars": size,
        "budget_chars": CANVAS_BUDGET_CHARS,
        "over_budget": size > CANVAS_BUDGET_CHARS,
        "node_ids": list(doc.nodes),
    }
