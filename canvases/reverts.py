"""Rows a person dropped from the agent's context that the running agent re-marked (§4.8.5).

A "drop from context" marks rows `offloaded: "deleted"`; the agent reads that only when a session
loads, and a running gateway's compression sets `offloaded` to its own value (`true`) whenever it
differs, undoing the drop. The watcher calls `note` after each ingest of the agent (under its
write lock): a dropped row the index now holds as anything but "deleted" is recorded, with the
moment memviz first saw it, in its drop revision's `remaps["reverted"]`; the canvas and agent
pages list them (`reverted`) with "drop again".
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from canvases.liveness import AGENT_AUTHOR
from canvases.models import Revision
from canvases.page_types import RevertedDrop, RevertedRow
from sessions.models import Agent, Row

WHY = _(
    "the running gateway's context compression re-marked them offloaded: true (spec §4.8.5); "
    'it reads "deleted" only when a session is loaded again'
)
SCAN = 50  # newest drop revisions checked per ingest


def _drops(agent: Agent) -> list[Revision]:
    revisions = (
        Revision.objects.filter(canvas__agent=agent, undone=False)
        .exclude(author=AGENT_AUTHOR)
        .filter(op__in=("prune", "redo", "drop_again"))
        .select_related("canvas")
        .defer("before_text", "after_text")
        .order_by("-created_at")[:SCAN]
    )
    return [r for r in revisions if (r.remaps or {}).get("mark_deleted")]


def dropped_ids(revision: Revision) -> list[str]:
    """The rows this revision marked "deleted" (those of its pruned nodes it recorded)."""
    remaps = revision.remaps or {}
    nodes = set(remaps.get("mark_deleted") or [])
    ids = []
    for recorded in (remaps.get("rows") or {}).values():
        for tool_call_id, node_id, _offloaded in recorded.values():
            if node_id in nodes and tool_call_id not in ids:
                ids.append(tool_call_id)
    return ids


def note(agent: Agent) -> int:
    """Record the dropped rows the agent re-marked since the last call; returns how many are."""
    now = timezone.now().isoformat()
    total = 0
    for revision in _drops(agent):
        ids = dropped_ids(revision)
        current = dict(
            Row.objects.filter(agent=agent, tool_call_id__in=ids).values_list(
                "tool_call_id", "offloaded"
            )
        )
        back = {i for i, value in current.items() if value != "deleted"}
        seen = dict((revision.remaps or {}).get("reverted") or {})
        after = {i: seen.get(i, now) for i in sorted(back)}
        total += len(after)
        if after != seen:
            revision.remaps = {**revision.remaps, "reverted": after}
            revision.save(update_fields=["remaps"])
    return total


def reverted(agent: Agent, *, canvas_pk: int | None = None) -> list[RevertedDrop]:
    """Per drop with re-marked rows: who dropped what, which rows came back, when, and why."""
    out: list[RevertedDrop] = []
    for revision in _drops(agent):
        if canvas_pk is not None and revision.canvas_id != canvas_pk:
            continue
        back = (revision.remaps or {}).get("reverted") or {}
        if not back:
            continue
        rows = Row.objects.filter(agent=agent, tool_call_id__in=list(back)).values(
            "tool_call_id", "summary", "offloaded"
        )
        out.append(
            {
                "revision": revision.number,
                "file": revision.canvas.filename,
                "by": revision.author,
                "dropped_at": revision.created_at,
                "seen_at": datetime.fromisoformat(min(back.values())),
                "nodes": list(revision.remaps.get("mark_deleted") or []),
                "rows": cast(list[RevertedRow], list(rows)),
                "why": str(WHY),
            }
        )
    return out
