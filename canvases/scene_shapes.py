"""mermaid's `@{ shape: … }` names read as the shapes memviz's renderer draws.

The names and aliases are mermaid 11's (its flowchart syntax docs, "Expanded node shapes").
A name memviz has no drawing for is drawn as a rectangle and listed in ``UNDRAWN``, so a reader
of docs/canvas-rendering.md knows which ones differ.
"""

from __future__ import annotations

_ALIASES: dict[str, tuple[str, ...]] = {
    "rect": ("rect", "rectangle", "proc", "process", "square"),
    "round": ("rounded", "event"),
    "stadium": ("stadium", "pill", "terminal"),
    "subroutine": ("fr-rect", "subprocess", "subproc", "framed-rectangle", "subroutine"),
    "cylinder": ("cyl", "database", "db", "cylinder"),
    "circle": ("circle", "circ"),
    "double_circle": ("dbl-circ", "double-circle"),
    "rhombus": ("diam", "decision", "diamond", "question"),
    "hexagon": ("hex", "hexagon", "prepare"),
    "asymmetric": ("odd",),
    "parallelogram": ("lean-r", "lean-right", "in-out"),
    "parallelogram_alt": ("lean-l", "lean-left", "out-in"),
    "trapezoid": ("trap-b", "priority", "trapezoid-bottom", "trapezoid"),
    "trapezoid_alt": ("trap-t", "manual", "inv-trapezoid", "trapezoid-top"),
    # drawn by canvas-draw.js in mermaid's outline
    "text": ("text",),
    "document": ("doc", "document"),
    "triangle": ("tri", "extract", "triangle"),
    "flipped_triangle": ("flip-tri", "flipped-triangle", "manual-file"),
    "small_circle": ("sm-circ", "start", "small-circle"),
    "framed_circle": ("fr-circ", "framed-circle", "stop"),
    "filled_circle": ("f-circ", "filled-circle", "junction"),
    "fork": ("fork", "join"),
    "notched_rect": ("notch-rect", "card", "notched-rectangle"),
    "lined_rect": ("lin-rect", "lined-rectangle", "lined-process", "lin-proc", "shaded-process"),
    "stacked_rect": ("st-rect", "processes", "procs", "stacked-rectangle"),
    "hourglass": ("hourglass", "collate"),
    "delay": ("delay", "half-rounded-rectangle"),
}
SHAPE_OF_NAME = {name: shape for shape, names in _ALIASES.items() for name in names}
# mermaid names with no drawing of their own here: a rectangle stands in
UNDRAWN = (
    "bolt", "com-link", "lightning-bolt", "brace", "brace-l", "comment", "brace-r", "braces",
    "das", "h-cyl", "horizontal-cylinder", "lin-cyl", "disk", "lined-cylinder", "curv-trap",
    "curved-trapezoid", "display", "div-rect", "div-proc", "divided-process",
    "divided-rectangle", "win-pane", "internal-storage", "window-pane", "lin-doc",
    "lined-document", "notch-pent", "loop-limit", "notched-pentagon", "sl-rect",
    "manual-input", "sloped-rectangle", "docs", "documents", "st-doc", "stacked-document",
    "flag", "paper-tape", "bow-rect", "stored-data", "bow-tie-rectangle", "cross-circ",
    "summary", "crossed-circle", "tag-doc", "tagged-document", "tag-rect", "tag-proc",
    "tagged-process", "tagged-rectangle",
)
CLASSIC = {
    "rect", "round", "stadium", "subroutine", "cylinder", "circle", "double_circle", "rhombus",
    "hexagon", "asymmetric", "parallelogram", "parallelogram_alt", "trapezoid", "trapezoid_alt",
}


def drawn_shape(shape: str) -> str:
    """The renderer's shape for a node's shape as parsed (classic names pass through)."""
    if shape in CLASSIC:
        return shape
    return SHAPE_OF_NAME.get(shape.strip().lower(), "rect")
