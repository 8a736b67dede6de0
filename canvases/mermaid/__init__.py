"""The canvas engine: a lossless, tolerant Mermaid flowchart parser, editor and renderer."""

from __future__ import annotations

import hashlib

from . import edits
from .edits import EditError, EditResult
from .model import Canvas, CanvasMeta, Edge, LabelFields, Node, Problem, Subgraph
from .parser import parse
from .render import render_body


def content_hash(text: str) -> str:
    """sha256 hex of the UTF-8 bytes of `text`."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


__all__ = [
    "Canvas",
    "CanvasMeta",
    "Edge",
    "EditError",
    "EditResult",
    "LabelFields",
    "Node",
    "Problem",
    "Subgraph",
    "content_hash",
    "edits",
    "parse",
    "render_body",
]
