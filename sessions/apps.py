"""The agent-sessions app; labelled apart from django.contrib.sessions."""

from django.apps import AppConfig


class AgentSessionsConfig(AppConfig):
    name = "sessions"
    label = "agent_sessions"
    verbose_name = "Agent sessions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created
        from django.db.models.signals import post_migrate

        connection_created.connect(_register_sqlite_functions)
        post_migrate.connect(_triggers_ensure, sender=self)


def _register_sqlite_functions(sender, connection, **kwargs) -> None:
    """The search index's SQL needs ``memviz_grams`` on every SQLite connection."""
    if connection.vendor == "sqlite":
        from sessions.search_index import sqlite_functions

        sqlite_functions(connection.connection)


def _triggers_ensure(sender, using, **kwargs) -> None:
    """Django rebuilds a SQLite table to alter it, dropping its triggers: put them back."""
    from django.db import connections

    from sessions.db_triggers import COUNTS, triggers_ensure

    connection = connections[using]
    if COUNTS in connection.introspection.table_names():
        triggers_ensure(connection)
