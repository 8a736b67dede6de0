"""Refs keep no database foreign key on PostgreSQL (see ``Ref`` in sessions/models.py).

The state says ``db_constraint=False``; only PostgreSQL drops the constraint (see
``_unchecked_keys``).
"""

import django.db.models.deletion
from django.db import migrations, models

from sessions.migrations._unchecked_keys import drop_keys, restore_keys


class Migration(migrations.Migration):
    dependencies = [
        ("agent_sessions", "0005_row_foreign_keys_unchecked_on_postgresql"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="ref",
                    name="agent",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="refs",
                        to="agent_sessions.agent",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunPython(
                    drop_keys("agent_sessions_ref"),
                    restore_keys("agent_sessions_ref", (("agent_id", "agent_sessions_agent"),)),
                )
            ],
        ),
    ]
