"""The Celery application; broker and backend come from settings (filesystem or Redis)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memviz.settings")

app = Celery("memviz")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
