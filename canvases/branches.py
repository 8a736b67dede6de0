"""Branch here: a new canvas file holding a canvas's text of some moment, with that moment's rows.

The moment is a revision (the history page, the compare view), the text now, or a replay
instant (`debugging.replay_branch.moment_of_replay`). The new file takes the next free `NNN-` number (`mermaid.branch.next_free_number`),
its node ids that number (`mermaid.branch.branch_text`), a strict line 1; it is written through
the one journaled write path (`write_path.change_write`, `creates`), never over a file, and its
lineage and copied row mapping are recorded with its first revision (`canvases.lineage`). No
row of the agent's offload files and no byte of the source canvas changes. Resuming on the
branch is the existing resume (`services.canvas_resume`), offered with its preview.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db import transaction

from agentfs.layout import CANVAS_DIR
from agentfs.row_fields import node_aliases, row_spelling
from agentfs.state import state_value
from canvases import lineage, liveness
from canvases.branch_rows import RowNow, Step, came_later, rows_then, step_from_remaps
from canvases.edit_ops import check_parses
from canvases.indexing import canvas_number_and_label, parsed
from canvases.mermaid.branch import (
    branch_file_name,
    branch_text,
    default_label,
    file_number,
    next_free_number,
)
from canvases.messages import Said, reasons, said_notes
from canvases.models import Revision
from canvases.page_types import BranchMade, BranchSource
from canvases.refused import EditConflict, EditRefused
from canvases.services import _author, _run  # the one lock-and-recover wrapper of services
from canvases.write_path import Change, change_write
from memviz.broadcast import AgentDelta, broadcast_delta
from sessions import counters
from sessions.instants import iso, parse_instant
from sessions.models import Agent, Canvas, NodeRowCount, Row

REVISION, CURRENT, REPLAY = "revision", "current", "replay"


@dataclass
class Moment:
    """What a branch copies: a canvas text, the revisions after it, the rows' time limit."""

    origin: str
    text: str
    revision: int | None
    until: datetime | None = None  # rows at or after it (after it, `inclusive`) came later
    inclusive: bool = False
    session_id: str = ""
    replay_row: int | None = None


@dataclass
class BranchOutcome:
    file: str
    revision: Revision
    source: BranchSource
    id_map: dict[str, str]
    rows_copied: int
    notes: list[str] = field(default_factory=list)  # in the reader's language

    def as_json(self) -> BranchMade:
        return {
            "file": self.file,
            "revision": self.revision.number,
            "source": self.source,
            "id_map": self.id_map,
            "rows_copied": self.rows_copied,
            "notes": self.notes,
        }


# ---------------------------------------------------------------------------------------------
# the moment


def moment_of_revision(canvas: Canvas, number: int) -> Moment:
    """Revision `number`'s text, and the rows mapped while it was the canvas's text."""
    revision = canvas.revisions.filter(number=number).only("after_text", "number").first()
    if revision is None:
        raise EditRefused(Said("branch_no_revision", file=canvas.filename, number=number))
    later = (
        canvas.revisions.filter(number__gt=number).order_by("number").values_list("created_at")
    ).first()
    return Moment(REVISION, revision.after_text, number, until=later[0] if later else None)


def moment_current(canvas: Canvas) -> Moment:
    latest = canvas.revisions.order_by("-number").values_list("number", flat=True).first()
    return Moment(CURRENT, canvas.text, latest)


def _steps_after(canvas: Canvas, number: int | None) -> list[Step]:
    """The row changes of every revision after `number`, inverted, newest first."""
    if number is None:
        return []
    later = canvas.revisions.filter(number__gt=number).order_by("-number")
    steps = []
    for op, params, remaps in later.values_list("op", "params", "remaps"):
        if op == "undo":
            target = canvas.revisions.filter(number=(params or {}).get("target") or 0).first()
            if target is not None and (target.remaps or {}).get("rows"):
                steps.append(step_from_remaps(target.remaps, undo=True))
        elif (remaps or {}).get("rows"):
            steps.append(step_from_remaps(remaps, undo=False))
    return steps


