"""mermaid's `@{ shape: … }` names read as the shapes memviz's renderer draws.

The names and aliases are mermaid 11's (its flowchart syntax docs, "Expanded node shapes"); each
has a drawing in static/js/canvas-shapes.js. A name mermaid does not know is drawn as a rectangle,
as mermaid itself would refuse it.
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
    "bolt": ("bolt", "com-link", "lightning-bolt"),
    "crossed_circle": ("cross-circ", "summary", "crossed-circle"),
    "brace_l": ("brace", "brace-l", "comment"),
    "brace_r": ("brace-r",),
    "braces": ("braces",),
    "h_cylinder": ("h-cyl", "das", "horizontal-cylinder"),
    "lined_cylinder": ("lin-cyl", "disk", "lined-cylinder"),
    "curved_trapezoid": ("curv-trap", "curved-trapezoid", "display"),
    "divided_rect": ("div-rect", "div-proc", "divided-process", "divided-rectangle"),
    "window_pane": ("win-pane", "internal-storage", "window-pane"),
    "lined_document": ("lin-doc", "lined-document"),
    "notched_pentagon": ("notch-pent", "loop-limit", "notched-pentagon"),
    "sloped_rect": ("sl-rect", "manual-input", "sloped-rectangle"),
    "stacked_document": ("docs", "documents", "st-doc", "stacked-document"),
    "flag": ("flag", "paper-tape"),
    "bow_rect": ("bow-rect", "stored-data", "bow-tie-rectangle"),
    "tagged_document": ("tag-doc", "tagged-document"),
    "tagged_rect": ("tag-rect", "tag-proc", "tagged-process", "tagged-rectangle"),
    "cloud": ("cloud",),
    "bang": ("bang",),
    "datastore": ("datastore", "data-store"),
    # `@{ icon: … }` / `@{ img: … }` (canvases/mermaid/lexer.py names them as mermaid does): a
    # blank box in the icon's form with the label below (memviz has no icon packs, no images)
    "icon": ("icon",),
    "icon_square": ("iconsquare",),
    "icon_circle": ("iconcircle",),
    "icon_rounded": ("iconrounded",),
    "image": ("imagesquare",),
}
SHAPE_OF_NAME = {name: shape for shape, names in _ALIASES.items() for name in names}
CLASSIC = {
    "rect", "round", "stadium", "subroutine", "cylinder", "circle", "double_circle", "rhombus",
    "hexagon", "asymmetric", "parallelogram", "parallelogram_alt", "trapezoid", "trapezoid_alt",
}


def drawn_shape(shape: str) -> str:
    """The renderer's shape for a node's shape as parsed (classic names pass through)."""
    if shape in CLASSIC:
        return shape
    return SHAPE_OF_NAME.get(shape.strip().lower(), "rect")
