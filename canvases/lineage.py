"""Branch lineage: which canvas came from which canvas and revision, and the rows it was given.

Recorded by the write path with the branch's first revision (so a change finished from the
journal records it too); read by the agent page (the tree) and the canvas pages (the copied
rows shown on a branch's nodes). The agent's files never hold any of it.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q
from django.utils.dateparse import parse_datetime

from canvases.models import CanvasBranch, Revision
from canvases.page_types import BranchEntry, BranchRoot
from sessions.models import Agent, Canvas, Row


def lineage_record(canvas: Canvas, revision: Revision, payload: dict[str, Any]) -> CanvasBranch:
    """Store a branch's origin and copied rows (under the agent's lock, with its revision)."""
    source_pk = payload.get("source_pk")
    source = Canvas.objects.filter(pk=source_pk or 0, agent_id=canvas.agent_id).first()
    moment = payload.get("moment")
    branch, _ = CanvasBranch.objects.update_or_create(
        canvas=canvas,
        defaults={
            "agent_id": canvas.agent_id,
            "source": source,
            "source_file": payload["source_file"],
            "source_revision": payload.get("source_revision"),
            "source_hash": payload.get("source_hash", ""),
            "origin": payload["origin"],
            "moment": parse_datetime(moment) if moment else None,
            "session_id": payload.get("session_id") or "",
            "replay_row": payload.get("replay_row"),
            "id_map": payload.get("id_map") or {},
            "rows": payload.get("rows") or {},
            "created_by": revision.author,
        },
    )
    return branch


def _entry(branch: CanvasBranch) -> BranchEntry:
    return {
        "file": branch.canvas.filename,
        "source_file": branch.source_file,
        "source_revision": branch.source_revision,
        "source_present": branch.source_id is not None,
        "origin": branch.origin,
        "moment": branch.moment,
        "session": branch.session_id or None,
        "replay_row": branch.replay_row,
        "rows_copied": sum(len(rows) for rows in branch.rows.values()),
        "by": branch.created_by,
        "at": branch.created_at,
        "children": [],
    }


def branch_tree(agent: Agent) -> list[BranchRoot]:
    """The agent's branches as trees: each root a canvas that is no branch, its branches below
    (a branch of a branch below that one), oldest first."""
    branches = list(
        CanvasBranch.objects.filter(agent=agent)
        .select_related("canvas")
        .defer("rows", "id_map", "canvas__text")
        .order_by("created_at", "pk")
    )
    if not branches:
        return []
    entries = {b.canvas.filename: _entry(b) for b in branches}
    roots: dict[str, BranchRoot] = {}
    for branch in branches:
        entry = entries[branch.canvas.filename]
        parent = entries.get(branch.source_file)
        if parent is not None and parent is not entry:
            parent["children"].append(entry)
            continue
        root = roots.setdefault(
            branch.source_file,
            {"file": branch.source_file, "present": branch.source_id is not None, "children": []},
        )
        root["children"].append(entry)
    return list(roots.values())


def branch_of(canvas: Canvas) -> CanvasBranch | None:
    return CanvasBranch.objects.filter(canvas=canvas).first()


def merged_into(canvas: Canvas, upto: int | None = None) -> dict[str, str]:
    """Node id → the node a merge on this canvas folded it into (by revision `upto`).

    Copied rows keep the source's node ids in the agent's files, so a merge on the branch does
    not re-point them there; their place on the branch follows its merges instead. A merge
    whose latest undo/redo (by `upto`) is an undo does not count.
    """
    revisions = canvas.revisions.order_by("number")
    if upto is not None:
        revisions = revisions.filter(number__lte=upto)
    found = list(revisions.values_list("number", "op", "params", "remaps"))
    last_event = {
        (params or {}).get("target"): op for _n, op, params, _r in found if op in ("undo", "redo")
    }
    moved: dict[str, str] = {}
    for number, op, _params, remaps in found:
        if op != "undo" and last_event.get(number) != "undo":
            moved.update((remaps or {}).get("node_map") or {})
    return moved


def _follow(moved: dict[str, str], node: str) -> str:
    seen = {node}
    while node in moved and moved[node] not in seen:
        node = moved[node]
        seen.add(node)
    return node


def copied_keys(canvas: Canvas, upto: int | None = None) -> dict[str, list[list[Any]]]:
    """Branch node id (merges followed) → the `[file, line, tool_call_id]` of its copied rows."""
    rows = CanvasBranch.objects.filter(canvas=canvas).values_list("rows", flat=True).first()
    if not rows:
        return {}
    moved = merged_into(canvas, upto)
    out: dict[str, list[list[Any]]] = {}
    for node, keys in rows.items():
        out.setdefault(_follow(moved, node), []).extend(keys)
    return out


def copied_counts(canvas: Canvas) -> dict[str, int]:
    """Branch node id → rows memviz copied to it (empty for a canvas that is no branch)."""
    return {node: len(keys) for node, keys in copied_keys(canvas).items()}


def resolve(agent_id: int, keys: list[list[Any]]) -> list[Row]:
    """Copied rows found by session file and tool call id (a line number moves when the agent
    rewrites a file; it only tells duplicates apart)."""
    if not keys:
        return []
    query = Q()
    for relpath, _line, tool_call_id in keys:
        query |= Q(session__relpath=relpath, tool_call_id=tool_call_id)
    found = list(Row.objects.filter(query, agent_id=agent_id).select_related("session"))
    by_key: dict[tuple[str, str], list[Row]] = {}
    for row in found:
        by_key.setdefault((row.session.relpath, row.tool_call_id), []).append(row)
    out: list[Row] = []
    for relpath, line, tool_call_id in keys:
        candidates = by_key.get((relpath, tool_call_id)) or []
        exact = [r for r in candidates if r.line_no == line]
        if exact or candidates:
            pick = (exact or candidates)[0]
            if pick not in out:
                out.append(pick)
    return out


def copied_rows(canvas: Canvas, node_id: str) -> list[Row]:
    """The rows copied to one node of a branch (with those of nodes merged into it)."""
    return resolve(canvas.agent_id, copied_keys(canvas).get(node_id) or [])
