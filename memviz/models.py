"""The project's own tables: failed logins, for throttling (memviz/throttle.py)."""

from __future__ import annotations

from django.db import models


class LoginFailure(models.Model):
    """One failed password check, counted per account and per client address.

    Rows, not a cache: the web server, a second server process and the admin all see the same
    counts, on SQLite and PostgreSQL alike.
    """

    key = models.CharField(max_length=300)  # "pair:<address>|<username>" (memviz.throttle)
    at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["key", "at"], name="login_failure_key_at")]
