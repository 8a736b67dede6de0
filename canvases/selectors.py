"""Page contexts for a canvas and for one node of it (rows across sessions, refs)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404

from canvases.indexing import canvas_index_file, parsed
from canvases.mermaid import Canvas as ParsedCanvas
from canvases.mermaid import render_body
from canvases.models import Canvas, Revision
from sessions.memory.paths import UnsafePath, confine
from sessions.models import Agent, Ref, Row
from sessions.selectors import rows_json

OVERVIEW_NODES = 40
STATUSES = ("done", "doing", "todo", "paused", "blocked")


def canvas_path(agent: Agent, filename: str) -> Path:
    return confine(Path(agent.path), f"mmds/{filename}")


def canvas_get(agent: Agent, filename: str) -> Canvas:
    """The canvas, re-indexed first if its file changed on disk since the last ingest."""
    try:
        path = canvas_path(agent, filename)
    except UnsafePath as exc:
        raise Http404(str(exc)) from exc
    if path.is_file():
        canvas_refresh_from_disk(agent, path)
    return get_object_or_404(Canvas, agent=agent, filename=filename)


def canvas_refresh_from_disk(agent: Agent, path: Path) -> None:
    """Re-index a canvas the agent rewrote; announce it to other open pages as the watcher would.

    Locked like an ingest of the agent, so a page view and the watcher never both record the
    same rewrite as a revision.
    """
    from memviz.broadcast import broadcast_delta
    from sessions.ingest import AgentDelta, canvas_version

    with transaction.atomic():
        Agent.objects.select_for_update().filter(pk=agent.pk).first()
        if not canvas_index_file(agent, path):
            return
        delta = AgentDelta(
            agent_pk=agent.pk,
            agent_slug=agent.slug,
            canvases_changed=[canvas_version(agent, path.name)],
        )
        transaction.on_commit(lambda: broadcast_delta(delta))


def node_aliases(node_id: str) -> list[str]:
    """Row ``node_id`` values that mean this node (the Go port draws ``n_001-N1`` for ``001-N1``)."""
    return [node_id, node_id[2:]] if node_id.startswith("n_") else [node_id]


def row_counts(agent: Agent, doc: ParsedCanvas) -> dict[str, int]:
    alias_to_node = {alias: nid for nid in doc.nodes for alias in node_aliases(nid)}
    counts = (
        Row.objects.filter(agent=agent, node_id__in=list(alias_to_node))
        .values("node_id")
        .annotate(n=Count("id"))
    )
    out: dict[str, int] = {}
    for item in counts:
        node = alias_to_node[item["node_id"]]
        out[node] = out.get(node, 0) + item["n"]
    return out


def default_collapsed(doc: ParsedCanvas) -> list[str]:
    """A large canvas opens as an overview: its top-level subgraphs collapsed."""
    if len(doc.nodes) <= OVERVIEW_NODES:
        return []
    return [s.id for s in doc.subgraphs if s.parent is None]


def parse_collapsed(raw: str | None, doc: ParsedCanvas) -> list[str]:
    if raw is None:
        return default_collapsed(doc)
    known = {s.id for s in doc.subgraphs}
    return [s for s in raw.split(",") if s in known]


def canvas_detail(agent: Agent, canvas: Canvas, collapsed_param: str | None) -> dict[str, Any]:
    doc = parsed(canvas.text)
    collapsed = parse_collapsed(collapsed_param, doc)
    counts = row_counts(agent, doc)
    return {
        "agent": agent.slug,
        "file": canvas.filename,
        "active": canvas.filename == agent.active_mmd_file,
        "content_hash": canvas.content_hash,
        "meta": {
            "form": doc.meta.form,
            "task_goal": doc.meta.task_goal,
            "progress": doc.meta.progress,
            "created": doc.meta.created,
            "updated": doc.meta.updated,
            "values": doc.meta.values,
        },
        "header": doc.header,
        "direction": doc.direction,
        "status_counts": canvas.status_counts,
        "nodes": [
            {
                "id": n.id,
                "label": n.label,
                "title": n.fields.title,
                "status": n.fields.status,
                "summary": n.fields.summary,
                "timestamp": n.fields.timestamp,
                "extra": n.fields.extra,
                "shape": n.shape,
                "subgraph": n.subgraph,
                "line": n.line,
                "rows": counts.get(n.id, 0),
            }
            for n in doc.nodes.values()
        ],
        "edges": [
            {"source": e.source, "target": e.target, "label": e.label, "kind": e.kind}
            for e in doc.edges
        ],
        "subgraphs": [
            {"id": s.id, "title": s.title, "parent": s.parent, "nodes": list(s.node_ids)}
            for s in doc.subgraphs
        ],
        "collapsed": collapsed,
        "problems": canvas.problems,
        "has_errors": canvas.has_errors,
        "escaped_oneliner": doc.is_escaped_oneliner,
        "render_body": render_body(canvas.text, collapse=collapsed, doc=doc),
        "raw": canvas.text,
    }


def node_detail(agent: Agent, canvas: Canvas, node_id: str) -> dict[str, Any]:
    doc = parsed(canvas.text)
    node = doc.nodes.get(node_id)
    if node is None:
        raise Http404(f"no node {node_id!r} in {canvas.filename}")
    rows = list(
        Row.objects.filter(agent=agent, node_id__in=node_aliases(node_id))
        .select_related("session")
        .order_by("timestamp", "session__session_id", "line_no")
    )
    return {
        "agent": agent.slug,
        "file": canvas.filename,
        "content_hash": canvas.content_hash,
        "node": {
            "id": node.id,
            "label": node.label,
            "title": node.fields.title,
            "phase": node.fields.phase,
            "action": node.fields.action,
            "status": node.fields.status,
            "summary": node.fields.summary,
            "timestamp": node.fields.timestamp,
            "extra": node.fields.extra,
            "shape": node.shape,
            "subgraph": node.subgraph,
            "line": node.line,
        },
        "rows": rows_json(agent, rows),
    }


# ---------------------------------------------------------------------------------------------
# curation: editor state, history, lint, resume


def editor_state(agent: Agent, canvas: Canvas) -> dict[str, Any]:
    """What the editing UI needs beyond the canvas itself: live badge, undo/redo, dropped edits."""
    from canvases import services

    undo = services.undo_target(canvas)
    redo = services.redo_target(canvas)
    return {
        "live": services.agent_live(agent).as_json(),
        "undo": {"revision": undo.number, "op": undo.op} if undo else None,
        "redo": {"revision": redo.number, "op": redo.op} if redo else None,
        "dropped": services.dropped_edits(canvas),
        "revisions": canvas.revisions.count(),
    }


def _revision_summary(revision: Revision) -> dict[str, Any]:
    return {
        "number": revision.number,
        "author": revision.author,
        "created_at": revision.created_at,
        "op": revision.op,
        "params": revision.params,
        "before_hash": revision.before_hash,
        "after_hash": revision.after_hash,
        "undone": revision.undone,
        "rows_changed": (revision.remaps or {}).get("rows_changed", 0),
        "node_map": (revision.remaps or {}).get("node_map", {}),
        "mark_deleted": (revision.remaps or {}).get("mark_deleted", []),
    }


def revision_list(agent: Agent, canvas: Canvas) -> dict[str, Any]:
    return {
        "agent": agent.slug,
        "file": canvas.filename,
        "content_hash": canvas.content_hash,
        "revisions": [_revision_summary(r) for r in canvas.revisions.order_by("-number")[:500]],
    }


def node_changes(before: str, after: str) -> dict[str, list[str]]:
    """Node ids added, removed and changed (label, shape or group) between two texts."""
    old, new = parsed(before) if before else None, parsed(after)
    old_nodes = old.nodes if old else {}
    added = [i for i in new.nodes if i not in old_nodes]
    removed = [i for i in old_nodes if i not in new.nodes]
    changed = [
        i
        for i, n in new.nodes.items()
        if i in old_nodes
        and (n.label, n.shape, n.subgraph)
        != (old_nodes[i].label, old_nodes[i].shape, old_nodes[i].subgraph)
    ]
    return {"added": added, "removed": removed, "changed": changed}


def revision_detail(agent: Agent, canvas: Canvas, number: int) -> dict[str, Any]:
    revision = canvas.revisions.filter(number=number).first()
    if revision is None:
        raise Http404(f"no revision {number} of {canvas.filename}")
    diff = "".join(
        difflib.unified_diff(
            revision.before_text.splitlines(keepends=True),
            revision.after_text.splitlines(keepends=True),
            f"before (r{number - 1})" if number > 1 else "before",
            f"after (r{number})",
            n=2,
        )
    )
    changes = node_changes(revision.before_text, revision.after_text)
    return {
        "agent": agent.slug,
        "file": canvas.filename,
        "content_hash": canvas.content_hash,
        "revision": _revision_summary(revision),
        "diff": diff,
        "changes": changes,
        "remaps": revision.remaps,
        "after_text": revision.after_text,
        "before_render": render_body(revision.before_text) if revision.before_text else "",
        "after_render": render_body(revision.after_text),
        "is_current": revision.after_hash == canvas.content_hash,
    }


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
    from sessions.memory.state_edit import CANVAS_BUDGET_CHARS
    from sessions.selectors import placed_node_ids, ref_locate

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
