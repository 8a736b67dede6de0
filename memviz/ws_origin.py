"""Websocket handshakes only from pages of memviz's own origin: scheme, host *and port*.

Channels' AllowedHostsOriginValidator compares host names only, so a page served by any other
program on the same host (http://127.0.0.1:9999) could open memviz's sockets with the user's
cookies. Here the Origin must name the very host and port the browser connected to (the Host
header, itself checked against ALLOWED_HOSTS) with the scheme of the connection (an https page
for wss, an http page for ws; behind the TLS proxy, the scheme the proxy says), or be one of
MEMVIZ_TRUSTED_ORIGINS. An Origin is only scheme://host[:port]: anything else in it (userinfo,
a path) is not one a browser sends, and is refused.
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
        parts = urlsplit(value.rstrip("/"))
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    if "@" in parts.netloc or parts.path or parts.query or parts.fragment:
        return None  # userinfo or a path: not an origin
    return parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme]


def _page_scheme(headers: dict[bytes, bytes], socket_scheme: str) -> str:
    """The scheme of the pages of this server: the proxy's word behind TLS, else the socket's."""
    if settings.MEMVIZ_BEHIND_TLS_PROXY:
        forwarded = headers.get(b"x-forwarded-proto", b"").decode("latin-1").split(",")[-1]
        return "https" if forwarded.strip().lower() == "https" else "http"
    return "https" if socket_scheme == "wss" else "http"


def origin_allowed(headers: dict[bytes, bytes], socket_scheme: str = "ws") -> bool:
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
    if scheme != _page_scheme(headers, socket_scheme):
        return False  # an https page of this host is not this http server's page (or back)
    return origin_host == host and origin_port == (int(port) if port else DEFAULT_PORTS[scheme])


class SameOriginValidator:
    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict, receive: Any, send: Any) -> Any:
        headers = dict(scope.get("headers", []))
        if scope["type"] == "websocket" and not origin_allowed(headers, scope.get("scheme", "ws")):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
