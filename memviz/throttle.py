"""Login throttling: after N failed passwords for one account from one client address, logins
of that account from that address are refused (without checking the password) until the
failures age out.

The key is the (account, address) pair: failures with made-up user names, or against another
account, never lock out a real account, and a guesser at one address cannot lock its owner out
elsewhere.

Our own rather than django-axes: it is one table, one authentication backend and two signal
receivers; it works wherever the database does (several processes, SQLite or PostgreSQL) and
needs no cache. The backend refuses before the password is checked, so the login page and the
admin are both covered and a correct password does not help during the cooling-off period.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import user_logged_in, user_login_failed
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.views import LoginView
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.translation import ngettext

from memviz.models import LoginFailure

THROTTLED_ATTR = "memviz_login_throttled"


def client_address(request: HttpRequest) -> str:
    """The client's address; behind the TLS proxy, the one the proxy appended last."""
    if settings.MEMVIZ_BEHIND_TLS_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        last = forwarded.split(",")[-1].strip()
        if last:
            return last[:100]
    return str(request.META.get("REMOTE_ADDR", ""))[:100]


def _key(request: HttpRequest | None, username: str | None) -> str:
    address = client_address(request) if request is not None else ""
    return f"pair:{address}|{(username or '')[:150]}"


def _window_start() -> Any:
    return timezone.now() - timedelta(seconds=settings.MEMVIZ_LOGIN_COOLOFF_SECONDS)


def login_blocked(request: HttpRequest | None, username: str | None) -> bool:
    """True while this account has too many recent failures from this client."""
    recent = LoginFailure.objects.filter(key=_key(request, username), at__gte=_window_start())
    return recent.count() >= settings.MEMVIZ_LOGIN_MAX_FAILURES


class ThrottledModelBackend(ModelBackend):
    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if login_blocked(request, username):
            if request is not None:
                setattr(request, THROTTLED_ATTR, True)
            raise PermissionDenied("too many failed logins")  # stops authenticate()
        return super().authenticate(request, username=username, password=password, **kwargs)


@receiver(user_login_failed)
def _record_failure(
    sender: Any, credentials: dict, request: HttpRequest | None = None, **_: Any
) -> None:
    if request is not None and getattr(request, THROTTLED_ATTR, False):
        return  # refused unchecked: the cooling-off period is not extended
    now = timezone.now()
    LoginFailure.objects.filter(at__lt=_window_start()).delete()
    LoginFailure.objects.create(key=_key(request, credentials.get("username")), at=now)


@receiver(user_logged_in)
def _forget_failures(sender: Any, request: HttpRequest | None, user: Any, **_: Any) -> None:
    LoginFailure.objects.filter(key=_key(request, user.get_username())).delete()


class ThrottledLoginView(LoginView):
    """The login page: a throttled attempt says so and answers 429."""

    def form_invalid(self, form: Any) -> HttpResponse:
        if not getattr(self.request, THROTTLED_ATTR, False):
            return super().form_invalid(form)
        minutes = max(1, settings.MEMVIZ_LOGIN_COOLOFF_SECONDS // 60)
        form.errors.clear()
        form.add_error(
            None,
            ngettext(
                "Too many failed logins for this account or from this address. "
                "Try again in %(n)d minute.",
                "Too many failed logins for this account or from this address. "
                "Try again in %(n)d minutes.",
                minutes,
            )
            % {"n": minutes},
        )
        response = super().form_invalid(form)
        response.status_code = 429
        return response
