"""``manage.py stream_token AGENT``: create (or replace) the push token of an agent; printed once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from intake.push_tokens import token_create


class Command(BaseCommand):
    help = "Create or replace the token a remote agent uses to push to /api/stream/<agent>/."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("agent", help="agent folder name under the push root")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            token = token_create(options["agent"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(token)
        self.stderr.write("Store it now: only its hash is kept (running this again replaces it).\n")
