"""What the intake pages and the push API answer, typed: the tokens page (its JSON twin too)
and a push's result (`POST /api/stream/<agent>/` and the stream websocket), checked key for key
by the tests."""

# No `from __future__ import annotations`: TypedDict keys are read at run time (tests).
from datetime import datetime
from typing import TypedDict

from sessions.page_types import ShareLinkItem


class TokenItem(TypedDict):
    """A push token as the tokens page lists it (`push_tokens.tokens_list`; never its hash)."""

    agent: str
    created_by: str | None
    created_at: datetime
    last_used_at: datetime | None
    may_manage: bool  # the viewer may rotate or revoke it


class TokensPage(TypedDict):
    tokens: list[TokenItem]
    share_links: list[ShareLinkItem]


class PushError(TypedDict):
    line: int  # the event's line in the body (0: the body as a whole)
    reason: str


class PushAnswer(TypedDict):
    """What a push did (`stream.StreamResult.as_dict`)."""

    agent: str
    applied: int  # events written
    duplicates: int  # rows the folder already held (by tool_call_id), skipped
    errors: list[PushError]  # events refused, each with its line; the others were applied
    rows_added: int
