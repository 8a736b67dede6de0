"""One PostgreSQL COPY kept open across batches, so the server indexes while Python reads on.

A COPY per batch made Python wait at each batch's end for the server to finish, and then left
the server idle while Python read the next batch: on 2 cores the two never overlapped. Kept
open, the server indexes what it was sent (search documents, B-trees, triggers) while Python
parses the next rows or reads the next ref headers.

While the COPY is open the connection can run nothing else (psycopg refuses loudly): whoever
needs the database calls ``close()`` first. Leaving the ``with`` block on an exception aborts
the COPY, so none of its rows reach the table.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import ExitStack
from types import TracebackType
from typing import Any

from django.db import connection


class CopyStream:
    def __init__(self) -> None:
        self._open: ExitStack | None = None
        self._copy: Any = None
        self._statement = ""

    def write_rows(self, statement: str, rows: Iterable[tuple]) -> None:
        """Send rows to ``COPY ... FROM STDIN`` (a COPY of another statement is ended first)."""
        if self._copy is None or statement != self._statement:
            self.close()
            with ExitStack() as stack:
                cursor = stack.enter_context(connection.cursor())
                self._copy = stack.enter_context(cursor.cursor.copy(statement))
                self._open, self._statement = stack.pop_all(), statement
        write = self._copy.write_row
        for row in rows:
            write(row)

    def close(self) -> None:
        """End the COPY (waits for the server to take in what it was sent)."""
        self._finish(None, None, None)

    def _finish(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        opened, self._open, self._copy = self._open, None, None
        if opened is not None:
            opened.__exit__(kind, error, trace)

    def __enter__(self) -> CopyStream:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._finish(kind, error, trace)
