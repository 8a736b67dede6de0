"""Page contexts of a canvas: the diagram, one node's rows, the editor state, the resume preview.

Reads only: nothing here writes to the database or to disk. When the canvas file changed on disk
since it was indexed, the page says so (`disk`); keeping the index in step is the watcher's job
(and the explicit re-sync service's).
"""

from __future__ import annotations

import os
from datetime import UTC
from pathlib import Path

from django.conf import settings
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse

from agentfs.layout import canvas_file
from agentfs.paths import UnsafePath
from agentfs.row_fields import node_aliases
from agentfs.state_edit import CANVAS_BUDGET_CHARS
from canvases import budget, drawing, history, landing, lineage, liveness, page_extras, reverts
from canvases.canvas_scene import OVERVIEW_NODES
from canvases.indexing import parsed
from canvases.mermaid import Canvas as ParsedCanvas
from canvases.mermaid import agent_view, render_body
from canvases.mermaid.tokens import token_count
from canvases.messages import problem_item, reason_text
from canvases.models import Revision
from canvases.page_types import (
    AgentReads,
    CanvasPage,
    EditorState,
    LastEdit,
    LivePanel,
    ResumeState,
)
from canvases.panel_types import NodePanel, ResumePreview, TooLarge
from memviz.fields import nul_free
from sessions.models import Agent, Canvas, Row
from sessions.selectors import rows_json

PREVIEW_SHARES = 10


def canvas_get(agent: Agent, filename: str) -> Canvas:
    """The indexed canvas (404 for a name that is unsafe or not indexed)."""
    try:
        canvas_file(Path(agent.path), filename)
    except UnsafePath as exc:
        raise Http404(str(exc)) from exc
    canvas = get_object_or_404(Canvas, agent=agent, filename=filename)
    canvas.agent = agent
    return canvas


def canvas_too_large(agent: Agent, canvas: Canvas) -> TooLarge | None:
    """The summary shown instead of a canvas over MEMVIZ_CANVAS_MAX_BYTES, else None.

    Only what the index already counted (no parse): its pages would send the whole text, its
    scene and every node to anyone who may view it.
    """
    limit = settings.MEMVIZ_CANVAS_MAX_BYTES
    if canvas.size <= limit:
        return None
    return {
        "agent": agent.slug,
        "file": canvas.filename,
        "too_large": True,
        "size": canvas.size,
        "limit": limit,
        "nodes": canvas.nodes.count(),
        "status_counts": canvas.status_counts,
        "raw": reverse("canvas-raw", args=[agent.slug, canvas.filename]),
    }


def disk_state(canvas: Canvas) -> dict[str, bool]:
    """Whether the file on disk still is what the index holds (size and mtime; one stat)."""
    try:
        st = os.stat(canvas.path)
    except (OSError, UnsafePath):
        return {"missing": True, "changed": True}
    changed = (st.st_size, st.st_mtime_ns) != (canvas.size, canvas.mtime_ns)
    return {"missing": False, "changed": changed}


def row_counts(agent: Agent, doc: ParsedCanvas) -> dict[str, int]:
    alias_to_node = {alias: nid for nid in doc.nodes for alias in node_aliases(nid)}
    counts = (
        Row.objects.filter(agent=agent, node_id__in=list(alias_to_node))
        .values("node_id")
        .annotate(n=Count("id"))
    )
    out: dict[str, int] = {}
    for item in counts:
        node = alias_to_node[item["node_id"] or ""]
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


def canvas_detail(
    agent: Agent,
    canvas: Canvas,
    collapsed_param: str | None,
    *,
    with_render_body: bool = False,
    with_badges: bool = False,
) -> CanvasPage:
    """A canvas as its page, its htmx answers and its JSON twin show it: the page draws
    ``scene``; ``editor`` is what the editing UI needs. ``render_body`` (the render-ready
    mermaid text, 40 ms on 1000 nodes) is for the JSON twin and export."""
    doc = parsed(canvas.text)
    collapsed = parse_collapsed(collapsed_param, doc)
    counts = row_counts(agent, doc)
    for node, copied in lineage.copied_counts(canvas).items():  # a branch's rows of its moment
        counts[node] = counts.get(node, 0) + copied
    scene = drawing.scene(canvas.text)
    detail: CanvasPage = {
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
            "values": nul_free(doc.meta.values),  # and `1e400` as text: the JSON twin stays JSON
        },
        "agent_reads": _agent_reads(canvas.text),
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
        "problems": [problem_item(p) for p in canvas.problems],
        "has_errors": canvas.has_errors,
        "escaped_oneliner": doc.is_escaped_oneliner,
        "raw": canvas.text,
        "scene": scene,
        "author_coloured": drawing.author_coloured(scene),
        "editor": editor_state(agent, canvas),
    }
    if canvas.has_errors:  # the broken-canvas view: each line with the problems found on it
        detail["marked_lines"] = drawing.marked_lines(canvas.text, canvas.problems)
    if with_badges:
        detail["badges"] = page_extras.canvas_badges(agent, canvas)
    if with_render_body:
        detail["render_body"] = render_body(canvas.text, collapse=collapsed, doc=doc)
    return detail


