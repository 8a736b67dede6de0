"""Rows keep no database foreign keys on PostgreSQL (see ``Row`` in sessions/models.py).

The state says ``db_constraint=False``; only PostgreSQL drops its two constraints. SQLite keeps
them: its checks are cheap and in-process, and dropping them would rebuild a table of up to
millions of rows (and lose the triggers on it).
"""

import django.db.models.deletion
from django.db import migrations, models

from sessions.migrations._unchecked_keys import drop_keys, restore_keys

FOREIGN_KEYS = (
    ("agent_id", "agent_sessions_agent"),
    ("session_id", "agent_sessions_agentsession"),
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
            database_operations=[
                migrations.RunPython(
                    drop_keys("agent_sessions_row"),
                    restore_keys("agent_sessions_row", FOREIGN_KEYS),
                )
            ],
        ),
    ]
