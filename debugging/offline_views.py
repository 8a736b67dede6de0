"""The offline file downloads: a session or a canvas as one self-contained HTML file."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from canvases.loading import canvas_view
from debugging import offline
from sessions.models import Canvas
from sessions.selectors import session_get


@require_GET
@canvas_view(whole=True)
def canvas_offline(request: HttpRequest, canvas: Canvas) -> HttpResponse:
    html = offline.canvas_file(canvas.agent, canvas)
    return _download(html, f"{canvas.agent.slug}-{canvas.filename}")


@require_GET
def session_offline(request: HttpRequest, agent: str, session: str) -> HttpResponse:
    sess = session_get(agent, session)
    return _download(offline.session_file(sess.agent, sess), f"{agent}-{sess.session_id}")


def _download(html: str, stem: str) -> HttpResponse:
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)[:120] + ".html"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
