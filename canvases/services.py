"""Curation services: edit, undo/redo, restore, re-apply, adopt rows, re-sync and resume.

Each one takes the agent's write lock first (`sessions.locks.agent_locked`), finishes any change
an earlier process left unfinished, re-reads the canvas on disk, and writes through
`canvases.write_path.change_write` — so edits, undos, resumes and the watcher's ingest of one
agent run one after the other, and a refused change writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from django.db import DatabaseError, transaction

from agentfs.atomic import PreconditionFailed
from agentfs.layout import STATE_FILE
from agentfs.paths import FileTooLarge, LinkRefused, UnsafePath, confine_file, read_regular
from agentfs.remap import rows_with_nodes
from agentfs.state import active_mmd_file
from agentfs.state_edit import state_name_active
from canvases import history, liveness, own_writes, reverts
from canvases.edit_ops import (
    EDIT_OPS,
    OPERATIONS,
    OPS,
    applies_cleanly,
    check_parses,
    engine_apply,
    op_params,
    read_input,
    visible_to_running_agent,
)
from canvases.indexing import canvas_index_file, parsed, revision_record
from canvases.live_rules import lines_for_live_agent
from canvases.mermaid import agent_view, content_hash
from canvases.messages import Said, reasons, said_notes
from canvases.models import Revision
from canvases.page_types import EditAnswer
from canvases.refused import EditConflict, EditRefused
from canvases.row_plans import RowPlan
from canvases.write_path import Change, change_write, intents_recover
from memviz.broadcast import AgentDelta, broadcast_delta
from sessions.locks import agent_locked
from sessions.models import Canvas
from sessions.reader_words import RefusedWords

T = TypeVar("T")


@dataclass
class EditOutcome:
    revision: Revision
    hash: str
    text: str
    reapplied: bool = False
    rows_changed: int = 0
    warnings: list[str] = field(default_factory=list)

    def as_json(self) -> EditAnswer:
        return {
            "hash": self.hash,
            "revision": self.revision.number,
            "op": self.revision.op,
            "author": self.revision.author,
            "reapplied_on_newer_text": self.reapplied,
            "rows_changed": self.rows_changed,
            "warnings": self.warnings,
            "text": self.text,
        }


# ---------------------------------------------------------------------------------------------
# the lock, and reading the canvas under it


@contextmanager
def _canvas_locked(canvas: Canvas) -> Iterator[Canvas]:
    """The agent's write lock, pending changes finished, and a fresh copy of the canvas."""
    with agent_locked(canvas.agent_id) as agent:
        intents_recover(agent)
        fresh = Canvas.objects.filter(pk=canvas.pk).first()
        if fresh is None:
            raise EditRefused(Said("not_indexed", file=canvas.filename))
        fresh.agent = agent
        yield fresh


def _run(canvas: Canvas, work: Callable[[Canvas], T]) -> T:
    """`work` under the lock; a database failure after the files were written is finished.

    A refusal still commits what was recorded before it (an agent rewrite seen on disk, a
    recovered change): the refused change itself never wrote anything.
    """
    refused: EditRefused | None = None
    try:
        with _canvas_locked(canvas) as fresh:
            try:
                return work(fresh)
            except EditRefused as exc:
                refused = exc
    except DatabaseError:
        with agent_locked(canvas.agent_id) as agent:
            recovered = [r for r in intents_recover(agent) if r is not None]
        if recovered:
            raise EditConflict(Said("db_recovered", number=recovered[-1].number)) from None
        raise EditConflict(Said("db_busy")) from None
    raise refused


def _read_disk(canvas: Canvas) -> tuple[str, str]:
    """The canvas text on disk and its hash; refuses a vanished or non-UTF-8 file."""
    try:
        raw = read_regular(canvas.path, folders=2)  # mmds/<file>: no links, bounded
    except FileNotFoundError:
        raise EditRefused(Said("vanished", file=canvas.filename)) from None
    except (LinkRefused, UnsafePath) as exc:
        said = Said("not_plain_file", file=canvas.filename, reason=RefusedWords(exc))
        raise EditRefused(said) from None
    except FileTooLarge as exc:
        raise EditRefused(Said("too_large", reason=RefusedWords(exc))) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise EditRefused(Said("not_utf8", file=canvas.filename)) from None
    return text, content_hash(text)


