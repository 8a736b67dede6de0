"""Template context for live pages: which agent and canvas the page shows (read by live.js)."""

from __future__ import annotations

from django.http import HttpRequest


def live(request: HttpRequest) -> dict[str, str]:
    match = getattr(request, "resolver_match", None)
    kwargs = match.kwargs if match is not None else {}
    return {"live_agent": kwargs.get("agent", ""), "live_canvas": kwargs.get("canvas", "")}
