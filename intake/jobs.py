"""Ingest jobs that survive a dead worker: claim, heartbeat, recovery of silent jobs, retry.

The filesystem broker deletes a message when a worker takes it, so a worker killed mid-task
loses it; Redis redelivers it only after its visibility timeout. memviz therefore keeps the truth
in the job row: a running task beats every MEMVIZ_JOB_HEARTBEAT_SECONDS. ``jobs_recover`` (run by
every worker at start and then periodically) re-queues a running job whose worker is gone (a dead
pid on this host, or no heartbeat for MEMVIZ_JOB_STALE_SECONDS), failing it for good after
MEMVIZ_JOB_MAX_ATTEMPTS; a failed job has a retry button. Claiming is one conditional UPDATE,
so a job redelivered twice still runs once at a time, and ingest is incremental, so re-running
an interrupted one is safe.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import (
    DEFAULT_DB_ALIAS,
    DatabaseError,
    close_old_connections,
    connection,
    connections,
    transaction,
)
from django.db.models import F, Q
from django.utils import timezone

from sessions.job_board import beat_at, board_path
from sessions.job_words import JobSaid, job_note, job_said
from sessions.models import IngestJob

log = logging.getLogger(__name__)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# The task's name on the wire: kept from before the task moved to intake/, so a job queued by
# an older memviz is still run after an upgrade.
INGEST_TASK = "sessions.tasks.ingest_task"
PROGRESS_EVERY_S = 0.25  # how often the beat writes progress that moved


def job_dispatch(job: IngestJob) -> None:
    """Queue the job's task once the surrounding transaction commits.

    By the task's registered name, so this module does not import the task module (which
    imports this one): the Celery app resolves it (and runs it in-process when eager).
    """
    from memviz.celery import app

    if INGEST_TASK not in app.tasks:
        app.loader.import_default_modules()  # the apps' tasks modules (autodiscovery)
    task = app.tasks[INGEST_TASK]
    job_id = job.pk
    transaction.on_commit(lambda: task.delay(job_id))


def job_run_here(path: Any) -> IngestJob:
    """Ingest ``path`` in this thread, as a job: its progress shows on every web process's home
    page (the first ingest of a large data root, which ``run`` no longer waits for)."""
    from memviz.celery import app

    if INGEST_TASK not in app.tasks:
        app.loader.import_default_modules()
    job = IngestJob.objects.create(path=str(path))
    app.tasks[INGEST_TASK].apply(args=(job.pk,), throw=True)
    return job


def job_claim(job_id: int) -> IngestJob | None:
    """Mark the job running for this process; None when another live worker has it or it is over."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.MEMVIZ_JOB_STALE_SECONDS)
    free = Q(status=IngestJob.PENDING) | Q(
        Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True), status=IngestJob.RUNNING
    )
    claimed = (
        IngestJob.objects.filter(free, pk=job_id)
        .exclude(attempts__gte=settings.MEMVIZ_JOB_MAX_ATTEMPTS, status=IngestJob.RUNNING)
        .update(
            status=IngestJob.RUNNING,
            heartbeat_at=now,
            worker=worker_name(),
            attempts=F("attempts") + 1,
            finished_at=None,
        )
    )
    return IngestJob.objects.get(pk=job_id) if claimed else None


class JobStalled(Exception):
    """Raised in the ingest at its next progress report once the watchdog failed the job."""


@contextlib.contextmanager
def short_lock_wait(seconds: float = 1.0) -> Iterator[None]:
    """A transaction that gives up (OperationalError) after waiting ``seconds`` for a lock.

    For writes to a job row from threads that must never hang on it: the recovery pass, the
    retry button, the beat. On PostgreSQL a wait for the row ends; on SQLite, a wait for the
    database's write lock (which an ingest holds for a whole agent). The write is tried again
    on the next pass instead of freezing its thread.
    """
    millis = int(seconds * 1000)
    if connection.vendor != "sqlite":
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(f"SET LOCAL lock_timeout = '{millis}ms'")
            yield
        return
    usual = int(connection.settings_dict["OPTIONS"].get("timeout", 5) * 1000)
    with connection.cursor() as cursor:
        cursor.execute(f"PRAGMA busy_timeout = {millis}")  # BEGIN IMMEDIATE waits this long
    try:
        with transaction.atomic():
            yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {usual}")


