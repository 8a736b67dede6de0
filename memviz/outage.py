"""A database or Redis that does not answer: 503 with a plain message, at once, on every page.

Without this, a request during a PostgreSQL outage waited 20 s for a pooled connection and then
answered a generic HTML 500 (JSON clients and the login form alike). Settings bound the waits
(connect and pool timeouts, the broker's connect timeout); this module turns the error into a
503 that says what is down and that it heals by itself. Two entry points, because Django turns
an exception into a response where it is raised: ``OutageMiddleware.process_exception`` for
views, ``server_error`` (``handler500``) for the session and auth middleware's own queries.
Nothing here touches the database: it is down.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import escape
from django.utils.translation import gettext as _
from django.views.defaults import server_error as django_server_error

log = logging.getLogger(__name__)
RETRY_AFTER_S = 5
_last_logged = 0.0


def queue_errors() -> tuple[type[BaseException], ...]:
    try:
        from kombu.exceptions import OperationalError as QueueError
        from redis.exceptions import ConnectionError as RedisDown
        from redis.exceptions import TimeoutError as RedisSlow
    except ImportError:  # pragma: no cover - both ship with memviz
        return ()
    return (QueueError, RedisDown, RedisSlow)


def channel_layer_errors() -> tuple[type[BaseException], ...]:
    """What a Channels or broker call raises while Redis does not answer."""
    return (OSError, *queue_errors())


def what_is_down(exc: BaseException | None) -> str | None:
    """"database" / "queue" for an outage, None for any other error."""
    if isinstance(exc, (OperationalError, InterfaceError)):
        return "database"
    if exc is not None and isinstance(exc, queue_errors()):
        return "queue"
    return None


def log_outage(down: str, exc: BaseException) -> None:
    """One warning line per outage (at most one per 10 s), not one per request or socket."""
    global _last_logged
    if time.monotonic() - _last_logged > 10:
        _last_logged = time.monotonic()
        log.warning("%s unavailable, answering 503: %s", down, exc)


def outage_response(request: HttpRequest, down: str, exc: BaseException) -> HttpResponse:
    log_outage(down, exc)
    message = (
        _("The database is not answering. memviz recovers by itself when it is back.")
        if down == "database"
        else _("The task queue (Redis) is not answering. Try again when it is back.")
    )
    headers = {"Retry-After": str(RETRY_AFTER_S), "Cache-Control": "no-store"}
    if _wants_json(request):
        body = {"error": message, "unavailable": down, "status": 503}
        return JsonResponse(body, status=503, headers=headers)
    title = escape(_("Temporarily unavailable"))
    html = (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{title} · memviz</title>'
        f'<meta http-equiv="refresh" content="{RETRY_AFTER_S}"></head>'
        f"<body><h1>{title}</h1><p>{escape(message)}</p></body></html>"
    )
    return HttpResponse(html, status=503, headers=headers)


def _wants_json(request: HttpRequest) -> bool:
    return (
        request.GET.get("format") == "json"
        or request.path.startswith("/api/")
        or "application/json" in request.headers.get("Accept", "")
        or request.headers.get("HX-Request") == "true"
    )


class QuietOutages(logging.Filter):
    """Drops django.request's traceback per 503: ``outage_response`` logs one line per outage."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "status_code", None) != 503


class OutageMiddleware:
    """A view's database or queue error → 503 (first in MIDDLEWARE)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        down = what_is_down(exc)
        return outage_response(request, down, exc) if down else None


def server_error(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    """``handler500``: a middleware's outage error → 503; anything else, Django's 500."""
    exc = sys.exc_info()[1]
    down = what_is_down(exc)
    if down and exc is not None:
        return outage_response(request, down, exc)
    return django_server_error(request)
