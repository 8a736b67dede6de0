"""Who may view: the one place that decides.

- anyone, when memviz listens on loopback only (`MEMVIZ_ANONYMOUS_VIEW`, set by `manage.py run`);
- signed-in users;
- the holder of a share link (`sessions/share_links.py`): only the read pages of its agent or
  session, only safe methods, only while the link is neither expired nor revoked.

Who may write: a signed-in user, checked by the one decorator every write view wears
(`signed_in_to_write`); a link holder is never signed in.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.urls import Resolver404, resolve
from django.utils.translation import gettext as _

from memviz.responders import Outcome, respond, wants_json_answer
from sessions import share_links

View = TypeVar("View", bound=Callable[..., HttpResponseBase])

OPEN_PREFIXES = ("/login/", "/logout/", "/static/", "/api/stream/", "/share/")
# Open to a link holder besides its scope: the language switch (a cookie, no data written).
HOLDER_PREFIXES = ("/i18n/",)
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class ViewAccessMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            settings.MEMVIZ_ANONYMOUS_VIEW
            or request.user.is_authenticated
            or request.path.startswith(OPEN_PREFIXES)
        ):
            return self.get_response(request)
        refused = _share_refusal(request)
        if refused is None:
            return self.get_response(request)
        return refused


def _share_refusal(request: HttpRequest) -> HttpResponse | None:
    """None when a share link the browser holds opens this request; else the answer."""
    held = request.session.get(share_links.SESSION_KEY) or []
    if not held:
        return _login_refusal(request)
    request.share_view = True  # type: ignore[attr-defined]  # templates hide what it cannot open
    if request.path.startswith(HOLDER_PREFIXES):
        return None
    try:
        match = resolve(request.path_info)
        url_name, kwargs = match.url_name, match.kwargs
    except Resolver404:
        url_name, kwargs = None, {}
    decision = share_links.grant_decision(list(held), url_name, kwargs)
    if decision == share_links.OPEN and request.method in SAFE_METHODS:
        return None
    if decision == share_links.GONE:
        return share_refusal(request, _("This share link has expired or was revoked."), 410)
    if decision == share_links.OPEN:
        return share_refusal(
            request, _("A share link opens pages to read; it changes nothing."), 403
        )
    return share_refusal(request, _("This page is outside what your share link opens."), 403)


def share_opens(session: Any, url_name: str, kwargs: dict[str, Any]) -> bool:
    """Whether the share links held in a Django session open this page (the live socket asks)."""
    held = list(session.get(share_links.SESSION_KEY) or []) if session is not None else []
    return share_links.grant_decision(held, url_name, kwargs) == share_links.OPEN


def _login_refusal(request: HttpRequest) -> HttpResponse:
    if request.GET.get("format") == "json":
        return JsonResponse({"error": "login required"}, status=403)
    return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)


def share_refusal(request: HttpRequest, message: str, status: int) -> HttpResponse:
    """A clear page (or JSON) saying why a share link does not open this; never the secret."""
    if request.GET.get("format") == "json" or "application/json" in request.headers.get(
        "Accept", ""
    ):
        response: HttpResponse = JsonResponse({"error": message}, status=status)
    else:
        response = render(
            request,
            "share_refused.html",
            {"message": message, "gone": status == 410},
            status=status,
        )
    response["Cache-Control"] = "no-store"
    return response


def write_refusal(request: HttpRequest) -> HttpResponse:
    """The one answer to a change asked by someone not signed in: 403 with the reason to scripts
    (JSON), the reason in the page's flash region to htmx, the login page to a browser's form
    (and back to the page it was sent from afterwards)."""
    message = _("log in to change anything: anonymous users can only view")
    if getattr(request, "htmx", False) or wants_json_answer(request):
        return respond(request, Outcome.refused(message, 403), redirect_to=settings.LOGIN_URL)  # type: ignore[arg-type]
    return redirect_to_login(_sent_from(request), settings.LOGIN_URL)


def _sent_from(request: HttpRequest) -> str:
    """The path of the page the form was on (this site's only), else the home page."""
    referer = urlsplit(request.headers.get("Referer", ""))
    if referer.netloc == request.get_host() and referer.path.startswith("/"):
        return referer.path + (f"?{referer.query}" if referer.query else "")
    return "/"


def signed_in_to_write(view: View) -> View:
    """A view that changes something: refused (``write_refusal``) unless signed in."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return write_refusal(request)
        return view(request, *args, **kwargs)

    return cast(View, wrapped)