def rows_of_moment(canvas: Canvas, moment: Moment) -> dict[str, list[RowNow]]:
    """Source node id → the rows mapped to it at `moment` (read from the index, not the files)."""
    doc = parsed(moment.text)
    alias_to_node = {alias: nid for nid in doc.nodes for alias in node_aliases(nid)}
    steps = _steps_after(canvas, moment.revision if moment.origin != CURRENT else None)
    wanted = set(alias_to_node).union(*(step.node_ids for step in steps))
    found = (
        Row.objects.filter(agent_id=canvas.agent_id, node_id__in=wanted)
        .order_by("session__relpath", "line_no")
        .values_list("session__relpath", "line_no", "tool_call_id", "node_id", "timestamp")
    )
    rows = [RowNow(f, n, c, node, parse_instant(t)) for f, n, c, node, t in found]
    out = rows_then(rows, steps, alias_to_node, until=moment.until, inclusive=moment.inclusive)
    # a branch of a branch: the rows memviz copied to the source's nodes come along
    inherited = lineage.copied_keys(canvas, moment.revision if moment.origin != CURRENT else None)
    for node, keys in inherited.items():
        target = alias_to_node.get(node)
        if target is None:
            continue
        for row in lineage.resolve(canvas.agent_id, keys):
            found_row = RowNow(
                row.session.relpath,
                row.line_no,
                row.tool_call_id,
                row.node_id,
                parse_instant(row.timestamp),
            )
            if not came_later(found_row, moment.until, inclusive=moment.inclusive):
                out.setdefault(target, []).append(found_row)
    return out


# ---------------------------------------------------------------------------------------------
# the new file


def branch_number(agent: Agent) -> int:
    """The next free number: above the files on disk, the agent's counter, the index's canvases
    and every `NNN-N<k>` prefix rows still carry (a deleted canvas's rows keep theirs)."""
    mmds = Path(agent.path) / CANVAS_DIR
    try:
        names = os.listdir(mmds)
    except FileNotFoundError:
        names = []
    counter = state_value(liveness.state_file(agent), "mmdCounter")  # or the Go port's spelling
    used = [n for n in Canvas.objects.filter(agent=agent).values_list("number", flat=True) if n]
    for node_id in NodeRowCount.objects.filter(agent=agent).values_list("node_id", flat=True):
        number = file_number(row_spelling(node_id))
        if number is not None and "-N" in node_id:
            used.append(number)
    return next_free_number(
        names, counter if isinstance(counter, int) and not isinstance(counter, bool) else None, used
    )


def canvas_branch(
    *,
    canvas: Canvas,
    moment: Moment | None = None,
    revision: int | None = None,
    label: str = "",
    user: Any,
    confirm_live: bool = False,
) -> BranchOutcome:
    """Write the branch of `canvas` at `moment` (or revision `revision`, or now)."""

    def work(fresh: Canvas) -> BranchOutcome:
        agent = fresh.agent
        live = liveness.agent_live(agent)
        if live.live and not confirm_live:
            raise EditConflict(Said("branch_while_live", reasons=reasons(live.reasons)))
        if moment is not None:
            then = moment
        elif revision is not None:
            then = moment_of_revision(fresh, revision)
        else:
            then = moment_current(fresh)
        number = branch_number(agent)
        name = branch_file_name(number, label or default_label(fresh.filename, then.revision))
        try:
            branch = branch_text(then.text, source_file=fresh.filename, number=number)
        except ValueError as exc:
            raise EditRefused(str(exc)) from None
        check_parses(then.text, branch.text)
        rows = rows_of_moment(fresh, then)
        copied = {
            branch.id_map.get(node, node): [r.key() for r in found] for node, found in rows.items()
        }
        params: BranchSource = {
            "source": fresh.filename,
            "revision": then.revision,
            "origin": then.origin,
        }
        if then.session_id:
            params["session"], params["row"] = then.session_id, then.replay_row
        lineage = {
            "source_pk": fresh.pk,
            "source_file": fresh.filename,
            "source_revision": then.revision,
            "source_hash": fresh.content_hash,
            "origin": then.origin,
            "moment": iso(then.until),
            "session_id": then.session_id,
            "replay_row": then.replay_row,
            "id_map": branch.id_map,
            "rows": copied,
        }
        number_, label_ = canvas_number_and_label(name)
        author, user_id = _author(user)
        written = change_write(
            Change(
                canvas=Canvas(agent=agent, filename=name, number=number_, label=label_),
                op="branch",
                params=dict(params),
                author=author,
                user_id=user_id,
                before_text="",
                after_text=branch.text,
                creates=True,
                lineage=lineage,
            )
        )
        counters.agent_totals_refresh(agent)
        agent.save(update_fields=["canvases_count", "canvas_bytes"])
        delta = AgentDelta(
            agent_pk=agent.pk,
            agent_slug=agent.slug,
            canvases_changed=[(written.revision.canvas_id, name, written.revision.number)],
        )
        transaction.on_commit(lambda: broadcast_delta(delta))
        return BranchOutcome(
            file=name,
            revision=written.revision,
            source=params,
            id_map=branch.id_map,
            rows_copied=sum(len(v) for v in copied.values()),
            notes=said_notes(branch.notes),
        )

    return _run(canvas, work)
