"""A Content-Security-Policy (and friends) on every response, static files and errors included.

Our own middleware rather than django-csp: the policy is one fixed string except for the websocket
origin of the request's host, which this computes per request; that is the whole feature.

Why each source is allowed (docs/security.md has the threat model):
- ``script-src 'self'``: only our own files and the vendored libraries; no inline script, no eval.
- ``style-src 'self'``: stylesheets from our own files only, no inline ``<style>`` element (htmx's
  own indicator styles are switched off in base.html and live in memviz.css). The canvas renderer
  sets the agent's (filtered) styles through the CSSOM. ``style-src-attr 'unsafe-inline'`` is the
  one allowance, for the ``style`` attributes svg-pan-zoom sets on the view: an attribute carries
  no selector, and any fetch in it is held to 'self' by img-src and font-src.
- ``img-src 'self' data:`` and ``font-src 'self' data:``: the favicon, PNG export and the fonts
  embedded in exported SVGs use data: URLs.
- ``connect-src 'self'`` plus ws:/wss: of the same host and port: htmx and the live websocket.
- ``frame-ancestors 'none'``, ``object-src 'none'``, ``base-uri 'none'``, ``form-action 'self'``.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse

BASE_POLICY = (
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)
PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"


def content_security_policy(request: HttpRequest) -> str:
    connect = "connect-src 'self'"
    try:
        host = request.get_host()
    except DisallowedHost:
        host = ""
    if host:
        connect += f" ws://{host} wss://{host}"
    return "; ".join([*BASE_POLICY, connect])


class SecurityHeadersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", content_security_policy(request))
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return response
