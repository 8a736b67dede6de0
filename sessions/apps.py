"""The agent-sessions app; labelled apart from django.contrib.sessions."""

from django.apps import AppConfig


class AgentSessionsConfig(AppConfig):
    name = "sessions"
    label = "agent_sessions"
    verbose_name = "Agent sessions"
    default_auto_field = "django.db.models.BigAutoField"
