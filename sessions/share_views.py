"""Share links: thin views over sessions/share_links.py."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from memviz.pages import json_response, render_page, wants_json
from memviz.responders import HtmxHttpRequest, Outcome, respond, wants_json_answer
from sessions import share_links
from sessions.access import share_refusal, signed_in_to_write
from sessions.models import AgentSession
from sessions.selectors import agent_get


def _private(response: HttpResponse) -> HttpResponse:
    """A page that shows or takes a share secret: never cached. (No stricter Referrer-Policy:
    the secret is never in a URL, and `no-referrer` would make the landing form's POST carry
    `Origin: null`, which the CSRF check refuses.)"""
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@signed_in_to_write
def share_create_view(request: HttpRequest, agent: str, session: str | None = None) -> HttpResponse:
    obj = agent_get(agent)
    sess = get_object_or_404(AgentSession, agent=obj, session_id=session) if session else None
    new = share_links.link_create(obj, sess, user=request.user, days=request.POST.get("days"))
    data = {
        "url": request.build_absolute_uri(new.path),
        "key": new.link.key,
        "agent": obj.slug,
        "session": sess.session_id if sess else None,
        "expires_at": new.link.expires_at,
    }
    return _private(render_page(request, "agent_sessions/share_link.html", data))


@never_cache
@require_http_methods(["GET", "POST"])
def share_open(request: HttpRequest, key: str) -> HttpResponse:
    """GET: a page whose script posts the secret from the URL fragment; POST: redeem it."""
    if request.method == "GET":
        return _private(render_page(request, "agent_sessions/share_open.html", {"key": key}))
    try:
        link = share_links.link_redeem(key, request.POST.get("secret", ""))
    except share_links.ShareRefused as exc:
        message = (
            _("This share link has expired or was revoked.")
            if exc.gone
            else _("This is not a valid share link.")
        )
        return share_refusal(request, message, 410 if exc.gone else 403)
    held = request.session.get(share_links.SESSION_KEY) or []
    request.session.cycle_key()
    request.session[share_links.SESSION_KEY] = share_links.remember(list(held), link.key)
    if link.session is not None:
        target = reverse("session", args=[link.agent.slug, link.session.session_id])
    else:
        target = reverse("agent", args=[link.agent.slug])
    if wants_json(request):
        return _private(json_response({"url": target, "expires_at": link.expires_at}))
    return _private(redirect(target))


@require_POST
@signed_in_to_write
def share_revoke_view(request: HtmxHttpRequest, key: str) -> HttpResponse:
    try:
        share_links.link_revoke(key, user=request.user)
    except LookupError as exc:
        return token_page_refusal(request, str(exc), 404)
    except PermissionError as exc:
        return token_page_refusal(request, str(exc), 403)
    outcome = Outcome(ok=True, message=_("the share link is revoked"), body={"revoked": key})
    return respond(request, outcome, redirect_to=reverse("tokens"))


def token_page_refusal(request: HttpRequest, message: str, status: int) -> HttpResponse:
    """A refusal on the tokens page (which lists push tokens and share links): JSON, or back
    to the page with the reason."""
    if wants_json_answer(request):
        return json_response({"error": message}, status=status)
    messages.error(request, message)
    return redirect("tokens")
