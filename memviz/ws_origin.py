"""Websocket handshakes only from pages of memviz's own origin: scheme, host *and port*.

Channels' AllowedHostsOriginValidator compares host names only, so a page served by any other
program on the same host (http://127.0.0.1:9999) could open memviz's sockets with the user's
cookies. Here the Origin must name the very host and port the browser connected to (the Host
header, itself checked against ALLOWED_HOSTS), or be one of MEMVIZ_TRUSTED_ORIGINS.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(value: str) -> tuple[str, str, int] | None:
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme]


def origin_allowed(headers: dict[bytes, bytes]) -> bool:
    """True when a browser page of memviz's own origin opened this socket."""
    raw_origin = headers.get(b"origin")
    if raw_origin is None:
        return False  # browsers always send one; we follow Channels in refusing its absence
    origin = _origin(raw_origin.decode("latin-1"))
    if origin is None:
        return False
    trusted = {_origin(o) for o in settings.CSRF_TRUSTED_ORIGINS}
    if origin in trusted:
        return True
    host, port = split_domain_port(headers.get(b"host", b"").decode("latin-1"))
    if not host or not validate_host(host, settings.ALLOWED_HOSTS):
        return False
    scheme, origin_host, origin_port = origin
    return origin_host == host and origin_port == (int(port) if port else DEFAULT_PORTS[scheme])


class SameOriginValidator:
    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict, receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not origin_allowed(dict(scope.get("headers", []))):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
