"""Curation checks of a canvas: empty nodes, rows on no canvas, unmapped rows, missing refs."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection

from agentfs.row_fields import node_aliases
from agentfs.state_edit import CANVAS_BUDGET_CHARS
from canvases.indexing import parsed
from canvases.mermaid import agent_view
from canvases.messages import problem_item
from canvases.models import Revision
from canvases.panel_types import LintPage
from sessions import counters
from sessions.models import Agent, AgentSession, Canvas, Ref, Row
from sessions.selectors import RefLocator


def pruned_ids(canvas_qs: Any) -> set[str]:
    ids: set[str] = set()
    for params in Revision.objects.filter(
        canvas__in=canvas_qs, op="prune", undone=False
    ).values_list("params", flat=True):
        if isinstance(params, dict) and isinstance(params.get("node"), str):
            ids.add(params["node"])
    return ids


MISSING_REF_ROWS = 2000

# Per node id, that node's rows with a ref through the (agent, node_id, …) index; the LIMIT inside
# the LATERAL keeps PostgreSQL from flattening it into a scan of the agent's rows (it estimates
# thousands of rows for a list of node ids and picked a sequential scan: 60-130 ms at 100k rows).
# The ref check is a LATERAL with LIMIT 1 for the same reason: one index probe per row instead
# of hashing every ref name of the agent.
_PG_ROWS = """
SELECT c.node_id, c.tool_call_id, c.result_ref FROM (
  SELECT r.* FROM unnest(%(ids)s::text[]) AS n(id) CROSS JOIN LATERAL (
    SELECT r.node_id, r.tool_call_id, r.result_ref, s.session_id AS sname, r.line_no
    FROM {row} r JOIN {session} s ON s.id = r.session_id
    WHERE r.agent_id = %(agent)s AND r.node_id = n.id AND r.result_ref IS NOT NULL
    ORDER BY s.session_id, r.line_no LIMIT %(cap)s
  ) r ORDER BY r.sname, r.line_no LIMIT %(cap)s
) c LEFT JOIN LATERAL (
  SELECT 1 AS hit FROM {ref} f WHERE f.agent_id = %(agent)s AND f.name = c.result_ref LIMIT 1
) f ON true
WHERE f.hit IS NULL ORDER BY c.sname, c.line_no
"""
# SQLite plans the same query shape well as a plain join (nested loops over the indexes).
_SQLITE_ROWS = """
SELECT c.node_id, c.tool_call_id, c.result_ref FROM (
  SELECT r.node_id, r.tool_call_id, r.result_ref, s.session_id AS sname, r.line_no
  FROM json_each(%(ids)s) n JOIN {row} r ON r.agent_id = %(agent)s AND r.node_id = n.value
  JOIN {session} s ON s.id = r.session_id
  WHERE r.result_ref IS NOT NULL ORDER BY s.session_id, r.line_no LIMIT %(cap)s
) c
WHERE NOT EXISTS (SELECT 1 FROM {ref} f WHERE f.agent_id = %(agent)s AND f.name = c.result_ref)
ORDER BY c.sname, c.line_no
"""


def rows_without_indexed_ref(agent: Agent, node_ids: list[str]) -> list[tuple[str, str, str]]:
    """(node_id, tool_call_id, result_ref) of the first ``MISSING_REF_ROWS`` rows on these node
    ids that have a ``result_ref`` (in session then line order), keeping those whose
    ``result_ref`` is not literally the name of an indexed ref: few, usually none. The node ids
    travel as one parameter (an array, a JSON list), never as a literal list."""
    if not node_ids:
        return []
    postgres = connection.vendor == "postgresql"
    sql = (_PG_ROWS if postgres else _SQLITE_ROWS).format(
        row=Row._meta.db_table, session=AgentSession._meta.db_table, ref=Ref._meta.db_table
    )
    params = {
        "ids": list(node_ids) if postgres else json.dumps(list(node_ids)),
        "agent": agent.pk,
        "cap": MISSING_REF_ROWS,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [tuple(item) for item in cursor.fetchall()]


def canvas_lint(agent: Agent, canvas: Canvas) -> LintPage:
    """Curation checks: empty nodes, rows on no canvas, unmapped rows, missing refs, budget.

    Read from the kept figures (`sessions.counters`: per-node row counts, unplaced counts), not
    from every row and ref name of the agent: 12 ms at 1M rows (docs/performance.md).
    """
    doc = parsed(canvas.text)
    alias_to_node = {alias: nid for nid in doc.nodes for alias in node_aliases(nid)}
    counts: dict[str, int] = {}
    row_counts = counters.node_row_counts(agent, alias_to_node)
    for alias, rows in row_counts.items():
        counts[alias_to_node[alias]] = counts.get(alias_to_node[alias], 0) + rows
    pruned = pruned_ids(agent.canvases.all())
    unplaced = counters.unplaced_counts(agent)
    # Only the canvas ids that carry rows (the kept counts say which) are looked up.
    with_rows = [nid for nid in doc.nodes if nid in row_counts]
    refs_of_rows = rows_without_indexed_ref(agent, with_rows)
    locator = RefLocator(agent)
    located = {ref: locator.locate(ref) for _n, _t, ref in refs_of_rows}
    names = {loc["name"] for loc in located.values() if loc and loc.get("name")}
    present = set(
        Ref.objects.filter(agent=agent, name__in=names).order_by().values_list("name", flat=True)
    )
    size = len(canvas.text)
    return {
        "agent": agent.slug,
        "file": canvas.filename,
        "content_hash": canvas.content_hash,
        # what the agent itself will make of the file: no goal, deleted as an empty shell, …
        "agent_warnings": [
            problem_item(
                {"line": p.line, "col": p.col, "code": p.code, "values": p.values,
                 "severity": p.severity}
            )
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
