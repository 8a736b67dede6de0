"""Where a node went: the change that took it off its canvas, for a link to a node no canvas has."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from agentfs.row_fields import drawn_as
from canvases.models import Revision
from sessions.models import Agent

# Revisions looked at, newest first: a node removed long ago is named as "on no canvas".
LOOKBACK = 200


@dataclass(frozen=True)
class NodeRemoval:
    node_id: str
    canvas: str  # the canvas file it was on
    number: int  # the revision that removed it
    op: str
    author: str
    at: datetime


def _holds(text: str, node_id: str) -> bool:
    """``node_id`` stands in ``text`` as an id (002-N2 is not found inside 002-N21)."""
    return re.search(rf"(?<![\w-]){re.escape(node_id)}(?![\w-])", text) is not None


def node_removal(agent: Agent, node_id: str) -> NodeRemoval | None:
    """The newest revision of the agent's canvases whose change removed ``node_id`` (or its
    ``n_`` alias), a human prune or merge as well as an agent rewrite; None if none did."""
    ids = drawn_as(node_id)
    candidates = (
        Revision.objects.filter(canvas__agent=agent, before_text__contains=node_id)
        .select_related("canvas")
        .order_by("-created_at", "-pk")[:LOOKBACK]
    )
    for revision in candidates:
        for an_id in ids:
            if _holds(revision.before_text, an_id) and not _holds(revision.after_text, an_id):
                return NodeRemoval(
                    node_id=an_id,
                    canvas=revision.canvas.filename,
                    number=revision.number,
                    op=revision.op,
                    author=revision.author,
                    at=revision.created_at,
                )
    return None
