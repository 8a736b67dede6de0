"""Celery tasks for ingesting: thin wrappers that claim an IngestJob, beat, and record progress.

Idempotent, so late acknowledgement and redelivery are safe: a job already done, or running in
another live worker, is skipped; ingest itself only reads what changed since the last one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path

from celery import shared_task
from celery.signals import worker_ready

from intake.ingest import IngestProgress, ingest_path
from intake.jobs import JobBeat, job_claim, job_finish, start_recovery_thread
from memviz.public_errors import public_message
from sessions.job_words import job_note, job_said
from sessions.models import IngestJob

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


def _hold_for_tests(beat: JobBeat) -> None:
    hold = os.environ.get(HOLD_FILE_ENV)
    while hold and os.path.exists(hold):
        time.sleep(0.05)
    beat.progress(None)  # raises if the watchdog failed the job meanwhile


@shared_task(
    bind=True, acks_late=True, reject_on_worker_lost=True, name="sessions.tasks.ingest_task"
)
def ingest_task(self, job_id: int, full: bool = False) -> dict:
    job = job_claim(job_id)
    if job is None:
        return {"skipped": job_id}  # done already, or running in a live worker
    listener = local_progress.get()
    # Eager (the ingest command, `run`) or in a worker alike, only the beat's own connection
    # writes to the job row while the ingest runs (see JobBeat).
    beat = JobBeat(job_id, job.worker)

    def progress(p: IngestProgress) -> None:
        if listener is not None:
            listener(p)
        beat.progress(p)

    with beat:
        try:
            _hold_for_tests(beat)
            report = ingest_path(Path(job.path), progress=progress, full=full)
        except Exception as exc:
            said = beat.failure or job_note(public_message(exc))
            job_finish(job_id, job.worker, IngestJob.FAILED, **said)
            raise
    done = report.as_dict()
    latest = beat.latest
    total = latest.total if latest is not None else 0
    said = job_said("done")
    job_finish(job_id, job.worker, IngestJob.DONE, report=done, done=total, total=total, **said)
    return done
