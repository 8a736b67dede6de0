"""The contexts of the pages browse serves that need more than the index: the agent page (its
canvases' branches and reverted drops, from canvases) and the session page (its debug badges,
from debugging). Each is built whole here, typed, and is also the page's JSON answer."""

# No `from __future__ import annotations`: TypedDict keys are read at run time (tests).
from typing import NotRequired

from canvases import lineage, reverts
from canvases.page_types import BranchRoot, RevertedDrop
from debugging.debug_selectors import session_badges
from sessions import selectors
from sessions.models import Agent, AgentSession
from sessions.page_types import AgentDetail, Badge, SessionTimeline, UnplacedPage


class AgentPage(AgentDetail, UnplacedPage):
    reverted: list[RevertedDrop]  # drops the agent re-marked (canvases/reverts.py)
    branches: list[BranchRoot]  # the agent's canvases as branch trees


class SessionPage(SessionTimeline):
    # the debug nav's findings (diagnostics cached per content): the whole page and its JSON;
    # a timeline page swapped in by htmx leaves the nav as it is and asks none
    badges: NotRequired[list[Badge]]


def agent_page(agent: Agent, *, canvases_before: str = "", unplaced_after: str = "") -> AgentPage:
    return {
        **selectors.agent_detail(agent, canvases_before),
        **selectors.unplaced_page(agent, unplaced_after),
        "reverted": reverts.reverted(agent),
        "branches": lineage.branch_tree(agent),
    }


def session_page(
    agent: Agent, session: AgentSession, params: dict[str, str], *, with_badges: bool = True
) -> SessionPage:
    page: SessionPage = {**selectors.session_rows(agent, session, params)}
    if with_badges:
        page["badges"] = session_badges(agent, session)
    return page
