"""What a page draws of a canvas text, computed by the selectors (never in a template), so a
page's JSON twin carries the very scene its HTML draws: the scene memviz's renderer lays out,
the text mermaid.js draws, how many nodes the author coloured, and a broken text's lines with
their problems."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from django.utils.translation import gettext

from canvases.canvas_scene import canvas_scene
from canvases.indexing import parsed
from canvases.mermaid import render_body
from canvases.mermaid.mermaid_source import mermaid_view
from canvases.messages import problem_text, severity_word
from canvases.page_types import MarkedLine, Picture
from canvases.scene_types import Scene

# An author's own colour on a node (it wins over memviz's status colours).
AUTHOR_PAINT = re.compile(r"(?:^|;)(?:fill|stroke):")


def scene(text: str) -> Scene:
    """The scene of a canvas (or revision) text: nodes, edges and groups for the renderer."""
    return _scene(text or "")


@lru_cache(maxsize=8)
def _scene(text: str) -> Scene:
    # The page's selector parsed this text already (parsed() keeps it); an edit's answer and a
    # revision page ask for the same text twice.
    return canvas_scene(text, parsed(text))


def author_coloured(drawn: Scene) -> int:
    """How many nodes of a scene the author coloured."""
    return sum(1 for n in drawn["nodes"] if AUTHOR_PAINT.search(n.get("css", "")))


def mermaid_text(text: str) -> dict[str, str]:
    """What the mermaid.js view draws (the file's own text) and memviz's status colours, apart."""
    return _mermaid_text(text or "")


@lru_cache(maxsize=8)
def _mermaid_text(text: str) -> dict[str, str]:
    return mermaid_view(text, parsed(text))


def picture(key: str, label: str, text: str, *, marks: str, title: str = "") -> Picture:
    """`text` drawn for a page that shows two versions side by side."""
    render = render_body(text) if text else ""
    return {
        "key": key,
        "label": label,
        "title": title,
        "marks": marks,
        "text": text,
        "render": render,
        "scene": scene(render),
        "mermaid": mermaid_text(text),
    }


def marked_lines(text: str, problems: list[dict[str, Any]]) -> list[MarkedLine]:
    """The text's lines numbered, each with the problems found on it (the broken-canvas view)."""
    by_line: dict[int, list[str]] = {}
    for problem in problems:
        said = {
            "col": problem["col"],
            "problem": problem_text(problem),
            "severity": severity_word(problem["severity"]),
        }
        by_line.setdefault(int(problem["line"]), []).append(
            gettext("col %(col)s: %(problem)s (%(severity)s)") % said
        )
    return [
        {"number": n, "text": line.rstrip("\r"), "problems": by_line.get(n, [])}
        for n, line in enumerate(text.split("\n"), start=1)
    ]
