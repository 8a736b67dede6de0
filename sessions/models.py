"""The index of memory folders: agents, their sessions, offload rows, refs and tracked files.

Files on disk are the source of truth; these tables hold what needs querying, never ref bodies.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import models
from django.utils import timezone

from agentfs.layout import canvas_file
from agentfs.row_fields import WAIT
from memviz.fields import NulSafeCharField, NulSafeJSONField, NulSafeTextField


class Agent(models.Model):
    slug = NulSafeCharField(max_length=200, unique=True)
    name = NulSafeCharField(max_length=200)
    path = NulSafeCharField(max_length=1000, unique=True)
    root = NulSafeCharField(max_length=1000)
    variant = NulSafeCharField(max_length=20, default="upstream")
    active_mmd_file = NulSafeCharField(max_length=500, blank=True, default="")
    # Why state.json or sessions-registry.json could not be used: English, and as a code with
    # its values (agentfs Refusal.as_json()) that the agent page translates.
    state_error = NulSafeTextField(blank=True, default="")
    state_problem = NulSafeJSONField(default=dict)
    registry_error = NulSafeTextField(blank=True, default="")
    registry_problem = NulSafeJSONField(default=dict)
    state_data = NulSafeJSONField(default=dict)
    # The links the last ingest left out of the folder ("mmds/x.mmd: symbolic link …"), for
    # its page: listing the folder on every view cost ~20 ms at 250k refs.
    refused_links = NulSafeJSONField(default=list)
    # Figures for the agents list, refreshed at the end of every ingest of the agent.
    sessions_count = models.IntegerField(default=0)
    canvases_count = models.IntegerField(default=0)
    rows_count = models.IntegerField(default=0)
    unmapped_count = models.IntegerField(default=0)
    problems_count = models.IntegerField(default=0)
    refs_count = models.IntegerField(default=0)
    refs_bytes = models.BigIntegerField(default=0)
    summary_bytes = models.BigIntegerField(default=0)
    canvas_bytes = models.BigIntegerField(default=0)
    last_write_at = models.DateTimeField(null=True, blank=True)
    ingested_at = models.DateTimeField(null=True, blank=True)
    # Unix time of the last ingest that checked everything (the live path checks only what
    # the watcher named, and does a full pass again after MEMVIZ_FULL_CHECK_SECONDS).
    checked_at = models.FloatField(default=0)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class AgentSession(models.Model):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="sessions")
    session_id = NulSafeCharField(max_length=300)
    relpath = NulSafeCharField(max_length=1000)
    session_key = NulSafeCharField(max_length=500, blank=True, default="")
    rows_count = models.IntegerField(default=0)
    # UTF-8 bytes of the rows' summaries, kept with rows_count at every insert (the agent's
    # figures are sums over its few sessions, never over its rows).
    summary_bytes = models.BigIntegerField(default=0)
    problems = NulSafeJSONField(default=list)
    first_timestamp = NulSafeCharField(max_length=64, blank=True, default="")
    last_timestamp = NulSafeCharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["agent", "session_id"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "session_id"], name="uniq_agent_session")
        ]

    def __str__(self) -> str:
        return f"{self.agent.slug}/{self.session_id}"


class Row(models.Model):
    # No single-column FK indexes: the composite indexes below start with these columns, and
    # two fewer indexes to maintain make a 100k-row ingest noticeably faster.
    # No database foreign keys on PostgreSQL (migration 0005): there each one is a deferred
    # check per row at commit, 1.55 s per 100k rows for the two (7 % of an ingest). Rows are
    # written by ingest alone, for a session it holds under the agent's lock, and deleted with
    # their session or agent by the ORM's cascade. SQLite keeps its in-process checks.
    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, related_name="rows", db_index=False, db_constraint=False
    )
    session = models.ForeignKey(
        AgentSession,
        on_delete=models.CASCADE,
        related_name="rows",
        db_index=False,
        db_constraint=False,
    )
    line_no = models.IntegerField()
    offset = models.BigIntegerField()
    tool_call_id = NulSafeCharField(max_length=300)
    normalized_id = NulSafeCharField(max_length=300)
    tool_call = NulSafeTextField(blank=True, default="")
    summary = NulSafeTextField(blank=True, default="")
    score = models.FloatField(null=True)
    node_id = NulSafeCharField(max_length=300, null=True)
    result_ref = NulSafeCharField(max_length=1000, null=True)
    offloaded = NulSafeCharField(max_length=20, blank=True, default="")
    timestamp = NulSafeCharField(max_length=64, blank=True, default="")
    extra = NulSafeJSONField(default=dict)
    # True when node_id is drawn on a canvas of the agent (the Go port's "n_" form counts).
    # Set at insert by ingest, on node_id updates by a trigger, on canvas change by
    # canvases.indexing; the agent page lists unplaced rows from the partial index below.
    placed = models.BooleanField(default=False)

    class Meta:
        ordering = ["session", "line_no"]
        indexes = [
            # (session, line_no) after the node: a session page filtered by node reads its
            # rows in order from this index instead of scanning the session.
            models.Index(fields=["agent", "node_id", "session", "line_no"], name="row_agent_node"),
            models.Index(fields=["session", "line_no"], name="row_session_line"),
            # The map-builder's recent wait rows (debugging.debug_selectors._fresh_waits, on
            # every session page): 1 % of rows, read by time instead of all 2,500 of an agent's
            # at 1M rows (4-5 ms of heap visits a page on PostgreSQL).
            models.Index(
                fields=["agent", "timestamp"],
                name="row_wait_time",
                condition=models.Q(node_id=WAIT),
            ),
            models.Index(
                fields=["agent", "session", "line_no"],
                name="row_unplaced",
                condition=models.Q(placed=False),
            ),
        ]


class NodeRowCount(models.Model):
    """How many rows of an agent carry one ``node_id`` value, and whether it is on a canvas.

    Counts are kept by database triggers on Row (insert, delete, node_id update: see migration
    0002), ``placed`` by ``sessions.counters.placement_refresh`` when canvases change, so pages
    read unplaced and dangling figures from a few rows instead of counting the agent's rows.
    A NULL node_id is stored as ``node_id=""`` with ``is_null`` (NULLs never collide in a
    unique constraint).
    """

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+", db_index=False)
    node_id = NulSafeCharField(max_length=300, blank=True, default="")
    is_null = models.BooleanField(default=False)
    rows_count = models.IntegerField(default=0)
    placed = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "is_null", "node_id"], name="uniq_agent_node_count"
            )
        ]
        indexes = [
            models.Index(
                fields=["agent", "node_id"],
                name="nodecount_unplaced",
                condition=models.Q(placed=False),
            )
        ]


class Ref(models.Model):
    # Indexed by the (agent, name) unique constraint. No database foreign key on PostgreSQL
    # (migration 0006), for the reason rows have none: a deferred check per ref at commit, 0.6 s
    # of a 100k-ref ingest that nothing overlaps. Refs are written by ingest alone, under the
    # agent's lock, and deleted with their agent by the ORM's cascade.
    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, related_name="refs", db_index=False, db_constraint=False
    )
    name = NulSafeCharField(max_length=500)
    size = models.BigIntegerField(default=0)
    mtime_ns = models.BigIntegerField(default=0)
    tool = NulSafeCharField(max_length=200, blank=True, default="")
    call_id = NulSafeCharField(max_length=300, blank=True, default="")
    timestamp = NulSafeCharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["agent", "name"]
        constraints = [models.UniqueConstraint(fields=["agent", "name"], name="uniq_agent_ref")]


class TrackedFile(models.Model):
    """Bookkeeping that makes re-ingest incremental: what was read of each file, up to where."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="tracked_files")
    relpath = NulSafeCharField(max_length=1000)
    kind = NulSafeCharField(max_length=20)
    size = models.BigIntegerField(default=0)
    mtime_ns = models.BigIntegerField(default=0)
    offset = models.BigIntegerField(default=0)
    line_no = models.IntegerField(default=1)
    # Checksum of the first ``offset`` bytes, extended with each append and checked by a full
    # pass; the live path checks ``quick_hash`` (the head and the 64 KB before ``offset``)
    # instead, so one appended row costs the same in a 10 KB file as in a 100 MB one.
    prefix_hash = NulSafeCharField(max_length=64, blank=True, default="")
    quick_hash = NulSafeCharField(max_length=64, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "relpath"], name="uniq_agent_file")]


