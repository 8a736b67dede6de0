"""Keeps the search indexes in step with rows, canvas nodes and refs (write side of search).

SQLite: contentless FTS5 tables (a trigram index and a CJK-bigram index per kind, see
``sessions.search_terms``). A contentless table can only forget a document when given the
exact text it indexed, so every delete or change goes through here *before* the row is gone.
PostgreSQL: tsvector documents built in Python (rows get theirs in the same COPY that inserts
them, in ``intake.ingest``); deletes follow by cascade.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection as default_connection

from sessions.search_terms import grams_text, node_body, tsvector_literal

ROW_BODY_SQL = "tool_call || char(10) || summary || char(10)"
NODE_BODY_SQL = "node_id || char(10) || title || char(10) || summary || char(10)"
CHUNK = 500


def sqlite_functions(dbapi_connection: Any) -> None:
    """Register ``memviz_grams(text)`` (the CJK bigram document) on a sqlite3 connection."""
    dbapi_connection.create_function("memviz_grams", 1, grams_text, deterministic=True)


def _chunks(values: Sequence[int]) -> Iterable[Sequence[int]]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


def _in(values: Sequence[int]) -> str:
    return ", ".join(["%s"] * len(values))


# --- rows --------------------------------------------------------------------------------


def rows_index_range(cursor: Any, first_id: int, last_id: int) -> None:
    """SQLite: index the rows just inserted with ids ``first_id..last_id``."""
    cursor.execute(
        f"INSERT INTO agent_sessions_row_fts (rowid, body) SELECT id, {ROW_BODY_SQL} "
        "FROM agent_sessions_row WHERE id BETWEEN %s AND %s",
        [first_id, last_id],
    )
    # An empty document adds nothing; filtering it out would call memviz_grams twice a row.
    cursor.execute(
        f"INSERT INTO agent_sessions_row_grams (rowid, body) SELECT id, memviz_grams({ROW_BODY_SQL}) "
        "FROM agent_sessions_row WHERE id BETWEEN %s AND %s",
        [first_id, last_id],
    )


def rows_unindex_where(cursor: Any, where: str, params: list[Any]) -> None:
    """SQLite: forget the rows matching ``where`` (call before deleting them)."""
    cursor.execute(
        "INSERT INTO agent_sessions_row_fts (agent_sessions_row_fts, rowid, body) "
        f"SELECT 'delete', id, {ROW_BODY_SQL} FROM agent_sessions_row WHERE {where}",
        params,
    )
    cursor.execute(
        "INSERT INTO agent_sessions_row_grams (agent_sessions_row_grams, rowid, body) "
        f"SELECT 'delete', id, memviz_grams({ROW_BODY_SQL}) FROM agent_sessions_row WHERE {where}",
        params,
    )


def rows_unindex_session(session_pk: int) -> None:
    if default_connection.vendor == "sqlite":
        with default_connection.cursor() as cursor:
            rows_unindex_where(cursor, "session_id = %s", [session_pk])


def row_document(tool_call: str, summary: str) -> str:
    """PostgreSQL: the tsvector input of one row (sent in the COPY that inserts it)."""
    return tsvector_literal(f"{tool_call}\n{summary}")


# --- canvas nodes ------------------------------------------------------------------------


def nodes_unindex(pks: Sequence[int]) -> None:
    """Forget these nodes as they are now (call before changing or deleting them)."""
    if not pks:
        return
    with default_connection.cursor() as cursor:
        for chunk in _chunks(pks):
            where = f"id IN ({_in(chunk)})"
            if default_connection.vendor != "sqlite":
                cursor.execute(
                    f"DELETE FROM agent_sessions_nodesearch WHERE node_id IN ({_in(chunk)})",
                    list(chunk),
                )
                continue
            cursor.execute(
                "INSERT INTO agent_sessions_node_fts (agent_sessions_node_fts, rowid, body) "
                f"SELECT 'delete', id, {NODE_BODY_SQL} FROM canvases_canvasnode WHERE {where}",
                list(chunk),
            )
            cursor.execute(
                "INSERT INTO agent_sessions_node_grams (agent_sessions_node_grams, rowid, body) "
                f"SELECT 'delete', id, g FROM (SELECT id, memviz_grams({NODE_BODY_SQL}) AS g "
                f"FROM canvases_canvasnode WHERE {where}) WHERE g <> ''",
                list(chunk),
            )


def nodes_index(pks: Sequence[int], connection: Any = None) -> None:
    """Index these nodes as they are now (after creating or changing them)."""
    connection = connection or default_connection
    if not pks:
        return
    with connection.cursor() as cursor:
        for chunk in _chunks(pks):
            where = f"id IN ({_in(chunk)})"
            if connection.vendor == "sqlite":
                cursor.execute(
                    "INSERT INTO agent_sessions_node_fts (rowid, body) "
                    f"SELECT id, {NODE_BODY_SQL} FROM canvases_canvasnode WHERE {where}",
                    list(chunk),
                )
                cursor.execute(
                    "INSERT INTO agent_sessions_node_grams (rowid, body) SELECT id, g FROM ("
                    f"SELECT id, memviz_grams({NODE_BODY_SQL}) AS g FROM canvases_canvasnode "
                    f"WHERE {where}) WHERE g <> ''",
                    list(chunk),
                )
                continue
            cursor.execute(
                f"SELECT id, node_id, title, summary FROM canvases_canvasnode WHERE {where}",
                list(chunk),
            )
            docs = [(pk, tsvector_literal(node_body(n, t, s))) for pk, n, t, s in cursor.fetchall()]
            cursor.executemany(
                "INSERT INTO agent_sessions_nodesearch (node_id, doc) VALUES (%s, %s::tsvector) "
                "ON CONFLICT (node_id) DO UPDATE SET doc = EXCLUDED.doc",
                docs,
            )


# --- refs (MEMVIZ_INDEX_REF_TEXT) ----------------------------------------------------------


def refs_index(items: Sequence[tuple[int, str]]) -> None:
    """Index ref texts: (ref pk, text) pairs."""
    if not items:
        return
    with default_connection.cursor() as cursor:
        if default_connection.vendor == "sqlite":
            cursor.executemany(
                "INSERT INTO agent_sessions_ref_fts (rowid, body) VALUES (%s, %s)",
                [(pk, text) for pk, text in items],
            )
            grams = [(pk, g) for pk, text in items if (g := grams_text(text))]
            cursor.executemany(
                "INSERT INTO agent_sessions_ref_grams (rowid, body) VALUES (%s, %s)", grams
            )
        else:
            cursor.executemany(
                "UPDATE agent_sessions_ref SET search = %s::tsvector WHERE id = %s",
                [(tsvector_literal(text), pk) for pk, text in items],
            )


def refs_unindex(pks: Sequence[int]) -> None:
    """Forget refs (before re-indexing a changed one; a deleted ref's row takes it along on
    PostgreSQL, its FTS5 entry is removed here)."""
    if default_connection.vendor != "sqlite" or not pks:
        return
    with default_connection.cursor() as cursor:
        for chunk in _chunks(pks):
            for table in ("agent_sessions_ref_fts", "agent_sessions_ref_grams"):
                cursor.execute(f"DELETE FROM {table} WHERE rowid IN ({_in(chunk)})", list(chunk))


# --- everything (migration, repair) --------------------------------------------------------


def reindex_all(connection: Any = None) -> None:
    """Rebuild the row and node indexes from the tables (ref texts are not kept: re-ingest)."""
    connection = connection or default_connection
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            for kind in ("row", "node"):
                for index in ("fts", "grams"):
                    table = f"agent_sessions_{kind}_{index}"
                    cursor.execute(f"INSERT INTO {table} ({table}) VALUES ('delete-all')")
            cursor.execute(
                "SELECT COALESCE(MIN(id), 0), COALESCE(MAX(id), 0) FROM agent_sessions_row"
            )
            low, high = cursor.fetchone()
            if high:
                rows_index_range(cursor, low, high)
            cursor.execute(
                f"INSERT INTO agent_sessions_node_fts (rowid, body) "
                f"SELECT id, {NODE_BODY_SQL} FROM canvases_canvasnode"
            )
            cursor.execute(
                "INSERT INTO agent_sessions_node_grams (rowid, body) SELECT id, g FROM ("
                f"SELECT id, memviz_grams({NODE_BODY_SQL}) AS g FROM canvases_canvasnode) "
                "WHERE g <> ''"
            )
            return
        cursor.execute("SELECT id, tool_call, summary FROM agent_sessions_row WHERE search IS NULL")
        while batch := cursor.fetchmany(5000):
            with connection.cursor() as writer:
                writer.executemany(
                    "UPDATE agent_sessions_row SET search = %s::tsvector WHERE id = %s",
                    [(row_document(t, s), pk) for pk, t, s in batch],
                )
        cursor.execute("SELECT id FROM canvases_canvasnode")
        pks = [pk for (pk,) in cursor.fetchall()]
    nodes_index(pks, connection)
