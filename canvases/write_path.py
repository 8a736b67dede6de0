"""The one write path for a change of an agent's canvas and rows: journaled, all-or-nothing.

Called with the agent's write lock held (`sessions.locks.agent_locked`). A change is:

1. Prepare: the new canvas text and each offload file's new rows are written to fsynced temp
   files beside their targets. A full disk, a read-only folder or a missing permission fails
   here, before anything changed; the temps are removed and `WriteFailed` names the file.
2. Journal: an intent (`agentfs.journal`) records what is about to change — the canvas
   hashes and texts, the rows re-pointed, the revision to record — fsynced.
3. Commit: the canvas is renamed into place (its hash re-checked first: an agent write since
   step 1 is a conflict, and nothing is changed), then each offload file.
4. Record: the index and a `Revision` (authored by the person, carrying the intent's id) in the
   same transaction; after it commits, the intent is removed and the change broadcast.

A change may create its canvas (`Change.creates`, a branch): the file must not exist, and no
other file of its `NNN-` number may appear before or right after it is linked into place
(refused, nothing left behind); its index row is made when the change is recorded.

If the process dies or the database refuses step 4, the intent is still there: `intents_recover`
(run by every later write to the agent, by ingest, and at start-up) finishes it — the files are
brought to the new state and the revision recorded as the person's — or, when nothing had been
renamed yet, drops it. So a merge is never left with the canvas merged and the rows not, and a
human edit is never mistaken for the agent's rewrite.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from agentfs import journal
from agentfs.atomic import (
    PreconditionFailed,
    PreparedWrite,
    fsync_folder,
    lock_folder,
    prepare_write,
    remove_stale_temps,
)
from agentfs.layout import CANVAS_DIR
from agentfs.remap import PreparedRemap, RemapConflict, prepare_remap, rewrite_file
from canvases import lineage, own_writes
from canvases.indexing import canvas_apply_text, canvas_number_and_label, read_text
from canvases.mermaid import content_hash
from canvases.mermaid.branch import file_number
from canvases.messages import Said
from canvases.models import Revision
from canvases.refused import EditConflict, EditRefused, WriteFailed
from canvases.row_plans import RowPlan, rows_index_apply
from memviz.broadcast import CanvasChange, broadcast_change
from sessions.models import Agent, Canvas

log = logging.getLogger(__name__)

DISK_ERRORS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}


@dataclass
class Change:
    """One change to write: canvas text before → after, rows, and the revision to record."""

    canvas: Canvas
    op: str
    params: dict[str, Any]
    author: str
    user_id: int | None
    before_text: str
    after_text: str
    rows: RowPlan | None = None
    # undo/redo: (revision number, its new `undone` flag)
    flips: tuple[int, bool] | None = None
    keep_remaps_on: int | None = None  # redo: the target revision keeps the new remaps
    creates: bool = False  # a new canvas file (unsaved `canvas`; its row is made at record)
    lineage: dict[str, Any] | None = None  # a branch: what it came from (`canvases.lineage`)


@dataclass
class Written:
    revision: Revision
    rows_changed: int


def checkpoint(name: str) -> None:
    """Crash-test hook: with `MEMVIZ_CRASH_AT=<name>` the process stops here to be killed."""
    if os.environ.get("MEMVIZ_CRASH_AT") == name:
        print(f"crash-point {name}", flush=True)
        time.sleep(600)


def journal_dir() -> Path:
    return Path(settings.MEMVIZ_JOURNAL_DIR)


def change_write(change: Change) -> Written:
    """Steps 1-4 above; raises EditConflict / WriteFailed / EditRefused with nothing changed."""
    canvas = change.canvas
    agent_dir = Path(canvas.agent.path)
    path = canvas.path
    intent = journal.Intent(
        agent_dir=str(agent_dir),
        op=change.op,
        payload={
            "canvas_pk": canvas.pk,
            "agent_pk": canvas.agent_id,
            "creates": change.creates,
            "lineage": change.lineage,
            "file": canvas.filename,
            "params": change.params,
            "author": change.author,
            "user_id": change.user_id,
            "before_text": change.before_text,
            "after_text": change.after_text,
            "before_hash": content_hash(change.before_text),
            "after_hash": content_hash(change.after_text),
            "rows": None,
            "flips": change.flips,
            "keep_remaps_on": change.keep_remaps_on,
        },
    )
    with lock_folder(agent_dir), lock_folder(path.parent):
        canvas_temp, row_temps = _prepare(change, path, agent_dir)
        checkpoint("prepared")
        plan = change.rows
        if plan is not None:
            plan.collect()
            intent.payload["rows"] = plan.as_json()
        try:
            journal.intent_save(journal_dir(), intent)
        except OSError as error:
            _abort(canvas_temp, row_temps)
            raise _disk_error(error, "memviz's journal (var/intents)") from None
        checkpoint("journaled")
        touched = ([path] if canvas_temp is not None else []) + [p.path for p in row_temps]
        priors = own_writes.before(canvas.agent, touched)
        rows_changed = _commit(change, intent, canvas_temp, row_temps)
        own_writes.record(canvas.agent, priors)  # the liveness check must not take them for the agent's
        checkpoint("files-renamed")
    if plan is not None:
        plan.collect()  # appends spliced in at commit time were recorded too
        intent.payload["rows"] = plan.as_json()
    revision = intent_record(intent, rows_changed)
    checkpoint("recorded")
    return Written(revision=revision, rows_changed=rows_changed)


def _prepare(
    change: Change, path: Path, agent_dir: Path
) -> tuple[PreparedWrite | None, list[PreparedRemap]]:
    canvas_temp: PreparedWrite | None = None
    row_temps: list[PreparedRemap] = []
    current = path.name
    try:
        if change.creates:
            _refuse_taken_number(path)
            canvas_temp = prepare_write(path, change.after_text.encode("utf-8"), create=True)
        elif change.after_text != change.before_text:
            canvas_temp = prepare_write(
                path,
                change.after_text.encode("utf-8"),
                expect_hash=content_hash(change.before_text),
            )
        if change.rows is not None:
            for file in change.rows.files(agent_dir):
                current = file.name
                prepared = prepare_remap(file, change.rows.editor(file))
                if prepared is not None:
                    row_temps.append(prepared)
    except PreconditionFailed as error:
        _abort(canvas_temp, row_temps)
        if error.current_hash is None:
            raise EditRefused(str(error)) from None
        raise EditConflict(Said("changed_while_writing"), error.current_hash) from None
    except FileExistsError:
        _abort(canvas_temp, row_temps)
        raise _name_taken(path.name) from None
    except OSError as error:
        _abort(canvas_temp, row_temps)
        raise _disk_error(error, current) from None
    except BaseException:
        _abort(canvas_temp, row_temps)
        raise
    return canvas_temp, row_temps


def _name_taken(name: str) -> EditConflict:
    return EditConflict(Said("name_taken", file=name))


def _refuse_taken_number(path: Path) -> None:
    """A new canvas's `NNN-` must be its own: two files of one number share their node ids."""
    number = file_number(path.name)
    if number is None:
        return
    with contextlib.suppress(FileNotFoundError):
        for other in os.listdir(path.parent):
            if other != path.name and other.endswith(".mmd") and file_number(other) == number:
                raise _name_taken(other)


