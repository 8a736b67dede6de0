"""What the agent's last write left on a canvas: the damage a stale or partial reply does.

The map-builder splices replace blocks by line number and skips out-of-range ones (spec §4.6,
§4.8.8), then backfills its claimed rows to the ids it meant. A reply that landed off by lines
leaves a node defined twice, an edge overwritten by a definition, and rows pointing at ids its
skipped block would have drawn. Checked on every render of the canvas's live box from the last
agent revision, each with a one-click repair: keep the newer definition (`dedupe`), add the edge
back (`add_edge`), adopt the rows to a node of the canvas (`adopt`).
"""

from __future__ import annotations

from bisect import bisect_right

from django.db.models import Count

from canvases.indexing import parsed
from canvases.liveness import AGENT_AUTHOR
from canvases.mermaid import Canvas as ParsedCanvas
from canvases.mermaid import EditError, EditResult, agent_view
from canvases.page_types import LandedProblem
from sessions.models import Canvas, CanvasNode, Row


def _line(doc: ParsedCanvas, offset: int) -> int:
    return bisect_right(doc.line_starts, offset)


def _standalone(doc: ParsedCanvas) -> dict[int, str]:
    """Lines that are only a node definition: line → node id."""
    out = {}
    for statement in doc.statements:
        refs = [r for g in statement.groups for r in g]
        if statement.kind == "chain" and not statement.links and len(refs) == 1 and refs[0].shape:
            out[statement.line] = refs[0].id
    return out


def duplicates(doc: ParsedCanvas) -> dict[str, list[int]]:
    """Node id → the lines defining it (shape and label), for nodes defined more than once."""
    out = {}
    for node_id, node in doc.nodes.items():
        lines = [_line(doc, r.start) for r in node.refs if r.shape]
        if len(lines) > 1:
            out[node_id] = lines
    return out


def dedupe(text: str, node_id: str, keep: int) -> EditResult:
    """Remove every standalone definition line of `node_id` except line `keep`."""
    doc = parsed(text)
    lines = duplicates(doc).get(node_id)
    if not lines or keep not in lines:
        raise EditError("not_duplicate", node=node_id, line=keep)
    alone = _standalone(doc)
    drop = [n for n in lines if n != keep]
    if any(alone.get(n) != node_id for n in drop):
        raise EditError("duplicate_shares_line", node=node_id)
    kept = [line for number, line in enumerate(text.split("\n"), 1) if number not in drop]
    return EditResult(text="\n".join(kept), removed=[])


def landed(canvas: Canvas) -> list[LandedProblem]:
    """The problems the agent's last write left on `canvas` (empty when none)."""
    revision = (
        canvas.revisions.filter(author=AGENT_AUTHOR)
        .exclude(op="imported")
        .order_by("-number")
        .only("before_text", "after_text", "number")
        .first()
    )
    if revision is None:
        return []
    doc = parsed(canvas.text)
    before = parsed(revision.before_text) if revision.before_text else None
    out: list[LandedProblem] = []
    changed = _changed_lines(revision.before_text, canvas.text)
    twice = duplicates(doc)
    for node_id, lines in twice.items():
        newer = [n for n in lines if n in changed] or lines
        out.append({"kind": "duplicate", "node": node_id, "lines": lines, "keep": newer[-1]})
    if before is not None:  # judged on what the agent wrote; reported while still missing
        wrote = parsed(revision.after_text)
        alone, twice_then = _standalone(wrote), duplicates(wrote)
        now = {(e.source, e.target) for e in doc.edges}
        for edge in before.edges:
            pair = (edge.source, edge.target)
            over = alone.get(edge.line)
            if pair not in now and over in twice_then and set(pair) <= set(doc.nodes):
                out.append(
                    {"kind": "edge_lost", "source": pair[0], "target": pair[1],
                     "line": edge.line, "node": over}
                )
    out += _rows_off_canvas(canvas, doc)
    return out


def _changed_lines(before: str, after: str) -> set[int]:
    old = before.split("\n")
    return {n for n, line in enumerate(after.split("\n"), 1) if n > len(old) or old[n - 1] != line}


def _rows_off_canvas(canvas: Canvas, doc: ParsedCanvas) -> list[LandedProblem]:
    """Rows backfilled to `<this canvas's prefix>-N<k>` ids that are on no canvas."""
    if canvas.number is None:
        return []
    prefix = f"{canvas.number:03d}"
    counts = dict(
        Row.objects.filter(agent_id=canvas.agent_id, node_id__startswith=f"{prefix}-N")
        .values_list("node_id")
        .annotate(n=Count("id"))
        .values_list("node_id", "n")
    )
    drawn = set(
        CanvasNode.objects.filter(agent_id=canvas.agent_id, node_id__in=list(counts)).values_list(
            "node_id", flat=True
        )
    )
    pruned = {
        p.get("node")
        for p in canvas.revisions.filter(op="prune", undone=False).values_list("params", flat=True)
        if isinstance(p, dict)
    }
    target = agent_view.fallback_node(canvas.text, prefix) or next(iter(doc.nodes), None)
    return [
        {"kind": "rows_off_canvas", "node": node_id, "rows": n, "suggest": target,
         "nodes": list(doc.nodes)}
        for node_id, n in sorted(counts.items())
        if node_id not in drawn and node_id not in pruned and node_id not in doc.nodes
    ]