def _sync(canvas: Canvas) -> bool:
    """Record an agent rewrite seen on disk as an "agent" revision (under the lock)."""
    try:
        changed = canvas_index_file(canvas.agent, canvas.path)
    except (FileNotFoundError, ValueError):
        return False
    canvas.refresh_from_db()
    return changed


def _author(user: Any) -> tuple[str, int | None]:
    if user is not None and getattr(user, "is_authenticated", False):
        return user.get_username(), user.pk
    return "anonymous", None


def _write(canvas: Canvas, op: str, params: dict[str, Any], user: Any, **kw: Any) -> Any:
    author, user_id = _author(user)
    return change_write(
        Change(canvas=canvas, op=op, params=params, author=author, user_id=user_id, **kw)
    )


# ---------------------------------------------------------------------------------------------
# edits


def canvas_apply_edit(
    *, canvas: Canvas, op: str, params: dict[str, Any], base_hash: str, user: Any
) -> EditOutcome:
    """Apply one operation to the canvas file on disk (and its rows); see docs/curation.md."""
    if op not in OPS:
        raise EditRefused(Said("unknown_op", op=op, ops=", ".join(OPS)))
    params = read_input(op, params)
    if op == "undo":
        return canvas_undo(canvas=canvas, user=user)
    if op == "redo":
        return canvas_redo(canvas=canvas, user=user)
    if op in ("restore", "reapply", "drop_again"):
        number = params.get("revision")
        if not isinstance(number, int):
            raise EditRefused(Said("revision_number"))
        if op == "restore":
            return canvas_restore(canvas=canvas, number=number, base_hash=base_hash, user=user)
        confirm = params["confirm_live"]
        run = canvas_reapply if op == "reapply" else canvas_drop_again
        return run(canvas=canvas, number=number, user=user, confirm_live=confirm)
    if not isinstance(base_hash, str) or not base_hash:
        raise EditRefused(Said("base_required"))
    return _run(canvas, lambda fresh: _edit(fresh, op, params, base_hash, user))


def _edit(
    canvas: Canvas, op: str, params: dict[str, Any], base_hash: str, user: Any
) -> EditOutcome:
    """`op` on the canvas as it is on disk; `params` already read by `read_input` (a request's,
    or a revision's stored input when it is re-applied)."""
    text, current = _read_disk(canvas)
    reapplied = False
    if current != base_hash:
        base_text = history.base_text(canvas, base_hash)
        _sync(canvas)
        if base_text is None or not applies_cleanly(base_text, text, op, params):
            raise EditConflict(Said("changed_and_touched"), current)
        reapplied = True
    if op == "adopt":
        return _adopt(canvas, params, text, current, user)
    entry = OPERATIONS[op]
    result = engine_apply(text, op, params)
    if result.text == text:
        raise EditRefused(Said("no_change"))
    check_parses(text, result.text)
    after = visible_to_running_agent(text, lines_for_live_agent(canvas.agent, text, result.text))
    deleted = entry.drops_rows(params)
    live = liveness.agent_live(canvas.agent)
    if deleted and live.live and not params["confirm_live"]:
        raise EditConflict(Said("drop_while_live", reasons=reasons(live.reasons)))
    plan = RowPlan.forward(result.id_map if entry.moves_rows else {}, deleted)
    written = _write(
        canvas, op, op_params(op, params), user, before_text=text, after_text=after, rows=plan
    )
    outcome = EditOutcome(
        revision=written.revision,
        hash=content_hash(after),
        text=after,
        reapplied=reapplied,
        rows_changed=written.rows_changed,
    )
    outcome.warnings += said_notes(result.notes)
    if deleted and live.live:
        outcome.warnings.append(str(Said("drop_confirmed")))
    if live.live and result.notes and not agent_view.read_meta(text).on_line_one:
        outcome.warnings.append(str(Said("header_while_live")))
    if reapplied:
        outcome.warnings.append(str(Said("reapplied_on_newer")))
    if live.live:
        outcome.warnings.append(str(Said("edit_while_live")))
    return outcome