def _board_write(job_id: int, worker: str, latest: Any) -> None:
    """SQLite: the beat's figures in a file next to the database (replaced whole, atomically).

    An ingest holds SQLite's only write lock for a whole agent, so the beat's UPDATE waits
    until the agent is done: a single large agent showed 0 % and no heartbeat (the page called
    its worker dead) until it ended. Every process that can open a SQLite database shares its
    machine, so a file there is seen by all of them; ``sessions.job_board.job_live`` reads it.
    """
    path = board_path(job_id)
    data = {"worker": worker, "at": timezone.now().isoformat()}
    if latest is not None:
        data.update(done=latest.done, total=latest.total, message=latest.message)
    try:
        path.parent.mkdir(exist_ok=True)
        temp = path.with_suffix(f".{os.getpid()}.tmp")
        temp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temp, path)
    except OSError as exc:  # a full disk delays the figures, never the ingest
        log.debug("job %s: progress file not written (%s)", job_id, exc)


def _board_clear(job_id: int) -> None:
    with contextlib.suppress(OSError):
        board_path(job_id).unlink()


class JobBeat:
    """The job row's only writer while its ingest runs: progress, heartbeat, and a watchdog.

    The ingest reports progress to ``progress()``, which only keeps it in memory: the ingest's
    connection may be inside a COPY (which allows no other statement: the process waited on
    itself) or inside the agent's transaction (an UPDATE there locks the job row until commit,
    freezing every other writer of the row). A thread with its own connection, in autocommit,
    writes the latest progress and the heartbeat (on SQLite, whose write lock the ingest holds,
    to a file first: ``_board_write``). If the progress has not moved for
    MEMVIZ_JOB_STALL_SECONDS, it fails the job (the page offers Retry), cancels the ingest's
    statement on PostgreSQL (a wait on a lock ends) and makes the next report raise.
    """

    def __init__(self, job_id: int, worker: str) -> None:
        self.job_id = job_id
        self.worker = worker
        self.latest: Any = None  # an IngestProgress
        self.moved_at = time.monotonic()
        self.failure: JobSaid | None = None  # what the watchdog said, once it failed the job
        self._quiet = False  # one warning for a beat not written, not one per beat
        self._ingest_db = connections[DEFAULT_DB_ALIAS]  # the calling thread's connection
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"memviz-job-{job_id}-beat", daemon=True
        )

    def progress(self, latest: Any) -> None:
        """Called by the ingest (any state of its connection): remember, never query."""
        if self.failure is not None:
            raise JobStalled(self.failure["message"])
        self.latest = latest
        self.moved_at = time.monotonic()

    def __enter__(self) -> JobBeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        written, beat_at = None, 0.0
        try:
            while not self._stop.wait(PROGRESS_EVERY_S):
                now = time.monotonic()
                if now - self.moved_at > settings.MEMVIZ_JOB_STALL_SECONDS:
                    self._stalled(now - self.moved_at)
                    return
                latest = self.latest
                if latest is written and now - beat_at < settings.MEMVIZ_JOB_HEARTBEAT_SECONDS:
                    continue
                if self._write(latest):
                    written, beat_at = latest, now
        finally:
            connection.close()

    def _write(self, latest: Any, **fields: Any) -> int:
        sqlite = connection.vendor == "sqlite"
        if sqlite and not fields:
            _board_write(self.job_id, self.worker, latest)
        if latest is not None:
            fields.update(done=latest.done, total=latest.total, **job_note(latest.message))
        try:
            # SQLite: the file has the figures; the row is written when the ingest lets it
            with short_lock_wait(0.1 if sqlite and "status" not in fields else 1.0):
                return IngestJob.objects.filter(
                    pk=self.job_id, status=IngestJob.RUNNING, worker=self.worker
                ).update(heartbeat_at=timezone.now(), **fields)
        except DatabaseError as exc:  # a busy database (SQLite: the ingest's write lock)
            # delays a beat. SQLite's is expected (the console stays quiet); one line otherwise.
            expected = self._quiet or connection.vendor == "sqlite"
            log.log(
                logging.DEBUG if expected else logging.WARNING,
                "job %s: progress not written (%s)",
                self.job_id,
                exc,
            )
            self._quiet = True
            return int(sqlite and "status" not in fields)  # the file has it

    def _stalled(self, seconds: float) -> None:
        if self.latest is not None:
            self.failure = job_said("stalled_at", seconds=int(seconds), at=self.latest.message)
        else:
            self.failure = job_said("stalled", seconds=int(seconds))
        log.error("job %s: %s", self.job_id, self.failure["message"])
        failed = {"status": IngestJob.FAILED, "finished_at": timezone.now()}
        while not self._write(None, **self.failure, **failed) and self._still_mine():
            if self._stop.wait(settings.MEMVIZ_JOB_HEARTBEAT_SECONDS):
                break
        raw = self._ingest_db.connection
        if self._ingest_db.vendor == "postgresql" and raw is not None:
            with contextlib.suppress(Exception):
                raw.cancel_safe(timeout=5)  # ends the ingest's wait on a lock (or its COPY)

    def _still_mine(self) -> bool:
        try:
            return IngestJob.objects.filter(
                pk=self.job_id, status=IngestJob.RUNNING, worker=self.worker
            ).exists()
        except DatabaseError:
            return True


