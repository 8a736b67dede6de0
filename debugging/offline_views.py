"""The offline file downloads: a session or a canvas as one self-contained HTML file."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from debugging import offline
from sessions.models import AgentSession, Canvas
from sessions.selectors import agent_get


@require_GET
def canvas_offline(request: HttpRequest, agent: str, canvas: str) -> HttpResponse:
    obj = agent_get(agent)
    found = get_object_or_404(Canvas, agent=obj, filename=canvas)
    return _download(offline.canvas_file(obj, found), f"{obj.slug}-{found.filename}")


@require_GET
def session_offline(request: HttpRequest, agent: str, session: str) -> HttpResponse:
    obj = agent_get(agent)
    sess = get_object_or_404(AgentSession, agent=obj, session_id=session)
    return _download(offline.session_file(obj, sess), f"{obj.slug}-{sess.session_id}")


def _download(html: str, stem: str) -> HttpResponse:
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)[:120] + ".html"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
