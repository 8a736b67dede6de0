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
import logging
import os
import socket
import threading
from collections.abc import Iterator
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from sessions.models import IngestJob

log = logging.getLogger(__name__)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


INGEST_TASK = "sessions.tasks.ingest_task"


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


@contextlib.contextmanager
def heartbeat(job_id: int) -> Iterator[None]:
    """Beat for the job from a thread while the body runs (a long read of one file included)."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(settings.MEMVIZ_JOB_HEARTBEAT_SECONDS):
                try:
                    IngestJob.objects.filter(pk=job_id, status=IngestJob.RUNNING).update(
                        heartbeat_at=timezone.now()
                    )
                except Exception:  # noqa: BLE001 - a busy database delays one beat, no more
                    log.warning("job %s: heartbeat not written", job_id, exc_info=True)
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"memviz-job-{job_id}-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


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
    claimed them): pending for longer than the stale time while no job is running.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.MEMVIZ_JOB_STALE_SECONDS)
    requeued: list[int] = []
    for job in IngestJob.objects.filter(status=IngestJob.RUNNING):
        silent = job.heartbeat_at is None or job.heartbeat_at < stale
        if not (silent or _pid_gone(job.worker)):
            continue
        if job.attempts >= settings.MEMVIZ_JOB_MAX_ATTEMPTS:
            message = f"interrupted {job.attempts} times (the worker died); press retry"
            IngestJob.objects.filter(pk=job.pk, status=IngestJob.RUNNING, worker=job.worker).update(
                status=IngestJob.FAILED, message=message, finished_at=now
            )
            continue
        with transaction.atomic():
            moved = IngestJob.objects.filter(
                pk=job.pk,
                status=IngestJob.RUNNING,
                worker=job.worker,
                heartbeat_at=job.heartbeat_at,
            ).update(
                status=IngestJob.PENDING,
                message="interrupted (the worker died); queued again",
                heartbeat_at=now,
            )
            if moved:
                job_dispatch(job)
                requeued.append(job.pk)
    busy = IngestJob.objects.filter(status=IngestJob.RUNNING, heartbeat_at__gte=stale).exists()
    if not busy:
        for job in IngestJob.objects.filter(status=IngestJob.PENDING, created_at__lt=stale).exclude(
            heartbeat_at__gte=stale
        ):
            with transaction.atomic():
                # heartbeat_at of a pending job: when it was last queued
                if IngestJob.objects.filter(pk=job.pk, status=IngestJob.PENDING).update(
                    heartbeat_at=now
                ):
                    job_dispatch(job)
                    requeued.append(job.pk)
    if requeued:
        log.warning("re-queued interrupted ingest jobs %s", requeued)
    return requeued


def job_retry(job: IngestJob) -> bool:
    """Queue a failed or stale job again (the retry button); False when it is neither."""
    stale = timezone.now() - timedelta(seconds=settings.MEMVIZ_JOB_STALE_SECONDS)
    retryable = Q(status=IngestJob.FAILED) | Q(
        Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True), status=IngestJob.RUNNING
    )
    with transaction.atomic():
        moved = IngestJob.objects.filter(retryable, pk=job.pk).update(
            status=IngestJob.PENDING,
            message="queued again",
            attempts=0,
            heartbeat_at=timezone.now(),
            finished_at=None,
        )
        if moved:
            job_dispatch(job)
    return bool(moved)


def job_is_stale(job: IngestJob) -> bool:
    """Running, but silent for longer than the stale time (the page offers a retry)."""
    if job.status != IngestJob.RUNNING:
        return False
    stale = timezone.now() - timedelta(seconds=settings.MEMVIZ_JOB_STALE_SECONDS)
    return job.heartbeat_at is None or job.heartbeat_at < stale


def start_recovery_thread(interval: float | None = None) -> threading.Thread:
    """In a worker: recover now, then every ``interval`` seconds (default: half the stale time)."""
    every = interval or max(1.0, settings.MEMVIZ_JOB_STALE_SECONDS / 2)

    def loop() -> None:
        while True:
            try:
                close_old_connections()
                jobs_recover()
            except Exception:  # noqa: BLE001 - recovery must outlive a busy database
                log.warning("job recovery pass failed", exc_info=True)
            finally:
                connection.close()
            threading.Event().wait(every)

    thread = threading.Thread(target=loop, name="memviz-job-recovery", daemon=True)
    thread.start()
    return thread
