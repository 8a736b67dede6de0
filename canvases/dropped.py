"""Human edits an agent rewrite dropped, field by field, the newest human value winning.

The agent's map-builder has no merge logic (spec §4.8.8): a reply computed on the text it had
before a human edit overwrites the file or splices stale line blocks into it. Each human edit
owns the fields it changed (the goal, the progress, each node's label/status/summary/note and
presence, each edge), with the value the person wrote. A field is *dropped* when that value is
gone from the canvas and no later human edit wrote the same field again (the later one
supersedes it). Notes and node presence (merge, prune) are never changed by the agent on
purpose, so losing them is always a stale write; any other field counts only when an agent
rewrite inside the map-builder window after the edit changed it — a later change is the
agent's own progress.
"""

from __future__ import annotations

from datetime import timedelta
from functools import lru_cache
from typing import Any

from django.utils.translation import gettext_lazy as _

from canvases.edit_ops import EDIT_OPS
from canvases.indexing import parsed
from canvases.liveness import AGENT_AUTHOR
from canvases.messages import Said
from canvases.models import Revision
from canvases.page_types import DroppedEdit, LostField
from canvases.refused import EditRefused
from sessions.models import Canvas

# The map-builder holds a copy of the canvas for up to its backend timeout (120 s, spec §7.3).
MAP_BUILDER_WINDOW = timedelta(seconds=150)
Key = tuple[str, ...]
# Fields the agent never changes on purpose: their loss is always a stale write.
ALWAYS_OURS = ("note", "present")
# Partial re-apply: the op parameter that writes each field.
PARAMS = {"goal": "task_goal", "progress": "progress", "label": "title", "summary": "summary"}
NAMES = {"goal": _("task goal"), "progress": _("progress"), "label": _("title"),
         "status": _("status"), "summary": _("summary"), "note": _("note")}


@lru_cache(maxsize=512)  # the live box re-reads the same revision texts every few seconds
def fields(text: str) -> dict[Key, object]:
    """Every field a human edit can write, keyed by what it is; absent nodes/edges are False.
    Shared between callers: never modified."""
    doc = parsed(text)
    out: dict[Key, object] = {("goal",): doc.meta.task_goal, ("progress",): doc.meta.progress}
    for node_id, node in doc.nodes.items():
        f = node.fields
        out[("node", node_id, "present")] = True
        out[("node", node_id, "label")] = f.title
        out[("node", node_id, "status")] = f.status
        out[("node", node_id, "summary")] = f.summary
        out[("node", node_id, "note")] = f.extra.get("note")
    for edge in doc.edges:
        out[("edge", edge.source, edge.target)] = True
    return out


def _get(values: dict[Key, object], key: Key) -> object:
    if key[0] == "edge" or key[-1] == "present":
        return values.get(key, False)
    return values.get(key)


def owned(revision: Revision) -> dict[Key, object]:
    """The fields this revision changed, with the values it wrote."""
    before = fields(revision.before_text) if revision.before_text else {}
    after = fields(revision.after_text)
    return {k: _get(after, k) for k in set(before) | set(after) if _get(before, k) != _get(after, k)}


def describe(key: Key) -> str:
    if key[0] == "edge":
        return _("edge %(source)s → %(target)s") % {"source": key[1], "target": key[2]}
    if key[0] == "node" and key[2] == "present":
        return _("node %(node)s") % {"node": key[1]}
    if key[0] == "node":
        return _("%(field)s of %(node)s") % {"field": NAMES[key[2]], "node": key[1]}
    return str(NAMES[key[0]])


def _show(key: Key, value: object) -> str:
    if key[0] == "edge":
        return str(_("present") if value else _("absent"))
    if key[-1] == "present":
        return str(_("on the canvas") if value else _("removed"))
    return str(_("(none)")) if value in (None, "") else f"“{value}”"


def dropped_edits(canvas: Canvas, *, limit: int = 30) -> list[DroppedEdit]:
    """Per human edit whose fields a rewrite dropped: what was written and what is there now."""
    agents = list(
        canvas.revisions.filter(author=AGENT_AUTHOR)
        .exclude(op="imported")
        .order_by("number")
        .values_list("number", "created_at", "after_text")
    )
    if not agents:
        return []
    now = fields(canvas.text)
    superseded: set[Key] = set()
    out: list[DroppedEdit] = []
    humans = (
        canvas.revisions.exclude(author=AGENT_AUTHOR)
        .exclude(op="resume")
        .filter(number__lt=agents[-1][0])
        .order_by("-number")[: limit * 4]
    )
    for revision in humans:
        mine = owned(revision)
        fresh = {k: v for k, v in mine.items() if k not in superseded}
        superseded |= set(mine)
        if revision.undone or revision.op not in EDIT_OPS:
            continue
        window = [
            fields(text)
            for number, at, text in agents
            if number > revision.number and at - revision.created_at <= MAP_BUILDER_WINDOW
        ]
        lost: list[tuple[Key, LostField]] = []
        for key, value in sorted(fresh.items(), key=lambda kv: describe(kv[0])):
            if _get(now, key) == value:
                continue
            if key[-1] not in ALWAYS_OURS and not any(_get(w, key) != value for w in window):
                continue  # changed later than any stale reply could: the agent's own progress
            entry: LostField = {"field": describe(key), "was": _show(key, value), "now": _show(key, _get(now, key))}
            lost.append((key, entry))
        gone = {k[1] for k, _ in lost if k[-1] == "present" and not fresh[k]}
        lost = [(k, d) for k, d in lost if k[-1] == "present" or not gone & set(k[1:3])]
        if lost:
            shown = [d for _, d in lost]
            what = "; ".join(f"{d['field']}: {d['was']} → {d['now']}" for d in shown)
            out.append({"revision": revision.number, "op": revision.op, "lost": shown, "what": what})
        if len(out) >= limit:
            break
    return out


def reapply_params(canvas: Canvas, revision: Revision) -> dict[str, Any]:
    """The parameters that re-apply only what of `revision` is lost and still its own.

    A field a later human edit wrote again belongs to that edit: re-applying the older one
    would write the older value over the newer (refused). Goal/progress and title/summary are
    re-applied field by field; the other ops write all they own, so they are refused when any
    of it was superseded.
    """
    mine = owned(revision)
    newer: dict[Key, int] = {}
    later = (
        canvas.revisions.exclude(author=AGENT_AUTHOR)
        .exclude(op="resume")
        .filter(number__gt=revision.number)
        .order_by("number")
    )
    for other in later:
        for key in owned(other):
            if key in mine:
                newer.setdefault(key, other.number)
    params = dict(revision.params)
    if revision.op in ("set_meta", "edit"):
        now = fields(canvas.text)
        keep = {PARAMS[k[-1]] for k, v in mine.items() if k not in newer and _get(now, k) != v}
        params = {k: v for k, v in params.items() if k in keep or k == "node"}
        if keep:
            return params
    elif not newer:
        return params
    taken = ", ".join(f"{describe(k)} (r{n})" for k, n in sorted(newer.items(), key=lambda kv: kv[1]))
    if not newer:
        raise EditRefused(Said("nothing_lost", number=revision.number))
    raise EditRefused(Said("older_over_newer", number=revision.number, taken=taken))
