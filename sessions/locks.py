"""The per-agent write lock: every change to an agent's files and index runs inside it.

One database transaction that locks the agent's row (`SELECT … FOR UPDATE` on PostgreSQL; on
SQLite the transaction begins IMMEDIATE, which takes the database's write lock). Taken first,
before any other lock (the folder `flock`s of the file writers come after it), so two writers
of one agent — a human edit, an undo, a resume, the watcher's ingest, a push — run one after
the other in every process, and revision numbers allocated inside it never collide.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import transaction

from sessions.models import Agent


@contextmanager
def agent_locked(agent_pk: int) -> Iterator[Agent]:
    """A fresh copy of the agent, locked until the enclosing transaction ends."""
    with transaction.atomic():
        yield Agent.objects.select_for_update().get(pk=agent_pk)
