"""Reading a canvas's history: revisions, their diffs, undo/redo targets, dropped edits."""

from __future__ import annotations

import difflib
from datetime import timedelta
from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from canvases.edit_ops import EDIT_OPS, touched_nodes
from canvases.indexing import parsed
from canvases.liveness import AGENT_AUTHOR
from canvases.mermaid import Canvas as ParsedCanvas
from canvases.mermaid import render_body
from canvases.models import Canvas, Revision
from sessions.models import Agent

# Not steps of the undo stack: undo/redo themselves, and resume (which changes state.json).
NOT_UNDOABLE = ("undo", "redo", "resume")
REDO_SCAN = 200  # undo/redo pairs scanned back for a redo target
# The map-builder holds a copy of the canvas for up to its backend timeout (120 s, spec §7.3).
MAP_BUILDER_WINDOW = timedelta(seconds=150)
# Edits whose effect the agent never undoes on purpose: losing them is always a stale write.
ALWAYS_OURS = ("annotate", "merge", "prune")


def _human(canvas: Canvas) -> QuerySet[Revision]:
    # The texts are loaded only when used: listing revisions must not read every canvas copy.
    return canvas.revisions.exclude(author=AGENT_AUTHOR).defer("before_text", "after_text")


def base_text(canvas: Canvas, base_hash: str) -> str | None:
    """The text an edit was based on, if memviz has seen it (the index, or a revision)."""
    if canvas.content_hash == base_hash:
        return canvas.text
    revision = canvas.revisions.filter(after_hash=base_hash).order_by("-number").first()
    return revision.after_text if revision else None


def undo_target(canvas: Canvas) -> Revision | None:
    return (
        _human(canvas)
        .exclude(op__in=NOT_UNDOABLE)
        .filter(undone=False)
        .order_by("-number")
        .first()
    )


def redo_target(canvas: Canvas) -> Revision | None:
    # only the tail of the history can hold a redo target: it ends at the first other edit
    # "canvas" too: the related manager sets each row's canvas, which reloaded a deferred
    # canvas_id one query per revision (33 ms of every editor answer at 31 revisions)
    recent = (
        _human(canvas)
        .exclude(op="resume")
        .order_by("-number")
        .only("number", "op", "params", "canvas")
    )
    for revision in recent[:REDO_SCAN]:
        if revision.op == "redo":
            continue
        if revision.op != "undo":
            return None
        target = canvas.revisions.filter(number=revision.params.get("target"), undone=True).first()
        if target is not None:
            return target
    return None


def dropped_edits(canvas: Canvas, *, limit: int = 30) -> list[dict[str, Any]]:
    """Human edits that an agent rewrite lost or mangled (offered for re-apply).

    The agent's map-builder has no merge logic (spec §4.8.8): a reply computed on the text it
    had before a human edit either overwrites the file or splices stale line blocks into it.
    An edit the agent never makes itself (a note, a merge, a prune) that the canvas no longer
    shows was lost whenever that happened; any other edit (status, title, edge, metadata) is
    flagged only when the agent rewrote the canvas within its reply window after the edit —
    later changes to those fields are the agent's own progress.
    """
    agent_revisions = list(
        canvas.revisions.filter(author=AGENT_AUTHOR)
        .exclude(op="imported")
        .order_by("number")
        .values_list("number", "created_at")
    )
    if not agent_revisions:
        return []
    doc = parsed(canvas.text)
    out: list[dict[str, Any]] = []
    superseded: set[str] = set()  # nodes a later human edit touched again
    candidates = (
        _human(canvas)
        .filter(number__lt=agent_revisions[-1][0], op__in=EDIT_OPS, undone=False)
        .order_by("-number")[:limit]
    )
    for revision in candidates:
        touched = {n for n in touched_nodes(revision.op, revision.params) if n}
        fresh = not (touched & superseded)
        superseded |= touched
        if not fresh:
            continue
        follows = next((at for number, at in agent_revisions if number > revision.number), None)
        in_window = follows is not None and follows - revision.created_at <= MAP_BUILDER_WINDOW
        if revision.op not in ALWAYS_OURS and not in_window:
            continue
        what = _lost(revision, doc)
        if what:
            out.append(
                {
                    "revision": revision.number,
                    "op": revision.op,
                    "node": ",".join(sorted(touched)),
                    "what": what,
                }
            )
    return out


def _lost(revision: Revision, doc: ParsedCanvas) -> str | None:
    """What of the revision's effect the canvas `doc` no longer shows (None: all of it holds)."""
    params = revision.params
    op = revision.op
    if op == "merge":
        back = [i for i in (revision.remaps or {}).get("node_map") or {} if i in doc.nodes]
        return f"merge of {', '.join(back)} (they are back on the canvas)" if back else None
    if op == "prune":
        node = params.get("node")
        return f"prune of {node} (it is back on the canvas)" if node in doc.nodes else None
    if op == "set_meta":
        wrote = parsed(revision.after_text).meta
        same = (wrote.task_goal, wrote.progress) == (doc.meta.task_goal, doc.meta.progress)
        return None if same else "task goal / progress"
    if op in ("add_edge", "remove_edge"):
        pair = (params.get("source"), params.get("target"))
        present = any((e.source, e.target) == pair for e in doc.edges)
        if present == (op == "add_edge"):
            return None
        return f"{'added' if op == 'add_edge' else 'removed'} edge {pair[0]} → {pair[1]}"
    node_id = params.get("node")
    written = parsed(revision.after_text).nodes.get(node_id)
    current = doc.nodes.get(node_id)
    if written is None:
        return None
    if current is None:
        return f"{op} of {node_id} (the node is gone)"
    if op == "annotate":
        note = written.fields.extra.get("note")
        return None if current.fields.extra.get("note") == note else f"note on {node_id}: {note}"
    if op == "set_status":
        status = written.fields.status
        return None if current.fields.status == status else f"status {status} of {node_id}"
    if op == "edit":
        mine = (written.fields.title, written.fields.summary)
        return None if (current.fields.title, current.fields.summary) == mine else f"label of {node_id}"
    return None


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
    return {
        "agent": agent.slug,
        "file": canvas.filename,
        "content_hash": canvas.content_hash,
        "revision": _revision_summary(revision),
        "diff": diff,
        "changes": node_changes(revision.before_text, revision.after_text),
        "remaps": revision.remaps,
        "after_text": revision.after_text,
        "before_text": revision.before_text or "",
        "before_render": render_body(revision.before_text) if revision.before_text else "",
        "after_render": render_body(revision.after_text),
        "is_current": revision.after_hash == canvas.content_hash,
    }
