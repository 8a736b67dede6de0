"""The canvas a URL names, loaded once (and the writer checked first) for every canvas view.

``@canvas_view()`` turns a view of ``(request, canvas, **rest)`` into the URL's
``(request, agent=<slug>, canvas=<file>, **rest)``:

- ``write=True``: refused by `signed_in_to_write` unless signed in, before anything is read;
- an agent that does not exist, or a canvas name that is unsafe or not indexed, is a 404;
- ``whole=True``: a page that would send the canvas whole answers the "too large" page (or its
  JSON) instead for a canvas over ``MEMVIZ_CANVAS_MAX_BYTES``.

The view gets the `Canvas` with its ``agent`` set; `canvas_url` names its pages.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.urls import reverse

from canvases import selectors
from memviz.pages import render_page
from sessions.access import signed_in_to_write
from sessions.models import Canvas
from sessions.selectors import agent_get

CanvasView = Callable[..., HttpResponseBase]


def canvas_view(*, write: bool = False, whole: bool = False) -> Callable[[CanvasView], CanvasView]:
    def decorate(view: CanvasView) -> CanvasView:
        @functools.wraps(view)
        def loaded(request: HttpRequest, *, agent: str, canvas: str, **rest: Any) -> HttpResponseBase:
            found = url_canvas(agent, canvas)
            if whole and (big := too_large_answer(request, found)) is not None:
                return big
            return view(request, found, **rest)

        return signed_in_to_write(loaded) if write else loaded

    return decorate


def url_canvas(agent: str, canvas: str) -> Canvas:
    """The indexed canvas `canvas` of agent `agent` (404 otherwise), its ``agent`` set."""
    return selectors.canvas_get(agent_get(agent), canvas)


def canvas_url(canvas: Canvas, name: str = "canvas", *more: object) -> str:
    """The URL of one of the canvas's pages (`name` from the URL map, then its own arguments)."""
    return reverse(name, args=[canvas.agent.slug, canvas.filename, *more])


def too_large_answer(request: HttpRequest, canvas: Canvas) -> HttpResponse | None:
    """The "too large" page (or its JSON) for a canvas over the size limit; None for the others."""
    summary = selectors.canvas_too_large(canvas.agent, canvas)
    if summary is None:
        return None
    return render_page(request, "canvases/too_large.html", summary)