def job_finish(job_id: int, worker: str, status: str, **fields: Any) -> int:
    """The task's last write: only while the job is still this worker's and running (not
    after the watchdog failed it, nor once recovery handed it to another worker)."""
    with short_lock_wait(5.0):
        finished = IngestJob.objects.filter(
            pk=job_id, status=IngestJob.RUNNING, worker=worker
        ).update(status=status, finished_at=timezone.now(), **fields)
    _board_clear(job_id)
    return finished


def _pid_gone(worker: str) -> bool:
    """True when ``worker`` ran on this host and its process no longer exists."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def jobs_recover() -> list[int]:
    """Re-queue (or fail, after too many attempts) running jobs whose worker is gone.

    Also re-queues pending jobs whose message was lost (taken by a worker that died before it
    claimed them): pending for longer than the stale time while no job is running. A job row
    locked elsewhere is left for the next pass (``short_lock_wait``): this never hangs.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.MEMVIZ_JOB_STALE_SECONDS)
    requeued: list[int] = []
    for job in IngestJob.objects.filter(status=IngestJob.RUNNING):
        last = beat_at(job)
        silent = last is None or last < stale
        if not (silent or _pid_gone(job.worker)):
            continue
        mine = IngestJob.objects.filter(pk=job.pk, status=IngestJob.RUNNING, worker=job.worker)
        moved = 0
        with contextlib.suppress(DatabaseError), short_lock_wait():
            if job.attempts >= settings.MEMVIZ_JOB_MAX_ATTEMPTS:
                said = job_said("worker_died_failed", attempts=job.attempts)
                mine.update(status=IngestJob.FAILED, finished_at=now, **said)
            else:
                moved = mine.filter(heartbeat_at=job.heartbeat_at).update(
                    status=IngestJob.PENDING,
                    **job_said("worker_died_queued"),
                    heartbeat_at=now,
                )
        if moved:  # queued once the write committed (eager: run here, outside the short wait)
            job_dispatch(job)
            requeued.append(job.pk)
    busy = IngestJob.objects.filter(status=IngestJob.RUNNING, heartbeat_at__gte=stale).exists()
    if not busy:
        for job in IngestJob.objects.filter(status=IngestJob.PENDING, created_at__lt=stale).exclude(
            heartbeat_at__gte=stale
        ):
            moved = 0
            with contextlib.suppress(DatabaseError), short_lock_wait():
                # heartbeat_at of a pending job: when it was last queued
                moved = IngestJob.objects.filter(pk=job.pk, status=IngestJob.PENDING).update(
                    heartbeat_at=now
                )
            if moved:
                job_dispatch(job)
                requeued.append(job.pk)
    if requeued:
        log.warning("re-queued interrupted ingest jobs %s", requeued)
    return requeued


def job_retry(job: IngestJob) -> bool:
    """Queue a failed or stale job again (the retry button); False when it is neither, or
    when its row is locked elsewhere for more than a second (the button answers at once)."""
    stale = timezone.now() - timedelta(seconds=settings.MEMVIZ_JOB_STALE_SECONDS)
    retryable = Q(status=IngestJob.FAILED) | Q(
        Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True), status=IngestJob.RUNNING
    )
    try:
        with short_lock_wait():
            moved = IngestJob.objects.filter(retryable, pk=job.pk).update(
                status=IngestJob.PENDING,
                **job_said("queued_again"),
                attempts=0,
                heartbeat_at=timezone.now(),
                finished_at=None,
            )
    except DatabaseError:
        log.warning("job %s: retry refused, its row is locked", job.pk, exc_info=True)
        return False
    if moved:
        job_dispatch(job)
    return bool(moved)


def start_recovery_thread(interval: float | None = None) -> threading.Thread:
    """In a worker: recover now, then every ``interval`` seconds (default: half the stale time)."""
    every = interval or max(1.0, settings.MEMVIZ_JOB_STALE_SECONDS / 2)

    def loop() -> None:
        while True:
            try:
                close_old_connections()
                jobs_recover()
            except DatabaseError as exc:  # an outage or a busy database: one line, not a trace
                log.warning("job recovery pass failed: %s", exc)
            except Exception:  # noqa: BLE001 - recovery must outlive any one bad pass
                log.warning("job recovery pass failed", exc_info=True)
            finally:
                connection.close()
            threading.Event().wait(every)

    thread = threading.Thread(target=loop, name="memviz-job-recovery", daemon=True)
    thread.start()
    return thread


def ingest_start(path: Path) -> IngestJob:
    """A new job ingesting `path`, queued (or run in-process without a broker)."""
    job = IngestJob.objects.create(path=str(path))
    job_dispatch(job)
    return job