def _adopt(
    canvas: Canvas, params: dict[str, Any], text: str, current: str, user: Any
) -> EditOutcome:
    """Point rows whose node id is on no canvas at a node of this one (rows only, text kept)."""
    source, node = params["from"], params["node"]
    if node not in parsed(text).nodes:
        raise EditRefused(Said("no_such_node", node=node, file=canvas.filename))
    if source == node:
        raise EditRefused(Said("rows_already_there"))
    if not rows_with_nodes(Path(canvas.agent.path), {source}):
        raise EditRefused(Said("no_rows_with_id", node=source))
    plan = RowPlan.forward({source: node}, set())
    written = _write(
        canvas,
        "adopt",
        {"from": source, "node": node},
        user,
        before_text=text,
        after_text=text,
        rows=plan,
    )
    return EditOutcome(
        revision=written.revision, hash=current, text=text, rows_changed=written.rows_changed
    )


# ---------------------------------------------------------------------------------------------
# history


def canvas_undo(*, canvas: Canvas, user: Any) -> EditOutcome:
    def work(fresh: Canvas) -> EditOutcome:
        target = history.undo_target(fresh)
        if target is None:
            raise EditRefused(Said("nothing_to_undo"))
        return _swap(fresh, target, "undo", user)

    return _run(canvas, work)


def canvas_redo(*, canvas: Canvas, user: Any) -> EditOutcome:
    def work(fresh: Canvas) -> EditOutcome:
        target = history.redo_target(fresh)
        if target is None:
            raise EditRefused(Said("nothing_to_redo"))
        return _swap(fresh, target, "redo", user)

    return _run(canvas, work)


def _swap(canvas: Canvas, target: Revision, op: str, user: Any) -> EditOutcome:
    text, current = _read_disk(canvas)
    from_hash = target.after_hash if op == "undo" else target.before_hash
    to_text = target.before_text if op == "undo" else target.after_text
    if current != from_hash:
        _sync(canvas)
        raise EditConflict(
            f"the canvas changed since revision {target.number} (the agent rewrote it or "
            "another edit followed); restore a revision from the history instead",
            current,
        )
    lines_for_live_agent(canvas.agent, text, to_text, exact=True)
    remaps = target.remaps or {}
    if op == "undo":
        plan = RowPlan.restore(remaps)
    else:
        plan = RowPlan.forward(remaps.get("node_map") or {}, set(remaps.get("mark_deleted") or []))
    written = _write(
        canvas,
        op,
        {"target": target.number, "target_op": target.op},
        user,
        before_text=text,
        after_text=to_text,
        rows=plan,
        flips=(target.number, op == "undo"),
        keep_remaps_on=target.number if op == "redo" else None,
    )
    return EditOutcome(
        revision=written.revision,
        hash=content_hash(to_text),
        text=to_text,
        rows_changed=written.rows_changed,
    )


def canvas_restore(*, canvas: Canvas, number: int, base_hash: str, user: Any) -> EditOutcome:
    """Write revision `number`'s text back as a new revision (row remaps are left as they are)."""

    def work(fresh: Canvas) -> EditOutcome:
        revision = fresh.revisions.filter(number=number).first()
        if revision is None:
            raise EditRefused(Said("no_such_revision", number=number))
        text, current = _read_disk(fresh)
        if base_hash and current != base_hash:
            _sync(fresh)
            raise EditConflict(Said("changed_reload"), current)
        if revision.after_text == text:
            raise EditRefused(Said("already_that_text", number=number))
        check_parses(text, revision.after_text)
        lines_for_live_agent(fresh.agent, text, revision.after_text, exact=True)
        after = visible_to_running_agent(text, revision.after_text)
        written = _write(
            fresh, "restore", {"revision": number}, user, before_text=text, after_text=after
        )
        return EditOutcome(revision=written.revision, hash=content_hash(after), text=after)

    return _run(canvas, work)


def canvas_reapply(
    *, canvas: Canvas, number: int, user: Any, confirm_live: bool = False
) -> EditOutcome:
    """Apply a human edit again on the current text (after an agent rewrite dropped it).

    On a live agent it is refused with the reason unless confirmed (its map-builder may drop it
    again, and a re-applied drop from context may be re-marked); only the fields the edit still
    owns are written: a newer human edit of the same field is never overwritten.
    """

    def work(fresh: Canvas) -> EditOutcome:
        revision = fresh.revisions.filter(number=number).exclude(author=history.AGENT_AUTHOR).first()
        if revision is None or revision.op not in EDIT_OPS:
            raise EditRefused(Said("not_reappliable", number=number))
        _sync(fresh)
        _, current = _read_disk(fresh)
        params = history.reapply_params(fresh, revision)
        live = liveness.agent_live(fresh.agent)
        if live.live and not confirm_live:
            raise EditConflict(Said("reapply_while_live", reasons=reasons(live.reasons)))
        params = read_input(revision.op, {**params, "confirm_live": confirm_live})
        return _edit(fresh, revision.op, params, current, user)

    return _run(canvas, work)


