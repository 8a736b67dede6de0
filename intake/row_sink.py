"""Where ingested rows go: one statement per batch on SQLite, one open COPY on PostgreSQL.

On PostgreSQL the rows of an agent's session files stream into one COPY
(``intake.copy_stream``), each with its search document, so the server indexes one file
while Python parses the next. Whoever needs the database in between calls ``close()`` first.
"""

from __future__ import annotations

from django.db import connection

from agentfs.jsonl import ROW_FIELDS
from intake.copy_stream import CopyStream
from sessions import search_index
from sessions.models import Row

# in the order of the values of a row (``row_ingest._values``)
COLUMNS = (
    "agent_id",
    "session_id",
    "line_no",
    "offset",
    "normalized_id",
    *ROW_FIELDS,
    "extra",
    "placed",
)
TOOL_CALL, SUMMARY = COLUMNS.index("tool_call"), COLUMNS.index("summary")


class RowSink(CopyStream):
    def write(self, batch: list[tuple]) -> None:
        """Insert rows given as ``COLUMNS`` values, and index them for search."""
        if not batch:
            return
        quote = connection.ops.quote_name
        table = quote(Row._meta.db_table)
        names = ", ".join(quote(c) for c in COLUMNS)
        if connection.vendor == "postgresql":
            document = search_index.row_document
            self.write_rows(
                f"COPY {table} ({names}, search) FROM STDIN",
                ((*v, document(v[TOOL_CALL], v[SUMMARY])) for v in batch),
            )
            return
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {table} ({names}) VALUES ({', '.join(['%s'] * len(COLUMNS))})",
                batch,
            )
            # AUTOINCREMENT ids of one executemany under the write lock are consecutive.
            cursor.execute("SELECT last_insert_rowid()")
            (last,) = cursor.fetchone()
            search_index.rows_index_range(cursor, last - len(batch) + 1, last)
