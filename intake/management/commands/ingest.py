"""``manage.py ingest PATH``: index a data root or one agent folder, with a progress bar."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from intake.tasks import ingest_task, local_progress
from sessions.job_board import job_live
from sessions.models import IngestJob


def progress_bar(done: int, total: int, message: str, width: int = 30) -> str:
    """``done`` of ``total`` rows (the total an estimate until the ingest ends)."""
    filled = int(width * done / total) if total else width
    percent = int(100 * done / total) if total else 100
    rows = f"{done:,} of {total:,} rows"
    return f"\r[{'#' * filled}{'.' * (width - filled)}] {percent:3d}% {rows} {message[:40]:<40}"


def _write_bar(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


class Command(BaseCommand):
    help = "Ingest a context-offload data root (folder of agent folders) or one agent folder."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", nargs="?", help="default: MEMVIZ_DATA_ROOT")
        parser.add_argument(
            "--queue",
            action="store_true",
            help="hand the task to a running Celery worker and follow its progress",
        )
        parser.add_argument("--watch", action="store_true", help="keep following the folder")
        parser.add_argument(
            "--full",
            action="store_true",
            help="verify everything read before (checksum whole files, list every changed refs "
            "folder) instead of waiting for the periodic full pass",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"] or settings.MEMVIZ_DATA_ROOT).expanduser().resolve()
        if not path.is_dir():
            raise CommandError(f"not a folder: {path}")
        job = IngestJob.objects.create(path=str(path))
        if options["queue"]:
            ingest_task.delay(job.pk, full=options["full"])
            self._follow(job.pk)
        else:
            # The same Celery task, run in this process (no broker needed), drawing the bar.
            token = local_progress.set(
                lambda p: _write_bar(progress_bar(p.done, p.total, p.message))
            )
            try:
                result = ingest_task.apply(args=(job.pk,), kwargs={"full": options["full"]})
            finally:
                local_progress.reset(token)
            if result.failed():
                raise CommandError(f"ingest failed: {result.result}")
        job.refresh_from_db()
        self.stdout.write("")
        report = job.report
        self.stdout.write(
            self.style.SUCCESS(
                f"ingested {len(report.get('agents', []))} agents: {report.get('rows_added', 0)} rows "
                f"added, {report.get('files_read', 0)} files read, {report.get('files_skipped', 0)} "
                f"unchanged, {report.get('canvases_changed', 0)} canvases changed, "
                f"{report.get('problems', 0)} problems, in {report.get('seconds', 0)} s"
            )
        )
        if options["watch"]:
            from intake.watch import watch_forever

            watch_forever(path, stdout=self.stdout)

    def _follow(self, job_id: int) -> None:
        while True:
            job = job_live(IngestJob.objects.get(pk=job_id))
            sys.stderr.write(progress_bar(job.done, job.total, job.message))
            sys.stderr.flush()
            if job.finished:
                if job.status == IngestJob.FAILED:
                    raise CommandError(job.message)
                return
            time.sleep(0.3)
