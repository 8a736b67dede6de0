"""Celery tasks for ingesting; thin wrappers that record progress on an IngestJob."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path

from celery import shared_task
from django.utils import timezone

from sessions.ingest import IngestProgress, ingest_path
from sessions.models import IngestJob

PROGRESS_EVERY_S = 0.25
# A listener in the calling process (the ingest command's progress bar when it runs the task
# in-process with ``apply``); a worker process never has one.
local_progress: ContextVar[Callable[[IngestProgress], None] | None] = ContextVar(
    "local_progress", default=None
)


@shared_task(bind=True, acks_late=True)
def ingest_task(self, job_id: int) -> dict:  # type: ignore[no-untyped-def]
    job = IngestJob.objects.get(pk=job_id)
    job.status = IngestJob.RUNNING
    job.save(update_fields=["status"])
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
        IngestJob.objects.filter(pk=job_id).update(done=p.done, total=p.total, message=p.message)

    try:
        report = ingest_path(Path(job.path), progress=progress)
    except Exception as exc:
        IngestJob.objects.filter(pk=job_id).update(
            status=IngestJob.FAILED,
            message=f"{type(exc).__name__}: {exc}",
            finished_at=timezone.now(),
        )
        raise
    IngestJob.objects.filter(pk=job_id).update(
        status=IngestJob.DONE, report=report.as_dict(), finished_at=timezone.now(), message="done"
    )
    return report.as_dict()
