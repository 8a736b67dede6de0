"""Findings other apps show on the canvas page, without canvases importing them: an app above
registers a provider when Django starts (its AppConfig.ready), and the canvas page's selector
asks every provider (debugging's: the canvas's budget and stuck-node findings).

Each badge is a `BadgeLink` (sessions/page_types.py): the provider says where it links, so the
canvas page draws it with its own partial (templates/canvases/_badges.html)."""

from __future__ import annotations

from collections.abc import Callable

from sessions.models import Agent, Canvas
from sessions.page_types import BadgeLink

BadgeProvider = Callable[[Agent, Canvas], list[BadgeLink]]
_PROVIDERS: list[BadgeProvider] = []


def provide_badges(provider: BadgeProvider) -> None:
    if provider not in _PROVIDERS:  # ready() may run twice (tests, autoreload)
        _PROVIDERS.append(provider)


def canvas_badges(agent: Agent, canvas: Canvas) -> list[BadgeLink]:
    return [badge for provider in _PROVIDERS for badge in provider(agent, canvas)]
