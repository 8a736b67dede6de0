"""The Celery application; broker and backend come from settings (filesystem or Redis)."""

import os
import warnings

from celery import Celery
from celery.platforms import SecurityWarning

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memviz.settings")

app = Celery("memviz")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Celery warns of a worker running as root because a pickle message could then run code as root.
# memviz's workers take JSON only (CELERY_ACCEPT_CONTENT), and `make run` runs as the user who
# started it (root on a fresh machine): the warning would only be noise on every start.
if set(app.conf.accept_content) <= {"json", "application/json"}:
    warnings.filterwarnings("ignore", category=SecurityWarning)
