"""Dropping (and restoring) a table's foreign-key constraints on PostgreSQL only.

Migrations 0005 (rows) and 0006 (refs) state ``db_constraint=False`` for tables that ingest
fills by the hundred thousand: on PostgreSQL each such key was a deferred check per row at
commit. SQLite keeps its constraints: its checks are cheap and in-process, and dropping them
would rebuild a table of up to millions of rows (and lose the triggers on it).

(The migration loader skips modules whose name starts with "_".)
"""

from __future__ import annotations

from typing import Any


def drop_keys(table: str) -> Any:
    def drop(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(
                "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f'",
                [table],
            )
            for (name,) in cursor.fetchall():
                cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')

    return drop


def restore_keys(table: str, keys: tuple[tuple[str, str], ...]) -> Any:
    def restore(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        with schema_editor.connection.cursor() as cursor:
            for column, target in keys:
                cursor.execute(
                    f'ALTER TABLE {table} ADD CONSTRAINT "{table}_{column}_fk" FOREIGN KEY '
                    f"({column}) REFERENCES {target} (id) DEFERRABLE INITIALLY DEFERRED"
                )

    return restore
