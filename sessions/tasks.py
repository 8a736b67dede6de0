"""Celery tasks for ingesting: thin wrappers that claim an IngestJob, beat, and record progress.

Idempotent, so late acknowledgement and redelivery are safe: a job already done, or running in
another live worker, is skipped; ingest itself only reads what changed since the last one.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path

from celery import shared_task
from celery.signals import worker_ready
from django.utils import timezone

from memviz.public_errors import public_message
from sessions.ingest import IngestProgress, ingest_path
from sessions.jobs import heartbeat, job_claim, start_recovery_thread
from sessions.models import IngestJob

PROGRESS_EVERY_S = 0.25
# Test-only: while this file exists a claimed task waits before ingesting, so a test can kill
# the worker mid-task deterministically. Unset in every real deployment.
HOLD_FILE_ENV = "MEMVIZ_TEST_HOLD_FILE"
# A listener in the calling process (the ingest command's progress bar when it runs the task
# in-process with ``apply``); a worker process never has one.
local_progress: ContextVar[Callable[[IngestProgress], None] | None] = ContextVar(
    "local_progress", default=None
)


@worker_ready.connect
def _recover_on_start(**_: object) -> None:
    start_recovery_thread()


def _hold_for_tests() -> None:
    hold = os.environ.get(HOLD_FILE_ENV)
    while hold and os.path.exists(hold):
        time.sleep(0.05)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, name="sessions.tasks.ingest_task")
def ingest_task(self, job_id: int) -> dict:  # type: ignore[no-untyped-def]
    job = job_claim(job_id)
    if job is None:
        return {"skipped": job_id}  # done already, or running in a live worker
    last = 0.0
    listener = local_progress.get()

    def progress(p: IngestProgress) -> None:
        nonlocal last
        if listener is not None:
            listener(p)
        now = time.monotonic()
        if now - last < PROGRESS_EVERY_S and p.done < p.total:
            return
        last = now
        IngestJob.objects.filter(pk=job_id).update(
            done=p.done, total=p.total, message=p.message, heartbeat_at=timezone.now()
        )

    # Eager (the ingest command, the tests) runs in the caller's process: nothing to beat for.
    beating = contextlib.nullcontext() if self.request.is_eager else heartbeat(job_id)
    with beating:
        _hold_for_tests()
        try:
            report = ingest_path(Path(job.path), progress=progress)
        except Exception as exc:
            IngestJob.objects.filter(pk=job_id).update(
                status=IngestJob.FAILED,
                message=public_message(exc),
                finished_at=timezone.now(),
            )
            raise
    IngestJob.objects.filter(pk=job_id).update(
        status=IngestJob.DONE, report=report.as_dict(), finished_at=timezone.now(), message="done"
    )
    return report.as_dict()
