"""What an ingest job shows now: its row, or on SQLite the newer figures its beat wrote to a file
next to the database (the beat cannot UPDATE the row while an ingest holds SQLite's one write
lock). Read by the pages and commands; written by ``intake.jobs``'s beat."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.utils import timezone

from sessions.models import IngestJob


def board_path(job_id: int) -> Path:
    """Where the beat of a job on SQLite writes its figures (``intake.jobs``)."""
    return Path(settings.VAR_DIR) / "job-progress" / f"{job_id}.json"


def board_read(job: IngestJob) -> tuple[datetime, dict] | None:
    """The progress file of a running job on SQLite, when its beat wrote it after the row."""
    if job.status != IngestJob.RUNNING or connection.vendor != "sqlite":
        return None
    try:
        data = json.loads(board_path(job.pk).read_text(encoding="utf-8"))
        at = datetime.fromisoformat(data["at"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if data.get("worker") != job.worker or (job.heartbeat_at and at <= job.heartbeat_at):
        return None
    return at, data


def beat_at(job: IngestJob) -> datetime | None:
    """When the job's beat last wrote (the row's heartbeat, or the newer progress file)."""
    board = board_read(job)
    return board[0] if board is not None else job.heartbeat_at


def job_live(job: IngestJob) -> IngestJob:
    """``job`` with the latest figures and heartbeat of its beat (on SQLite: those of the
    progress file when it is newer than the row; see ``_board_write``). Not saved."""
    board = board_read(job)
    if board is not None:
        job.heartbeat_at, data = board
        if "done" in data:
            job.done, job.total, job.message = data["done"], data["total"], data["message"]
            job.message_code, job.message_values = "", {}  # a progress note, not a code
    return job


def job_is_stale(job: IngestJob) -> bool:
    """Running, but silent for longer than the stale time (the page offers a retry)."""
    if job.status != IngestJob.RUNNING:
        return False
    stale = timezone.now() - timedelta(seconds=settings.MEMVIZ_JOB_STALE_SECONDS)
    last = beat_at(job)
    return last is None or last < stale
