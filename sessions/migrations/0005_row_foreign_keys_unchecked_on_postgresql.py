"""Rows keep no database foreign keys on PostgreSQL (see ``Row`` in sessions/models.py).

The state says ``db_constraint=False``; only PostgreSQL drops its two constraints. SQLite keeps
them: its checks are cheap and in-process, and dropping them would rebuild a table of up to
millions of rows (and lose the triggers on it).
"""

import django.db.models.deletion
from django.db import migrations, models

FOREIGN_KEYS = (
    ("agent_id", "agent_sessions_agent"),
    ("session_id", "agent_sessions_agentsession"),
)


def drop(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname FROM pg_constraint "
            "WHERE conrelid = 'agent_sessions_row'::regclass AND contype = 'f'"
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f'ALTER TABLE agent_sessions_row DROP CONSTRAINT "{name}"')


def restore(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        for column, table in FOREIGN_KEYS:
            cursor.execute(
                f'ALTER TABLE agent_sessions_row ADD CONSTRAINT "agent_sessions_row_{column}_fk" '
                f"FOREIGN KEY ({column}) REFERENCES {table} (id) DEFERRABLE INITIALLY DEFERRED"
            )


class Migration(migrations.Migration):
    dependencies = [
        ("agent_sessions", "0004_agent_refused_links"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="row",
                    name="agent",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="rows",
                        to="agent_sessions.agent",
                    ),
                ),
                migrations.AlterField(
                    model_name="row",
                    name="session",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="rows",
                        to="agent_sessions.agentsession",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(drop, restore)],
        ),
    ]
