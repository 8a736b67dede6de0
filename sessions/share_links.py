"""Read-only share links: create, check, revoke, and what a link lets its holder open.

No HTTP here: `sessions/access.py` asks `grant_decision` whether a request path is open to the links
a browser holds, and the views only call `link_create` / `link_redeem` / `link_revoke`.

A link is ``/share/<key>/#<secret>``. The key names the row and is not secret; the secret is
32 random bytes, kept only as its SHA-256 and compared in constant time. The secret rides in the
URL fragment, so it is never in a request line, an access log or a Referer; the landing page posts
it once, and the browser's session then holds the key (never the secret).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from agentfs.refs import ref_names
from sessions.models import Agent, AgentSession, Ref, Row, ShareLink
from sessions.page_types import ShareLinkItem
from sessions.selectors import RefLocator

# Lifetimes offered (days); the default is a week, never more than 90 days.
LIFETIMES_DAYS = (1, 7, 30, 90)
DEFAULT_DAYS = 7
MAX_DAYS = 90
SESSION_KEY = "share_links"  # the Django session's list of redeemed keys
MAX_HELD = 20  # keys one browser session keeps (the oldest drop out)

# Pages a link opens, by URL name: reads only. Writes (ops, restore, resume, sync, uploads,
# tokens, sharing itself) are never listed, and the middleware refuses any unsafe method anyway.
SESSION_PAGES = frozenset(
    {
        "session",
        "session-replay",
        "session-diagnostics",
        "session-ledger",
        "session-report",
        "session-offline",
    }
)
AGENT_PAGES = SESSION_PAGES | {
    "agent",
    "agent-diagnostics",
    "agent-session-badges",
    "agent-ledger",
    "node-locate",
    "node-locate-path",
    "canvas",
    "node",
    "canvas-raw",
    "canvas-mermaid-text",
    "canvas-history",
    "canvas-revision",
    "canvas-preview",
    "canvas-lint",
    "canvas-live",
    "canvas-compare",
    "canvas-offline",
    "canvas-budget",
    "session-compare",
    "ref",
}


class ShareRefused(Exception):
    """The link does not exist, its secret is wrong, or it is expired or revoked."""

    def __init__(self, message: str, *, gone: bool = False) -> None:
        super().__init__(message)
        self.gone = gone  # expired or revoked (410), rather than unknown (403)


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def lifetime_days(value: Any) -> int:
    """The lifetime a user asked for, in days: one of the offered ones, else the default."""
    try:
        days = int(value)
    except (TypeError, ValueError):
        return DEFAULT_DAYS
    return days if 1 <= days <= MAX_DAYS else DEFAULT_DAYS


@dataclass(frozen=True, slots=True)
class NewLink:
    link: ShareLink
    path: str  # "/share/<key>/#<secret>": the secret is shown this once


def link_create(
    agent: Agent, session: AgentSession | None, *, user: Any, days: Any = DEFAULT_DAYS
) -> NewLink:
    if user is None or not getattr(user, "is_authenticated", False):
        raise PermissionError("log in to share")
    if session is not None and session.agent_id != agent.pk:
        raise ValueError("the session is not this agent's")
    secret = secrets.token_urlsafe(32)
    link = ShareLink.objects.create(
        key=secrets.token_urlsafe(12),
        secret_hash=secret_hash(secret),
        agent=agent,
        session=session,
        created_by=user,
        expires_at=timezone.now() + timedelta(days=lifetime_days(days)),
    )
    return NewLink(link, f"/share/{link.key}/#{secret}")


def link_state(link: ShareLink) -> str | None:
    """None while the link opens pages; else why not ("revoked", "expired")."""
    if link.revoked_at is not None:
        return "revoked"
    if link.expires_at <= timezone.now():
        return "expired"
    return None


def link_redeem(key: str, secret: str) -> ShareLink:
    """The link whose key and secret these are, if it still opens pages."""
    link = ShareLink.objects.select_related("agent", "session").filter(key=key).first()
    # compare even when no row matched, so timing says nothing about which keys exist
    stored = link.secret_hash if link is not None else "0" * 64
    if not hmac.compare_digest(stored, secret_hash(secret)) or link is None:
        raise ShareRefused("not a valid share link")
    state = link_state(link)
    if state is not None:
        raise ShareRefused(f"this share link is {state}", gone=True)
    ShareLink.objects.filter(pk=link.pk).update(last_used_at=timezone.now())
    return link


def remember(held: list[str], key: str) -> list[str]:
    """The keys a browser session holds after redeeming ``key`` (newest last, bounded)."""
    return ([k for k in held if k != key] + [key])[-MAX_HELD:]


def link_revoke(key: str, *, user: Any) -> ShareLink:
    link = ShareLink.objects.filter(key=key).first()
    if link is None:
        raise LookupError("no such share link")
    if not may_manage(link, user):
        raise PermissionError("only staff or its creator may revoke this share link")
    if link.revoked_at is None:
        link.revoked_at = timezone.now()
        link.save(update_fields=["revoked_at"])
    return link


def may_manage(link: ShareLink, user: Any) -> bool:
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    return bool(user.is_staff or link.created_by_id == user.pk)


def links_list(user: Any) -> list[ShareLinkItem]:
    """Every share link (never its hash) with scope, creator, expiry and state."""
    links: QuerySet[ShareLink] = ShareLink.objects.select_related("agent", "session", "created_by")
    return [
        {
            "key": link.key,
            "agent": link.agent.slug,
            "session": link.session.session_id if link.session else None,
            "created_by": link.created_by.get_username() if link.created_by else None,
            "created_at": link.created_at,
            "expires_at": link.expires_at,
            "last_used_at": link.last_used_at,
            "state": link_state(link) or "active",
            "may_manage": may_manage(link, user),
        }
        for link in links[:500]
    ]


# ---- what a held link opens ----------------------------------------------------------------
OPEN, OUTSIDE, GONE = "open", "outside", "gone"


def grant_decision(held: list[str], url_name: str | None, kwargs: dict[str, Any]) -> str:
    """Whether the links a browser holds open this page: OPEN, GONE (only an expired or revoked
    link would have opened it) or OUTSIDE. Checked on every request, so revoking is immediate."""
    if not held or url_name is None:
        return OUTSIDE
    gone = False
    for link in ShareLink.objects.select_related("agent", "session").filter(key__in=held):
        if not _covers(link, url_name, kwargs):
            continue
        if link_state(link) is None:
            return OPEN
        gone = True
    return GONE if gone else OUTSIDE


def _covers(link: ShareLink, url_name: str, kwargs: dict[str, Any]) -> bool:
    if kwargs.get("agent") != link.agent.slug:
        return False
    if link.session is None:
        return url_name in AGENT_PAGES
    if url_name == "ref":  # a session's link opens the refs its own rows cite
        return _session_cites(link.agent, link.session, str(kwargs.get("name", "")))
    return url_name in SESSION_PAGES and kwargs.get("session") == link.session.session_id


def _session_cites(agent: Agent, session: AgentSession, url_name: str) -> bool:
    ref = Ref.objects.filter(agent=agent, name__in=ref_names(url_name)).first()
    if ref is None:
        return False
    locator = RefLocator(agent)
    cited = Row.objects.filter(session=session, result_ref__endswith=ref.name.rsplit("/", 1)[-1])
    for result_ref in cited.values_list("result_ref", flat=True)[:50]:
        found = locator.locate(result_ref)
        if found and found["name"] == ref.name:
            return True
    return False
