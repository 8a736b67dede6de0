"""``manage.py run``: the embedded default — migrate, ingest, a Celery worker, the watcher, the server.

Everything runs on this machine with no external server: SQLite, the filesystem Celery broker and
an in-memory Channels layer (Redis and PostgreSQL take over when REDIS_URL / DATABASE_URL are set).
Without Redis the watcher runs as a thread of the web server process, so its broadcasts reach the
browsers connected to it; with Redis it runs as ``manage.py watch`` in its own process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser


def celery_worker_command() -> list[str]:
    """The one Celery worker of the embedded default (the filesystem broker serves one)."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "memviz",
        "worker",
        "--pool=solo",
        "--concurrency=1",
        "--loglevel=WARNING",
    ]


class Command(BaseCommand):
    help = "Start memviz: migrate, ingest the data root, start a Celery worker and the web server."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=settings.BIND_HOST)
        parser.add_argument("--port", type=int, default=int(os.environ.get("MEMVIZ_PORT", 8000)))
        parser.add_argument("--no-worker", action="store_true", help="do not start a Celery worker")
        parser.add_argument("--no-watch", action="store_true", help="do not follow the data root")

    def handle(self, *args: Any, **options: Any) -> None:
        call_command("migrate", verbosity=0)
        from canvases.write_path import intents_recover_all

        if pending := intents_recover_all():  # changes a killed process left half done
            self.stdout.write(f"finished or dropped {pending} interrupted change(s)")
        root = Path(settings.MEMVIZ_DATA_ROOT)
        self.stdout.write(f"data root: {root}")
        if root.is_dir():
            call_command("ingest", str(root))
        children: list[subprocess.Popen] = []
        if not options["no_worker"]:
            children.append(subprocess.Popen(celery_worker_command(), cwd=settings.BASE_DIR))
        if not options["no_watch"] and root.is_dir() and not settings.REDIS_URL:
            # The in-memory channel layer only reaches browsers of this process, so the watcher
            # runs here, in a thread; with Redis it may live in its own process.
            from sessions.watch import start_watch_thread

            start_watch_thread(root, stdout=self.stdout)
        elif not options["no_watch"] and root.is_dir():
            children.append(
                subprocess.Popen(
                    [sys.executable, "manage.py", "watch", str(root)], cwd=settings.BASE_DIR
                )
            )
        self.stdout.write(f"memviz on http://{options['host']}:{options['port']}/")
        try:
            from daphne.cli import CommandLineInterface

            CommandLineInterface().run(
                ["-b", options["host"], "-p", str(options["port"]), "memviz.asgi:application"]
            )
        finally:
            for child in children:
                child.send_signal(signal.SIGTERM)
            for child in children:
                try:
                    child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    child.kill()