class IngestJob(models.Model):
    """One ingest run, started from the command line or the web UI; its progress is polled."""

    PENDING, RUNNING, DONE, FAILED = "pending", "running", "done", "failed"
    path = NulSafeCharField(max_length=1000)
    status = NulSafeCharField(max_length=20, default=PENDING)
    total = models.IntegerField(default=0)
    done = models.IntegerField(default=0)
    message = NulSafeTextField(blank=True, default="")  # English; the pages: sessions/job_words.py
    message_code = NulSafeCharField(max_length=40, blank=True, default="")
    message_values = NulSafeJSONField(default=dict)
    report = NulSafeJSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Recovery from a dead worker (intake/jobs.py): the running task beats; a silent one is
    # re-queued until MEMVIZ_JOB_MAX_ATTEMPTS, then failed with a retry button.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.IntegerField(default=0)
    worker = NulSafeCharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["-created_at"]

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else (100 if self.finished else 0)

    @property
    def finished(self) -> bool:
        return self.status in {self.DONE, self.FAILED}


class StreamToken(models.Model):
    """A per-agent secret that lets a remote agent push its memory events to memviz."""

    agent_name = NulSafeCharField(max_length=200, unique=True)
    token_hash = NulSafeCharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # Who may rotate or revoke it besides staff; None for tokens made with `manage.py stream_token`.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )


