"""Diagnosis badges for the shared pages: `{% session_badges %}` and `{% canvas_badges %}`."""

from __future__ import annotations

from typing import Any

from django import template

from canvases.models import Canvas
from debugging import debug_selectors as ds
from debugging.diagnosis_labels import titled
from sessions.models import Agent, AgentSession

register = template.Library()
register.filter("badge_slot", ds.badge_slot)


@register.inclusion_tag("debugging/_badges.html")
def session_badges(agent_slug: str, session_id: str) -> dict[str, Any]:
    """The session's findings that are not zero, each linked to the session's diagnostics."""
    agent = Agent.objects.filter(slug=agent_slug).first()
    session = AgentSession.objects.filter(agent=agent, session_id=session_id).first()
    if agent is None or session is None:
        return {"findings": []}
    found = [f.as_json() for f in ds.session_findings(agent, session) if f.count]
    return {"findings": titled(found), "agent": agent_slug, "session": session_id}


@register.inclusion_tag("debugging/_badges.html")
def canvas_badges(agent_slug: str, filename: str) -> dict[str, Any]:
    """Budget and stuck-node findings of one canvas, linked to the agent's diagnostics."""
    agent = Agent.objects.filter(slug=agent_slug).first()
    canvas = Canvas.objects.filter(agent=agent, filename=filename).first()
    if agent is None or canvas is None:
        return {"findings": []}
    found = [f.as_json() for f in ds.canvas_findings(agent, canvas)]
    return {"findings": titled(found), "agent": agent_slug, "session": None}