def _commit(
    change: Change,
    intent: journal.Intent,
    canvas_temp: PreparedWrite | None,
    row_temps: list[PreparedRemap],
) -> int:
    if canvas_temp is not None:
        try:
            if change.creates:
                _refuse_taken_number(canvas_temp.path)
            canvas_temp.commit()
            if change.creates:
                _created_alone(canvas_temp.path)
        except EditConflict:
            _abort(canvas_temp, row_temps)
            journal.intent_clear(journal_dir(), intent.id)
            raise
        except FileExistsError:
            _abort(None, row_temps)
            journal.intent_clear(journal_dir(), intent.id)
            raise _name_taken(change.canvas.filename) from None
        except PreconditionFailed as error:
            _abort(None, row_temps)
            journal.intent_clear(journal_dir(), intent.id)
            raise EditConflict(Said("changed_while_writing"), error.current_hash) from None
        except OSError as error:
            _abort(None, row_temps)
            journal.intent_clear(journal_dir(), intent.id)
            raise _disk_error(error, change.canvas.filename) from None
    checkpoint("canvas-renamed")
    intent.stage = "canvas"
    with contextlib.suppress(OSError):  # recovery reads the canvas hash when this is lost
        journal.intent_save(journal_dir(), intent)
    rows_changed = 0
    pending = list(row_temps)
    while pending:
        prepared = pending.pop(0)
        try:
            rows_changed += prepared.commit()
            checkpoint("one-file-renamed")
        except (RemapConflict, OSError) as error:
            for rest in pending:
                rest.abort()
            # The canvas is new: complete the rows one by one (the recovery step); the intent
            # stays until that succeeds, so a later write or the start-up finishes the job.
            try:
                rows_changed += _replay_rows(intent)
            except (RemapConflict, OSError):
                log.exception("could not complete the rows of %s", change.canvas.filename)
                raise _partial(error, prepared.path.name) from None
            break
    return rows_changed


