"""Template filters of the canvas page: the scene the renderer draws, the marked raw text."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from django import template

from canvases.canvas_scene import canvas_scene
from canvases.edit_ops import TOOLS, Tool
from canvases.indexing import parsed
from canvases.mermaid.mermaid_source import mermaid_view

register = template.Library()
AUTHOR_PAINT = re.compile(r"(?:^|;)(?:fill|stroke):")


@register.filter
def scene(text: str) -> dict[str, Any]:
    """The scene of a canvas (or revision) text, for ``json_script``."""
    return _scene(text or "")


@lru_cache(maxsize=8)
def _scene(text: str) -> dict[str, Any]:
    return canvas_scene(text, parsed(text))  # the page view parsed this text already


@register.filter
def author_coloured(text: str) -> int:
    """How many nodes the author coloured (their colours win over memviz's status colours)."""
    return sum(1 for n in _scene(text or "")["nodes"] if AUTHOR_PAINT.search(n.get("css", "")))


@register.filter
def mermaid_text(text: str) -> dict[str, str]:
    """What the mermaid.js view draws (the file's own text) and memviz's status colours, apart."""
    return _mermaid_text(text or "")


@lru_cache(maxsize=8)
def _mermaid_text(text: str) -> dict[str, str]:
    return mermaid_view(text, parsed(text))


@register.filter
def marked_lines(text: str, problems: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The text's lines numbered, each with the problems found on it (the broken-canvas view)."""
    by_line: dict[int, list[str]] = {}
    for problem in problems or []:
        by_line.setdefault(int(problem["line"]), []).append(
            f"col {problem['col']}: {problem['message']} ({problem['severity']})"
        )
    lines = (text or "").split("\n")
    return [
        {"number": n, "text": line.rstrip("\r"), "problems": by_line.get(n, [])}
        for n, line in enumerate(lines, start=1)
    ]


@register.simple_tag
def edit_tools() -> tuple[Tool, ...]:
    """The toolbar's buttons and their keys, from the op registry (`{% edit_tools as tools %}`)."""
    return TOOLS
