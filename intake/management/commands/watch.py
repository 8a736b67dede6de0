"""``manage.py watch [ROOT]``: follow a data root and keep the index (and open pages) live.

Any number may run against one database: one is elected to watch, the others stand by and one
takes over within seconds when it dies (intake/watch.py ``watch_elected``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from intake.watch import watch_forever


class Command(BaseCommand):
    help = "Follow a data root (or one agent folder) and ingest every change as it happens."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", nargs="?", help="default: MEMVIZ_DATA_ROOT")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"] or settings.MEMVIZ_DATA_ROOT).expanduser().resolve()
        if not path.is_dir():
            raise CommandError(f"not a folder: {path}")
        watch_forever(path, stdout=self.stdout)
