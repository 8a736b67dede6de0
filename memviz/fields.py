"""Model fields that store untrusted text safely on every database.

PostgreSQL refuses NUL (U+0000) in text and in jsonb, and tool output can hold it. Values are
indexed copies of files on disk, so a NUL is stored as U+FFFD; the files themselves are never
changed by this. A non-finite float (no JSON holds one; SQLite's JSON check raises on it) is
stored as its text.
"""

from __future__ import annotations

import math
from typing import Any

from django.db import models

NUL = "\x00"
REPLACEMENT = "\ufffd"


def nul_free(value: Any) -> Any:
    """``value`` with every NUL in its strings (keys too, recursively) replaced by U+FFFD."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, str):
        return value.replace(NUL, REPLACEMENT) if NUL in value else value
    if isinstance(value, dict):
        return {nul_free(k): nul_free(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [nul_free(v) for v in value]
    return value


class NulSafeCharField(models.CharField):
    def get_prep_value(self, value: Any) -> Any:
        return nul_free(super().get_prep_value(value))


class NulSafeTextField(models.TextField):
    def get_prep_value(self, value: Any) -> Any:
        return nul_free(super().get_prep_value(value))


class NulSafeJSONField(models.JSONField):
    def get_prep_value(self, value: Any) -> Any:
        return super().get_prep_value(nul_free(value))