class ShareLink(models.Model):
    """A read-only link to one agent or one session for someone without an account.

    The link is ``/share/<key>/#<secret>``: ``key`` is public (it names the row), the secret
    travels in the fragment, which browsers never send in a request line or a Referer, and only
    its SHA-256 is kept (see sessions/share_links.py).
    """

    key = NulSafeCharField(max_length=32, unique=True)
    secret_hash = NulSafeCharField(max_length=64)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="share_links")
    # None: the whole agent; else only this session.
    session = models.ForeignKey(
        AgentSession, null=True, blank=True, on_delete=models.CASCADE, related_name="share_links"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]


class Canvas(models.Model):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="canvases")
    filename = NulSafeCharField(max_length=500)
    number = models.IntegerField(null=True)
    label = NulSafeCharField(max_length=500, blank=True, default="")
    task_goal = NulSafeTextField(blank=True, default="")
    progress = models.IntegerField(null=True)
    created_time = NulSafeCharField(max_length=64, blank=True, default="")
    updated_time = NulSafeCharField(max_length=64, blank=True, default="")
    content_hash = NulSafeCharField(max_length=64)
    text = NulSafeTextField(blank=True, default="")
    size = models.IntegerField(default=0)
    mtime_ns = models.BigIntegerField(default=0)
    node_count = models.IntegerField(default=0)
    edge_count = models.IntegerField(default=0)
    status_counts = NulSafeJSONField(default=dict)
    problems = NulSafeJSONField(default=list)
    has_errors = models.BooleanField(default=False)

    class Meta:
        db_table = "canvases_canvas"  # the table it had in the canvases app
        ordering = ["agent", "filename"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "filename"], name="uniq_agent_canvas")
        ]

    def __str__(self) -> str:
        return f"{self.agent.slug}/{self.filename}"

    @property
    def path(self) -> Path:
        """The canvas file on disk (confined to its agent folder)."""
        return canvas_file(Path(self.agent.path), self.filename)


class CanvasNode(models.Model):
    canvas = models.ForeignKey(Canvas, on_delete=models.CASCADE, related_name="nodes")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="canvas_nodes")
    node_id = NulSafeCharField(max_length=300)
    position = models.IntegerField(default=0)
    title = NulSafeTextField(blank=True, default="")
    status = NulSafeCharField(max_length=100, blank=True, default="")
    summary = NulSafeTextField(blank=True, default="")
    timestamp = NulSafeCharField(max_length=64, blank=True, default="")
    shape = NulSafeCharField(max_length=30, blank=True, default="")
    subgraph = NulSafeCharField(max_length=300, blank=True, default="")

    class Meta:
        db_table = "canvases_canvasnode"  # the table it had in the canvases app
        ordering = ["canvas", "position"]
        indexes = [models.Index(fields=["agent", "node_id"], name="node_agent_id")]