def node_detail(agent: Agent, canvas: Canvas, node_id: str) -> NodePanel:
    doc = parsed(canvas.text)
    node = doc.nodes.get(node_id)
    if node is None:
        raise Http404(f"no node {node_id!r} in {canvas.filename}")
    rows = list(
        Row.objects.filter(agent=agent, node_id__in=node_aliases(node_id))
        .select_related("session")
        .order_by("timestamp", "session__session_id", "line_no")
    )
    copied = [r for r in lineage.copied_rows(canvas, node_id) if r not in rows]
    if copied:  # a branch: the rows its source node had then, copied by memviz
        rows = sorted([*rows, *copied], key=lambda r: (r.timestamp, r.session.session_id, r.line_no))
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


def _agent_reads(text: str) -> AgentReads:
    """What the agent's own reader makes of the metadata (spec §4.8.1): its goal, or why none."""
    meta = agent_view.read_meta(text)
    return {
        "task_goal": meta.task_goal,
        "problem": reason_text(meta.problem),
        "on_line_one": meta.on_line_one,
    }


def live_panel(canvas: Canvas) -> LivePanel:
    """The canvas page's live box, polled: is the agent live, and which human edits its
    rewrites dropped."""
    return {
        "agent": canvas.agent.slug,
        "file": canvas.filename,
        "content_hash": canvas.content_hash,
        "editor": editor_state(canvas.agent, canvas),
    }


def editor_state(agent: Agent, canvas: Canvas) -> EditorState:
    """What the editing UI needs beyond the canvas itself: live badge, undo/redo, dropped edits."""
    undo = history.undo_target(canvas)
    redo = history.redo_target(canvas)
    return {
        "live": liveness.agent_live(agent).as_json(),
        "undo": {"revision": undo.number, "op": undo.op} if undo else None,
        "redo": {"revision": redo.number, "op": redo.op} if redo else None,
        "dropped": history.dropped_edits(canvas),
        "reverted": reverts.reverted(agent, canvas_pk=canvas.pk),
        "landed": landing.landed(canvas),
        "revisions": canvas.revisions.count(),
        "last_edit": _last_edit(canvas),
        "disk": disk_state(canvas),
        "resume": resume_state(agent),
    }


def _last_edit(canvas: Canvas) -> LastEdit | None:
    """memviz's newest standing edit: the canvas's `updatedTime` follows the agent's own rule
    (the newest node Timestamp), so an edit that adds no newer node leaves it, and this says
    when a person last changed the canvas."""
    last = canvas.revisions.exclude(author="agent").filter(undone=False).order_by("-number").first()
    if last is None:
        return None
    return {"revision": last.number, "op": last.op, "author": last.author,
            "at": last.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}


def resume_preview(canvas: Canvas) -> ResumePreview:
    """The block the agent injects for this canvas, built by the agent's own rules (§4.8.1)."""
    agent = canvas.agent
    preview = agent_view.block_preview(canvas.filename, canvas.text)
    meta = agent_view.read_meta(canvas.text)
    shares = budget.node_shares(canvas.filename, canvas.text, preview)
    return {
        "agent": agent.slug,
        "file": canvas.filename,
        "content_hash": canvas.content_hash,
        "block": preview.text if preview else "",
        "block_chars": preview.chars if preview else 0,
        "block_js_length": preview.js_length if preview else 0,
        "block_tokens": preview.tokens if preview else 0,
        "injected": preview is not None,
        "task_goal": preview.task_goal if preview else None,
        "node_index": bool(preview and preview.node_index),
        "meta_problem": reason_text(meta.problem),
        "meta_on_line_one": meta.on_line_one,
        "empty_shell": agent_view.is_empty_shell(canvas.text),
        "canvas_chars": len(canvas.text),
        "canvas_tokens": token_count(canvas.text),
        "budget_chars": CANVAS_BUDGET_CHARS,
        "over_budget": len(canvas.text) > CANVAS_BUDGET_CHARS,
        "budget_percent": round(100 * len(canvas.text) / CANVAS_BUDGET_CHARS),
        "node_shares": [  # the largest; the budget panel lists more and suggests cuts
            {"id": n.id, "title": n.title, "chars": n.chars, "percent": n.percent}
            for n in shares.nodes[:PREVIEW_SHARES]
        ],
        "active": liveness.state_active(agent) == canvas.filename,
        "live": liveness.agent_live(agent).as_json(),
        "resume": resume_state(agent),
    }


def resume_state(agent: Agent) -> ResumeState | None:
    """The last resume a person asked for, and whether the agent still has that canvas active.

    The agent honours a resume only after its next task judgment (which may switch canvas
    anyway), and a failing judgment backend clears `activeMmdFile` (spec §4.8.7): this is how the
    pages tell a person that the agent moved on after their request.
    """
    revision = (
        Revision.objects.filter(canvas__agent=agent, op="resume")
        .select_related("canvas")
        .defer("before_text", "after_text")
        .order_by("-created_at")
        .first()
    )
    if revision is None:
        return None
    now = agent.active_mmd_file or ""
    return {
        "file": revision.canvas.filename,
        "by": revision.author,
        "at": revision.created_at,
        "held_at_write": bool(revision.params.get("held")),
        "active_now": now,
        "changed_by_agent": now != revision.canvas.filename,
    }
