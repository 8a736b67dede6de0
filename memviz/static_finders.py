"""Finds the hashed copies that collectstatic wrote, for servers that serve through the finders.

pytest-django's live_server (and runserver) answer /static/ requests with the staticfiles
finders, which know only the source names; the templates name the hashed copies in STATIC_ROOT.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, overload

from django.conf import settings
from django.contrib.staticfiles.finders import BaseFinder


class CollectedFilesFinder(BaseFinder):
    def check(self, **kwargs: Any) -> list:
        return []

    @overload
    def find(self, path: str, find_all: Literal[False] = False, **kwargs: Any) -> str | None: ...
    @overload
    def find(self, path: str, find_all: Literal[True], **kwargs: Any) -> list[str]: ...
    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> str | list[str] | None:
        root = Path(settings.STATIC_ROOT).resolve()
        candidate = (root / path).resolve()
        found = candidate.is_file() and root in candidate.parents
        if find_all or kwargs.get("all"):
            return [str(candidate)] if found else []
        return str(candidate) if found else None

    def list(self, ignore_patterns: Any) -> list:
        return []  # collectstatic must never collect its own output
