"""What a request may send before memviz reads its body: a size limit per path, and who may.

daphne reads the whole body (into a temporary file past 100 kB) before the application runs, so
a 600 MB POST was on disk twice before Django answered 401 or 413. These rules are applied while
the headers are in (memviz.daphne_gate): a declared length over the limit, a chunked body that
grows past it, a push without a valid token or an upload without a signed-in session are answered
at once and the body is never stored. The views keep their own checks; this only comes first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings

PUSH_PATH = re.compile(r"^/api/stream/(?P<agent>[^/]+)/$")
UPLOAD_PATH = "/upload/"
MULTIPART_SLACK = 1 << 20  # the form's boundaries and other fields around the archive


@dataclass(frozen=True)
class Gate:
    limit: int  # most body bytes this path accepts
    push_agent: str | None = None  # a push: the bearer token of this agent is needed first
    login: bool = False  # a signed-in session is needed first


def gate_for(path: str) -> Gate:
    match = PUSH_PATH.match(path)
    if match:
        return Gate(settings.MEMVIZ_STREAM_MAX_BODY_BYTES, push_agent=match["agent"])
    if path == UPLOAD_PATH:
        return Gate(settings.MEMVIZ_UPLOAD_MAX_BYTES + MULTIPART_SLACK, login=True)
    # every other form or JSON body: Django's own limit for request data (refused later anyway)
    return Gate(settings.DATA_UPLOAD_MAX_MEMORY_SIZE + (64 << 10))


LIVE_MESSAGE_LIMIT = 64 << 10  # ws/live only ever receives pings


def ws_message_limit(path: str) -> int:
    """Largest websocket message on ``path``: a pushed batch is held to the HTTP push's limit."""
    if path.startswith("/ws/stream/"):
        return settings.MEMVIZ_STREAM_MAX_BODY_BYTES
    return LIVE_MESSAGE_LIMIT


def bearer_token(header: str) -> str:
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def session_signed_in(session_key: str) -> bool:
    """The session cookie names a live session of an active user."""
    from importlib import import_module

    from django.contrib.auth import SESSION_KEY, get_user_model

    if not session_key:
        return False
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    user_id = store.get(SESSION_KEY)
    return bool(user_id) and get_user_model().objects.filter(pk=user_id, is_active=True).exists()
