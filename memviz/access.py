"""Who may view: anyone when memviz listens on loopback only, otherwise signed-in users."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse

OPEN_PREFIXES = ("/login/", "/logout/", "/static/", "/api/stream/")


class ViewAccessMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            not settings.MEMVIZ_ANONYMOUS_VIEW
            and not request.user.is_authenticated
            and not request.path.startswith(OPEN_PREFIXES)
        ):
            if request.GET.get("format") == "json":
                return JsonResponse({"error": "login required"}, status=403)
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        return self.get_response(request)