def _created_alone(path: Path) -> None:
    """Right after a new canvas is linked: if another file of its number appeared in the
    microseconds between the check and the link, ours goes again (nobody has used it yet)."""
    try:
        _refuse_taken_number(path)
    except EditConflict:
        path.unlink()
        fsync_folder(path.parent)
        raise


def _partial(error: Exception, name: str) -> WriteFailed:
    reason = DISK_ERRORS.get(getattr(error, "errno", None) or 0, str(error))
    return WriteFailed(Said("rows_not_updated", file=name, reason=reason), file=name, reason=reason)


def _abort(canvas_temp: PreparedWrite | None, row_temps: list[PreparedRemap]) -> None:
    if canvas_temp is not None:
        canvas_temp.abort()
    for prepared in row_temps:
        prepared.abort()


def _disk_error(error: OSError, name: str) -> WriteFailed:
    reason = DISK_ERRORS.get(error.errno or 0, error.strerror or str(error))
    return WriteFailed(Said("disk_refused", file=name, reason=reason), file=name, reason=reason)


# ---------------------------------------------------------------------------------------------
# recording, and recovering unfinished intents


def _intent_canvas(data: dict[str, Any]) -> Canvas | None:
    """The canvas of an intent; for a created one, its index row (unsaved until recorded)."""
    if not data.get("creates"):
        return Canvas.objects.select_related("agent").filter(pk=data["canvas_pk"]).first()
    agent = Agent.objects.filter(pk=data["agent_pk"]).first()
    if agent is None:
        return None
    found = Canvas.objects.filter(agent=agent, filename=data["file"]).first()
    if found is None:
        number, label = canvas_number_and_label(data["file"])
        found = Canvas(agent=agent, filename=data["file"], number=number, label=label)
    found.agent = agent
    return found


def intent_record(intent: journal.Intent, rows_changed: int) -> Revision:
    """The index and the revision of a change whose files are written (under the agent lock)."""
    data = intent.payload
    canvas = _intent_canvas(data)
    if canvas is None:
        raise Canvas.DoesNotExist(f"the canvas of change {intent.id} is gone from the index")
    existing = canvas.revisions.filter(write_id=intent.id).first() if canvas.pk else None
    if existing is not None:
        return existing
    after_text = data["after_text"]
    if data["after_hash"] != data["before_hash"]:
        canvas_apply_text(canvas, after_text)
        with contextlib.suppress(FileNotFoundError):
            canvas.mtime_ns = canvas.path.stat().st_mtime_ns
            canvas.save(update_fields=["mtime_ns"])
    plan = RowPlan.from_json(data["rows"]) if data.get("rows") else None
    remaps: dict[str, Any] = {}
    if plan is not None:
        rows_index_apply(canvas.agent_id, plan)
        if plan.kind == "forward":
            remaps = plan.remaps(rows_changed)
    last = canvas.revisions.order_by("-number").values_list("number", flat=True).first() or 0
    revision = Revision.objects.create(
        canvas=canvas,
        number=last + 1,
        author=data["author"],
        user_id=data["user_id"],
        op=intent.op,
        params=data["params"],
        before_text=data["before_text"],
        after_text=after_text,
        before_hash=data["before_hash"] if data["before_text"] else "",
        after_hash=data["after_hash"],
        remaps=remaps,
        write_id=intent.id,
    )
    if data.get("lineage"):
        lineage.lineage_record(canvas, revision, data["lineage"])
    if data.get("flips"):
        number, undone = data["flips"]
        target = canvas.revisions.get(number=number)
        target.undone = undone
        fields = ["undone"]
        if data.get("keep_remaps_on") == number and remaps:
            target.remaps = remaps
            fields.append("remaps")
        target.save(update_fields=fields)
    folder = journal_dir()
    change = CanvasChange(
        agent_pk=canvas.agent_id,
        agent_slug=canvas.agent.slug,
        canvas_pk=canvas.pk,
        canvas=canvas.filename,
        revision=revision.number,
        author=revision.author,
        op=revision.op,
        hash=data["after_hash"],
        rows_changed=rows_changed,
    )

    def after_commit() -> None:
        checkpoint("committed")
        journal.intent_clear(folder, intent.id)
        broadcast_change(change)

    transaction.on_commit(after_commit)
    return revision


