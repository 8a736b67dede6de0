"""Intake: what brings an agent's files into the index — ingest, the watcher, the push stream,
uploads, ingest jobs and their Celery task, and the commands that run them (`run`, `ingest`,
`watch`, `worker`, `stream_token`).

Writes the index (`sessions`) and indexes canvases through their write path (`canvases`)."""

from django.apps import AppConfig


class IntakeConfig(AppConfig):
    name = "intake"
    verbose_name = "Intake"
