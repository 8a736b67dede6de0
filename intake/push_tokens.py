"""Push tokens: one per agent name, shown once, kept as a hash; who may rotate or revoke one;
whether a push's bearer token is good (asked by the server's front door before the body is
read) and the agent name a push may write under the push root."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Any

from django.utils import timezone

from intake.page_types import TokenItem
from memviz.body_gate import bearer_token
from sessions.models import StreamToken

AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}$")

TOKEN_PREFIX = "mvz_"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenForbidden(PermissionError):
    """Only staff, or the user who created an agent's token, may replace or revoke it."""


def token_may_manage(token: StreamToken, user: Any) -> bool:
    if user is None:  # the `stream_token` command: whoever runs it owns the installation
        return True
    return bool(user.is_staff or (token.created_by_id and token.created_by_id == user.pk))


def token_create(agent_name: str, *, user: Any = None) -> str:
    """Create (or replace) the agent's token and return it; only its hash is stored.

    Replacing another user's token needs staff rights (``user=None`` is the command line).
    """
    problem = agent_name_check(agent_name)
    if problem:
        raise ValueError(problem)
    existing = StreamToken.objects.filter(agent_name=agent_name).first()
    if existing is not None and not token_may_manage(existing, user):
        raise TokenForbidden(
            f"the push token of {agent_name!r} belongs to another user; ask staff to rotate it"
        )
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)  # never "-…", which argparse reads as an option
    StreamToken.objects.update_or_create(
        agent_name=agent_name,
        defaults={
            "token_hash": token_hash(token),
            "last_used_at": None,
            "created_by": user if user is not None and user.is_authenticated else None,
            "created_at": timezone.now(),
        },
    )
    return token


def token_revoke(agent_name: str, *, user: Any) -> None:
    """Delete the agent's token: pushes with it are refused from now on."""
    token = StreamToken.objects.filter(agent_name=agent_name).first()
    if token is None:
        raise ValueError(f"{agent_name!r} has no push token")
    if not token_may_manage(token, user):
        raise TokenForbidden(f"the push token of {agent_name!r} belongs to another user")
    token.delete()


def tokens_list(user: Any) -> list[TokenItem]:
    """Every push token (never its hash), and whether ``user`` may rotate or revoke it."""
    return [
        {
            "agent": token.agent_name,
            "created_by": token.created_by.get_username() if token.created_by else None,
            "created_at": token.created_at,
            "last_used_at": token.last_used_at,
            "may_manage": token_may_manage(token, user),
        }
        for token in StreamToken.objects.select_related("created_by").order_by("agent_name")
    ]


def token_valid(agent_name: str, token: str) -> bool:
    """``token`` is the agent's push token (a read: nothing is recorded)."""
    stored = StreamToken.objects.filter(agent_name=agent_name).only("token_hash").first()
    return bool(
        stored is not None and token and hmac.compare_digest(stored.token_hash, token_hash(token))
    )


def token_check(agent_name: str, token: str) -> bool:
    """``token_valid``, and its use recorded on the token."""
    if not token_valid(agent_name, token):
        return False
    StreamToken.objects.filter(agent_name=agent_name).update(last_used_at=timezone.now())
    return True


def agent_name_check(agent_name: str) -> str | None:
    """None when ``agent_name`` can be a folder name under the push root, else the reason."""
    if not AGENT_NAME.match(agent_name or "") or ".." in agent_name:
        return "agent name must be letters, digits, '.', '_', '-', '@', '+' (no '..', ≤200)"
    return None


def push_allowed(agent_name: str, authorization: str) -> bool:
    """A push's Authorization header bears the agent's valid token (the daphne gate asks before
    the body is read; the view records the use)."""
    token = bearer_token(authorization)
    return bool(token) and agent_name_check(agent_name) is None and token_valid(agent_name, token)
