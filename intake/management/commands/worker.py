"""``manage.py worker``: a Celery worker kept running — `make worker` on each worker machine.

Celery's own worker can exit for good when its broker goes away at the wrong moment (kombu's
"Unrecoverable error" on a Redis restart, seen in the deploy guide's trial), so this command
starts it as a child and starts it again whenever it exits (`run`'s Supervisor: a child that
keeps dying is restarted more slowly). SIGTERM or Ctrl-C stops the worker and this command.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from intake.management.commands.run import Supervisor, celery_worker_command


class Command(BaseCommand):
    help = "Run a Celery worker and start it again whenever it exits."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", default="w1", help="unique among the workers of a machine")
        parser.add_argument("--concurrency", type=int, default=2, help="jobs run at once")
        parser.add_argument("--loglevel", default="WARNING")

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        supervisor = Supervisor(self.stdout)
        command = celery_worker_command(
            concurrency=options["concurrency"], name=options["name"], loglevel=options["loglevel"]
        )
        supervisor.start("celery worker", command)
        try:
            stop.wait()
        finally:
            supervisor.stop()
