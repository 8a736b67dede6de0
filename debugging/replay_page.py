"""The replay page's context: which frame a request asks for (`?at=`, `?row=`), a page of frames
for the JSON twin, and the compact payload the page's script steps through."""

# No `from __future__ import annotations`: TypedDict keys are read at run time (tests).
from collections.abc import Mapping
from typing import NotRequired, TypedDict

from django.urls import reverse

from debugging import debug_selectors as ds
from debugging.page_types import ReplayFrame, ReplayPayload
from debugging.replay import RECONSTRUCTED, REVISION, Replay
from sessions.instants import iso, parse_instant
from sessions.models import Agent, AgentSession
from sessions.page_types import Badge

FRAME_PAGE = 500
PAYLOAD_TEXT = 200  # characters of each row's tool call / summary sent to the replay page


class ReplayPage(TypedDict):
    agent: str
    session: str
    frames_total: int
    at: str | None  # the instant asked for (`?at=`), normalised
    index: int  # the frame shown: the last one at or before `at`, or the row asked for
    before_start: bool  # `at` is before the session's first stamp
    frame: ReplayFrame | None
    sources: dict[str, int]  # frames drawn from a recorded revision / reconstructed
    offset: int
    frames: list[ReplayFrame]  # the JSON twin's page of frames (the page has them all)
    next_offset: int | None
    branch_url: str  # "branch from this instant": POST session + row (a frame's line number)
    # The page's debug nav only: the JSON twin is the stepping API (`?at=` per frame), and the
    # findings cost a diagnosis per content change (~200 ms at 2,000 rows) that a step should not
    # pay; a script reads them from the session's diagnostics.
    badges: NotRequired[list[Badge]]


class BadInstant(ValueError):
    """`?at=` is not an ISO 8601 instant."""


def bounded_int(value: str | None, default: int, low: int = 0, high: int = 10**9) -> int:
    try:
        return min(high, max(low, int(value or default)))
    except ValueError:
        return default


def replay_page(
    agent: Agent, session: AgentSession, params: Mapping[str, str], *, frames_paged: bool
) -> tuple[ReplayPage, ReplayPayload | None]:
    """The replay of ``session`` at the frame ``params`` ask for. ``frames_paged``: the JSON
    twin (a page of frames, no payload); else the page and the payload its script steps
    through (every frame)."""
    replay = ds.replay_for(agent, session)
    at_text = params.get("at", "")
    at = parse_instant(at_text)
    if at_text and at is None:
        raise BadInstant(f"at={at_text!r} is not an ISO 8601 instant")
    index = replay.index_at(at) if at is not None else len(replay) - 1 if len(replay) else 0
    row = params.get("row")
    if row and at is None:  # evidence links point at a row by its line number
        line = bounded_int(row, 0)
        index = next((i for i, r in enumerate(replay.rows) if r.line_no >= line), index)
    offset = bounded_int(params.get("offset"), 0)
    limit = bounded_int(params.get("limit"), FRAME_PAGE, 1, 5000)
    end = min(len(replay), offset + limit)
    sources = {
        s: sum(1 for i in replay.scene_of if i is not None and replay.scenes[i].source == s)
        for s in (REVISION, RECONSTRUCTED)
    }
    page: ReplayPage = {
        "agent": agent.slug,
        "session": session.session_id,
        "frames_total": len(replay),
        "at": iso(at),
        "index": index,
        "before_start": bool(at and replay.sorted_times and at < replay.sorted_times[0]),
        "frame": replay.frame(index) if len(replay) else None,
        "sources": sources,
        "offset": offset,
        "frames": [replay.frame(i) for i in range(offset, end)] if frames_paged else [],
        "next_offset": end if end < len(replay) else None,
        "branch_url": reverse("agent-branch", args=[agent.slug]),
    }
    if frames_paged:
        return page, None
    page["badges"] = ds.session_badges(agent, session)
    return page, _payload(agent, session, replay, index)


def _payload(agent: Agent, session: AgentSession, replay: Replay, index: int) -> ReplayPayload:
    """Every frame, compactly, for the page's script (times, rows cut to PAYLOAD_TEXT, scenes)."""
    return {
        "index": index,
        "frames": {
            "t": [iso(t) for t in replay.times],
            "known": [r.time is not None for r in replay.rows],
            "scene": replay.scene_of,
            "active": replay.active,
        },
        "rows": [
            [
                r.id,
                r.line_no,
                r.time_text,
                r.node_id,
                r.tool_call[:PAYLOAD_TEXT],
                r.summary[:PAYLOAD_TEXT],
            ]
            for r in replay.rows
        ],
        "scenes": [s.as_json() for s in replay.scenes],
        "canvas_url": reverse("canvas", args=[agent.slug, "__FILE__"]),
        "session_url": reverse("session", args=[agent.slug, session.session_id]),
    }
