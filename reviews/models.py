"""Notes, "reviewed" marks and queue decisions, kept in memviz's database only.

A target is named by text, not by a foreign key to an index row: ingest re-creates rows and
nodes, and a person's note must outlive that. ``kind`` is "node" (scope: canvas file, item:
node id), "row" (scope: session id, item: the row's line number) or "session" (scope: session
id, item: "").
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from memviz.fields import NulSafeCharField, NulSafeTextField
from sessions.models import Agent

KINDS = ("node", "row", "session")
QUEUE_STATES = ("done", "skip")


class ReviewTarget(models.Model):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE)
    kind = NulSafeCharField(max_length=10, choices=[(k, k) for k in KINDS])
    scope = NulSafeCharField(max_length=500)
    item = NulSafeCharField(max_length=300, blank=True, default="")
    author = NulSafeCharField(max_length=150)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True


class ReviewNote(ReviewTarget):
    """A note, or a reply in its thread (``thread``: the note that started it; one level)."""

    thread = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="replies"
    )
    text = NulSafeTextField()
    # The canvas revision that wrote this note into the canvas as an annotation, once promoted.
    promoted_revision = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["agent", "kind", "scope", "item"], name="review_note_target")
        ]


class ReviewMark(ReviewTarget):
    """ "Reviewed": at most one per target; who set it and when."""

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "kind", "scope", "item"], name="uniq_review_mark"
            )
        ]


class QueueDecision(models.Model):
    """done / skip for one queue item, and the diagnosis it was made on (``fingerprint``):
    the item comes back only when that diagnosis changes."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE)
    key = models.CharField(max_length=64)
    fingerprint = models.CharField(max_length=64)
    state = models.CharField(max_length=10, choices=[(s, s) for s in QUEUE_STATES])
    author = NulSafeCharField(max_length=150)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    decided_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "key"], name="uniq_queue_decision")]
