"""Refuse request paths and query strings holding control characters, with a clear 400.

A NUL in ``?q=`` reached the database and came back as a 500 (PostgreSQL refuses NUL in text;
SQLite's FTS chokes on it), and every view reading a parameter would have to repeat the check.
No path or parameter of memviz has a use for C0 controls other than tab and newline, nor DEL.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def request_problem(path: str, params: dict[str, list[str]]) -> str | None:
    """Why this path and these query parameters are refused, or None."""
    if CONTROL.search(path):
        return "control characters in the request path"
    for key, values in params.items():
        if CONTROL.search(key) or any(CONTROL.search(v) for v in values):
            return f"control characters in the query parameter {key!r}"[:200]
    return None


class OddRequestMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = request_problem(request.path, dict(request.GET.lists()))
        if problem is None:
            return self.get_response(request)
        return JsonResponse({"error": problem, "status": 400}, status=400)
