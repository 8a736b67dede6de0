"""Comparing any two versions of a canvas: revision texts (or the text now), their node changes."""

from __future__ import annotations

import difflib

from django.http import Http404
from django.urls import reverse

from canvases import drawing
from canvases.history import node_changes
from canvases.mermaid import content_hash
from canvases.page_types import ComparePage, VersionRef
from sessions.models import Agent, Canvas

CURRENT = "current"


def version_text(canvas: Canvas, ref: str) -> tuple[str, VersionRef]:
    """The text of revision ``ref`` (its after-text) or of the index now (``current``)."""
    if ref == CURRENT:
        now: VersionRef = {
            "ref": CURRENT,
            "label": "now",
            "created_at": None,
            "author": None,
            "hash": content_hash(canvas.text),
        }
        return canvas.text, now
    try:
        number = int(ref)
    except ValueError as exc:
        raise Http404(f"{ref!r} is not a revision number") from exc
    revision = canvas.revisions.filter(number=number).first()
    if revision is None:
        raise Http404(f"no revision {number} of {canvas.filename}")
    return revision.after_text, {
        "ref": str(number),
        "label": f"r{number}",
        "created_at": revision.created_at,
        "author": revision.author,
        "op": revision.op,
        "hash": content_hash(revision.after_text),
    }


def compare(agent: Agent, canvas: Canvas, a: str, b: str) -> ComparePage:
    """Versions ``a`` and ``b`` (revision numbers or ``current``) side by side: their texts,
    drawings, node changes and diff, and the "branch here" form of each side."""
    before, a_info = version_text(canvas, a)
    after, b_info = version_text(canvas, b)
    diff = "".join(
        difflib.unified_diff(
            _lines(before),
            _lines(after),
            a_info["label"],
            b_info["label"],
            n=2,
        )
    )
    sides = [("a", a_info, before, "before"), ("b", b_info, after, "after")]
    return {
        "agent": agent.slug,
        "file": canvas.filename,
        "a": a_info,
        "b": b_info,
        "choices": [CURRENT, *(str(n) for n in canvas.revisions.values_list("number", flat=True))],
        "changes": node_changes(before, after),
        "diff": diff,
        "pictures": [
            drawing.picture(key, info["label"], text, marks=marks)
            for key, info, text, marks in sides
            if text
        ],
        # "branch here" from either side: POST file (+ revision; none: the text now) to this URL
        "branch_url": reverse("agent-branch", args=[agent.slug]),
        "sides": [
            {"label": side["label"], "revision": None if side["ref"] == CURRENT else int(side["ref"])}
            for side in ([a_info, b_info] if a != b else [a_info])
        ],
    }


def _lines(text: str) -> list[str]:
    """Lines for the diff; the plugin writes no final newline, which would glue two lines."""
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(keepends=True)]
