"""Reading a canvas's history: revisions, their diffs, undo/redo targets, dropped edits."""

from __future__ import annotations

import difflib

from django.db.models import QuerySet
from django.http import Http404
from django.urls import reverse
from django.utils.translation import gettext as _

from canvases import drawing
from canvases.dropped import dropped_edits, reapply_params  # noqa: F401 - history.* callers
from canvases.indexing import parsed
from canvases.liveness import AGENT_AUTHOR
from canvases.models import Revision
from canvases.page_types import HistoryPage, NodeChanges, RevisionItem, RevisionPage
from sessions.models import Agent, Canvas

# Not steps of the undo stack: undo/redo themselves, resume (which changes state.json), and
# the branch that created a canvas (its "before" is no file at all).
NOT_UNDOABLE = ("undo", "redo", "resume", "branch")
REDO_SCAN = 200  # undo/redo pairs scanned back for a redo target


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


def _revision_summary(revision: Revision) -> RevisionItem:
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


def revision_list(agent: Agent, canvas: Canvas) -> HistoryPage:
    return {
        "agent": agent.slug,
        "file": canvas.filename,
        "content_hash": canvas.content_hash,
        "revisions": [_revision_summary(r) for r in canvas.revisions.order_by("-number")[:500]],
        "branch_url": reverse("agent-branch", args=[agent.slug]),
    }


def node_changes(before: str, after: str) -> NodeChanges:
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


def revision_detail(agent: Agent, canvas: Canvas, number: int) -> RevisionPage:
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
    before = revision.before_text or ""
    pictures = [
        drawing.picture("before", _("before"), before, marks="before", title=f"before r{number}"),
        drawing.picture("after", _("after"), revision.after_text, marks="after", title=f"after r{number}"),
    ]
    return {
        "agent": agent.slug,
        "file": canvas.filename,
        "content_hash": canvas.content_hash,
        "revision": _revision_summary(revision),
        "diff": diff,
        "changes": node_changes(revision.before_text, revision.after_text),
        "remaps": revision.remaps,
        "pictures": pictures[1:] if not before else pictures,
        "is_current": revision.after_hash == canvas.content_hash,
    }
