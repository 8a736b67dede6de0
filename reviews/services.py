"""Writes of review notes, marks and queue decisions; promoting a note to a canvas annotation.

Nothing here touches the agent's files except ``note_promote``, which goes through the canvas
write path (``canvases.services.canvas_apply_edit``, op "annotate") like any other edit.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from canvases import services as canvas_services
from canvases.models import Revision
from canvases.refused import EditRefused
from reviews.models import QUEUE_STATES, QueueDecision, ReviewMark, ReviewNote
from reviews.selectors import NOTE_LIMIT, Target, queue
from sessions.models import Agent, Canvas


class ReviewRefused(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _who(user: Any) -> dict[str, Any]:
    return {"author": user.get_username(), "user": user}


def note_add(
    agent: Agent, target: Target, text: str, user: Any, reply_to: int | None = None
) -> ReviewNote:
    """A new note on ``target``, or a reply in the thread of note ``reply_to``."""
    text = text.strip()
    if not text:
        raise ReviewRefused(_("the note is empty"))
    if len(text) > NOTE_LIMIT:
        raise ReviewRefused(
            _("the note is %(n)s characters long; the limit is %(limit)s")
            % {"n": len(text), "limit": NOTE_LIMIT}
        )
    thread = None
    if reply_to is not None:
        thread = ReviewNote.objects.filter(
            agent=agent, pk=reply_to, kind=target.kind, scope=target.scope, item=target.item
        ).first()
        if thread is None:
            raise ReviewRefused(_("the note you reply to is not in this thread"), 404)
        thread = ReviewNote.objects.get(pk=thread.thread_id) if thread.thread_id else thread
    return ReviewNote.objects.create(
        agent=agent, thread=thread, text=text, **target.where(), **_who(user)
    )


def mark_set(agent: Agent, target: Target, reviewed: bool, user: Any) -> ReviewMark | None:
    """Mark ``target`` reviewed (by ``user``, now) or clear the mark."""
    where = {"agent": agent, **target.where()}
    with transaction.atomic():
        if not reviewed:
            ReviewMark.objects.filter(**where).delete()
            return None
        mark, _created = ReviewMark.objects.get_or_create(**where, defaults=_who(user))
        return mark


def queue_decide(agent: Agent, key: str, state: str, user: Any) -> QueueDecision | None:
    """done / skip a queue item, on the diagnosis it has now (read here, not from the form);
    "open" puts a decided item back in the queue."""
    if state == "open":
        QueueDecision.objects.filter(agent=agent, key=key).delete()
        return None
    if state not in QUEUE_STATES:
        raise ReviewRefused(_("a queue item is marked done or skip"))
    todo, _decided = queue(agent)
    item = next((i for i in todo if i.key == key), None)
    if item is None:
        raise ReviewRefused(_("this item is no longer in the review queue"), 404)
    decision, _created = QueueDecision.objects.update_or_create(
        agent=agent,
        key=key,
        defaults={
            "fingerprint": item.fingerprint,
            "state": state,
            "decided_at": timezone.now(),
            **_who(user),
        },
    )
    return decision


def note_promote(agent: Agent, note: ReviewNote, user: Any) -> Revision:
    """Write the note into its node's label as the canvas annotation the agent reads.

    The one write path of canvases (journal, lock, revision, broadcast), op "annotate": the
    agent sees the text from this revision on, and undo removes it like any edit.
    """
    if note.kind != "node":
        raise ReviewRefused(_("only a note on a canvas node can become its annotation"))
    if note.promoted_revision is not None:
        raise ReviewRefused(
            _("this note is already the annotation of revision %(n)s")
            % {"n": note.promoted_revision},
            409,
        )
    canvas = Canvas.objects.filter(agent=agent, filename=note.scope).first()
    if canvas is None:
        raise ReviewRefused(_("the canvas of this note is gone"), 404)
    try:
        result = canvas_services.canvas_apply_edit(
            canvas=canvas,
            op="annotate",
            params={"node": note.item, "text": note.text},
            base_hash=canvas.content_hash,
            user=user,
        )
    except EditRefused as exc:
        raise ReviewRefused(str(exc), exc.status) from exc
    note.promoted_revision = result.revision.number
    note.save(update_fields=["promoted_revision"])
    return result.revision
