"""One way to answer a state-changing request: an htmx partial, JSON, or a redirect with a message.

Views build an `Outcome` (what happened, for people and as JSON) and hand it here with the
partial to render for htmx; which of the three answers the client gets follows from the request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django_htmx.http import reswap, retarget

from memviz.pages import HtmxHttpRequest, json_response, wants_json

__all__ = ["HtmxHttpRequest", "Outcome", "respond"]


@dataclass
class Outcome:
    ok: bool
    message: str
    status: int = 200
    warnings: list[str] = field(default_factory=list)
    body: Mapping[str, object] = field(default_factory=dict)  # the JSON answer ({"error": …} if not ok)

    @classmethod
    def refused(cls, message: str, status: int, **body: Any) -> Outcome:
        return cls(ok=False, message=message, status=status, body={"error": message, "status": status, **body})


def wants_json_answer(request: HttpRequest) -> bool:
    return request.content_type == "application/json" or wants_json(request)


def flash(request: HttpRequest, lines: list[str], *, error: bool) -> HttpResponse:
    """The page's flash region alone (for htmx requests that change nothing else)."""
    response = render(request, "canvases/_flash.html", {"flash": lines, "flash_error": error})
    return reswap(retarget(response, "#flash"), "innerHTML")


def respond(
    request: HtmxHttpRequest,
    outcome: Outcome,
    *,
    redirect_to: str,
    htmx: Callable[[Outcome], HttpResponse] | None = None,
) -> HttpResponse:
    """htmx → `htmx(outcome)` (or the flash region); JSON → the body; else message + redirect.

    A 403 is answered as such to every client but htmx, which shows it in the flash region.
    """
    if request.htmx:
        if htmx is not None:
            return htmx(outcome)
        return flash(request, [outcome.message, *outcome.warnings], error=not outcome.ok)
    if wants_json_answer(request) or outcome.status == 403:
        # a refusal for lack of rights stays a 403 whatever asked (never a redirect to retry)
        return json_response(outcome.body, status=outcome.status)
    (messages.success if outcome.ok else messages.error)(request, outcome.message)
    for warning in outcome.warnings:
        messages.warning(request, warning)
    return redirect(redirect_to)