def canvas_drop_again(
    *, canvas: Canvas, number: int, user: Any, confirm_live: bool = False
) -> EditOutcome:
    """Mark "deleted" again the rows of drop `number` that the agent re-marked (§4.8.5)."""

    def work(fresh: Canvas) -> EditOutcome:
        revision = fresh.revisions.filter(number=number).exclude(author=history.AGENT_AUTHOR).first()
        if revision is None or not (revision.remaps or {}).get("reverted"):
            raise EditRefused(Said("none_remarked", number=number))
        live = liveness.agent_live(fresh.agent)
        if live.live and not confirm_live:
            raise EditConflict(Said("drop_while_live", reasons=reasons(live.reasons)))
        text, current = _read_disk(fresh)
        plan = RowPlan.forward({}, set(revision.remaps.get("mark_deleted") or []))
        written = _write(
            fresh, "drop_again", {"revision": number}, user,
            before_text=text, after_text=text, rows=plan,
        )
        reverts.note(fresh.agent)
        outcome = EditOutcome(
            revision=written.revision, hash=current, text=text, rows_changed=written.rows_changed
        )
        if live.live:
            outcome.warnings.append(str(Said("drop_confirmed")))
        return outcome

    return _run(canvas, work)


# ---------------------------------------------------------------------------------------------
# keeping the index in step, and resume


def canvas_sync(*, canvas: Canvas) -> bool:
    """The explicit "re-sync": index the canvas file as it is on disk now; True if it changed."""

    def work(fresh: Canvas) -> bool:
        changed = _sync(fresh)
        if changed:
            number = fresh.revisions.order_by("-number").values_list("number", flat=True).first()
            delta = AgentDelta(
                agent_pk=fresh.agent_id,
                agent_slug=fresh.agent.slug,
                canvases_changed=[(fresh.pk, fresh.filename, number or 0)],
            )
            transaction.on_commit(lambda: broadcast_delta(delta))
        return changed

    return _run(canvas, work)


@dataclass
class ResumeOutcome:
    held: bool
    state_hash: str
    active: str
    message: str


def canvas_resume(*, canvas: Canvas, user: Any, confirm_live: bool = False) -> ResumeOutcome:
    """Make this canvas the agent's active canvas in state.json and check that it held."""

    def work(fresh: Canvas) -> ResumeOutcome:
        agent = fresh.agent
        live = liveness.agent_live(agent)
        if live.live and not confirm_live:
            raise EditConflict(Said("resume_while_live", reasons=reasons(live.reasons)))
        path = confine_file(Path(agent.path), STATE_FILE)  # a linked state.json is refused
        previous = liveness.state_active(agent)
        priors = own_writes.before(agent, [path])
        try:
            new_hash = state_name_active(path, fresh.filename)
        except PreconditionFailed as exc:
            raise EditConflict(str(exc)) from None
        except ValueError as exc:
            raise EditRefused(str(exc)) from None
        except OSError as exc:  # a FIFO, device, link or huge file: refused at once, never waited on
            raise EditRefused(Said("state_unwritable", reason=exc.strerror or str(exc))) from None
        own_writes.record(agent, priors)
        after = liveness.state_file(agent)  # read once: what it names and what the index keeps
        active = active_mmd_file(after) or ""
        held = active == fresh.filename
        author, user_id = _author(user)
        revision_record(  # the page of the agent compares later switches with this request
            fresh,
            author=author,
            op="resume",
            before_text=fresh.text,
            after_text=fresh.text,
            params={"previous": previous, "held": held},
            user=user if user_id else None,
        )
        agent.active_mmd_file = active
        agent.state_data = after.data if after.error is None else {}
        agent.save(update_fields=["active_mmd_file", "state_data"])
        delta = AgentDelta(agent_pk=agent.pk, agent_slug=agent.slug, active_canvas=active)
        transaction.on_commit(lambda: broadcast_delta(delta))
        message = str(
            Said("resumed", file=fresh.filename) if held else Said("resume_overwritten", active=active)
        )
        return ResumeOutcome(held=held, state_hash=new_hash, active=active, message=message)

    return _run(canvas, work)
