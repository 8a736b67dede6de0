"""The history of canvas edits, memviz's own writes, and branches (the canvases and their nodes
themselves are the index's: sessions/models.py)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from memviz.fields import NulSafeCharField, NulSafeJSONField, NulSafeTextField
from sessions.models import Agent, Canvas


class Revision(models.Model):
    """One change of a canvas: a human edit through memviz, or a rewrite seen on disk ("agent")."""

    canvas = models.ForeignKey(Canvas, on_delete=models.CASCADE, related_name="revisions")
    number = models.IntegerField()
    author = NulSafeCharField(max_length=150)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    op = NulSafeCharField(max_length=40)
    params = NulSafeJSONField(default=dict)
    before_text = NulSafeTextField(blank=True, default="")
    after_text = NulSafeTextField(blank=True, default="")
    before_hash = NulSafeCharField(max_length=64, blank=True, default="")
    after_hash = NulSafeCharField(max_length=64)
    remaps = NulSafeJSONField(default=dict)
    undone = models.BooleanField(default=False)
    # The journal intent this change was written under (memviz's own changes only): lets a
    # recovery tell a change already recorded from one that must still be.
    write_id = models.CharField(max_length=32, blank=True, default="", db_index=True)

    class Meta:
        ordering = ["canvas", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["canvas", "number"], name="uniq_canvas_revision")
        ]


class OwnWrite(models.Model):
    """A file of the agent folder as memviz last left it (inode, size, mtime of what it wrote).

    The liveness check tells memviz's own writes from the agent's by this fingerprint, not by a
    time window: a file that still matches it was last written by memviz, and the agent's last
    write to it is `prior_mtime_ns` (the file's mtime when memviz replaced it).
    """

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="own_writes")
    relpath = NulSafeCharField(max_length=500)
    inode = models.BigIntegerField()
    size = models.BigIntegerField()
    mtime_ns = models.BigIntegerField()
    prior_mtime_ns = models.BigIntegerField(null=True)
    recorded_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "relpath"], name="uniq_agent_own_write")
        ]


class CanvasBranch(models.Model):
    """Where a branch canvas came from, and the rows it was given (memviz's copy, not the agent's).

    A branch is a new canvas file written from another canvas's text of some moment (a revision,
    the text now, a replay instant), its node ids renamed to its own number (`id_map`). `rows`
    is the mapping of that moment, copied: branch node id → the rows then mapped to the source
    node, as `[session file, line number, tool_call_id]`. The agent's offload rows keep their
    node ids; memviz shows the copied rows on the branch's nodes.
    """

    canvas = models.OneToOneField(Canvas, on_delete=models.CASCADE, related_name="branch_of")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey(
        Canvas, null=True, blank=True, on_delete=models.SET_NULL, related_name="branches"
    )
    source_file = NulSafeCharField(max_length=500)  # kept when the source leaves the disk
    source_revision = models.IntegerField(null=True)
    source_hash = NulSafeCharField(max_length=64)
    origin = NulSafeCharField(max_length=20)  # "revision" | "current" | "replay"
    moment = models.DateTimeField(null=True)  # rows at or before it were copied (None: all)
    session_id = NulSafeCharField(max_length=300, blank=True, default="")
    replay_row = models.IntegerField(null=True)
    id_map = NulSafeJSONField(default=dict)
    rows = NulSafeJSONField(default=dict)
    created_by = NulSafeCharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["agent", "created_at"]