def _replay_rows(intent: journal.Intent) -> int:
    """Bring every offload file to the change's new state (idempotent)."""
    data = intent.payload.get("rows")
    if not data:
        return 0
    plan = RowPlan.from_json(data)
    agent_dir = Path(intent.agent_dir)
    changed = 0
    for file in plan.files(agent_dir):
        rows, _ = rewrite_file(file, plan.replay_editor(file))
        changed += rows
    return changed


def intents_recover(agent: Agent) -> list[Revision | None]:
    """Finish or drop every unfinished change of this agent; call with its write lock held.

    Returns, per intent, the revision recorded (finished) or None (dropped: nothing of it had
    reached the files).
    """
    agent_dir = Path(agent.path)
    results: list[Revision | None] = []
    for intent in journal.intent_load_all(journal_dir(), str(agent_dir)):
        results.append(_recover_one(intent))
    # temps of a writer killed before journaling, or while writing the intent itself
    for folder in (agent_dir, agent_dir / CANVAS_DIR, journal_dir()):
        with contextlib.suppress(OSError):
            remove_stale_temps(folder)
    return results


def _recover_one(intent: journal.Intent) -> Revision | None:
    data = intent.payload
    canvas = _intent_canvas(data)
    if canvas is None:  # the canvas is gone from the index (and so from disk)
        journal.intent_clear(journal_dir(), intent.id)
        return None
    done = canvas.revisions.filter(write_id=intent.id).first() if canvas.pk else None
    if done is not None:
        journal.intent_clear(journal_dir(), intent.id)
        return done
    try:
        on_disk = content_hash(read_text(canvas.path))
    except OSError:
        on_disk = None
    canvas_changes = data["after_hash"] != data["before_hash"]
    renamed = intent.stage != "prepared" or (canvas_changes and on_disk == data["after_hash"])
    if data.get("creates") and on_disk != data["after_hash"]:
        renamed = False  # the new file never appeared (or was taken back): nothing to record
    if not renamed:
        journal.intent_clear(journal_dir(), intent.id)
        log.warning("dropped an unfinished %s of %s: nothing had been written", intent.op, canvas)
        return None
    with lock_folder(Path(intent.agent_dir)):
        rows = _replay_rows(intent)
    recorded = sum(len(v) for v in ((data.get("rows") or {}).get("rows") or {}).values())
    log.warning("finished an interrupted %s of %s", intent.op, canvas)
    return intent_record(intent, max(rows, recorded))


def intents_recover_all() -> int:
    """At start-up: finish every agent's unfinished changes; returns how many were pending."""
    from sessions.locks import agent_locked

    pending = journal.intent_load_all(journal_dir())
    for agent_dir in sorted({i.agent_dir for i in pending}):
        agent = Agent.objects.filter(path=agent_dir).first()
        if agent is None:
            continue
        with agent_locked(agent.pk) as locked:
            intents_recover(locked)
    return len(pending)
