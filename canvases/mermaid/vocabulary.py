"""The words of a node label: the status vocabulary and the memory fields a label carries.

The one home of the statuses: their words, their order of urgency, which of them mark a step in
progress, and their colours. mermaid's classDefs (`render.py`), the page's CSS and the drawing
script's word lists are made from the table below (`canvases/status_assets.py` writes
`static/css/statuses.css` and `static/js/statuses.js`; a test fails when they differ from it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The words the plugin writes (`status: done|doing|todo|paused|blocked`), in the order lists show.
STATUS_VOCABULARY = ("done", "doing", "todo", "paused", "blocked")
# A step being worked on or stuck: the overview opens on the newest such node (in this order),
# and a run's diagnosis calls one that stays so too long "stuck".
STATUS_ACTIVE = ("doing", "blocked")


@dataclass(frozen=True, slots=True)
class Look:
    """One status's colours in one theme: the box, its outline, its text."""

    fill: str
    line: str
    text: str


@dataclass(frozen=True, slots=True)
class StatusStyle:
    """How a status is drawn. ``key``: a vocabulary word, ``other`` (a word outside it, such as
    `进行中`) or ``none`` (no status at all)."""

    key: str
    light: Look
    dark: Look
    outline: tuple[tuple[str, str], ...] = ()  # extra outline properties (CSS and mermaid names)
    dashed_border: bool = False  # its pill in HTML lists


# In order of urgency: a collapsed group takes the most urgent status among its nodes, and a
# node whose label names several statuses keeps the most urgent (merge's precedence).
STATUS_STYLES: tuple[StatusStyle, ...] = (
    StatusStyle("blocked", Look("#fde2e2", "#c0392b", "#5a1a12"), Look("#4a1616", "#f0766a", "#ffd8d3")),
    StatusStyle(
        "doing",
        Look("#fff4cc", "#c49a00", "#3d3000"),
        Look("#3d3000", "#e3b341", "#fff1b8"),
        outline=(("stroke-width", "2px"),),
    ),
    StatusStyle(
        "paused",
        Look("#ece6f5", "#7d5ba6", "#2f2140"),
        Look("#2b2140", "#a28bd4", "#e2d9f7"),
        outline=(("stroke-dasharray", "4 3"),),
    ),
    StatusStyle("todo", Look("#eef2f7", "#7b8794", "#1f2933"), Look("#1f2630", "#8b949e", "#d1d9e0")),
    StatusStyle("done", Look("#e3f4e1", "#3b8b3b", "#1d3d1d"), Look("#12361b", "#4fae5c", "#c8efcf")),
    StatusStyle(
        "other",
        Look("#ffffff", "#57606a", "#1f2328"),
        Look("#0d1117", "#9198a1", "#e6edf3"),
        outline=(("stroke-dasharray", "2 2"),),
        dashed_border=True,
    ),
    StatusStyle("none", Look("#ffffff", "#8c959f", "#57606a"), Look("#161b22", "#6e7681", "#9198a1")),
)
URGENCY = tuple(style.key for style in STATUS_STYLES)
# The vocabulary alone, most urgent first.
STATUS_PRECEDENCE = tuple(key for key in URGENCY if key in STATUS_VOCABULARY)
assert sorted(STATUS_PRECEDENCE) == sorted(STATUS_VOCABULARY)


@dataclass(slots=True)
class LabelFields:
    title: str = ""
    status: str | None = None
    summary: str | None = None
    timestamp: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
    phase: str | None = None
    action: str | None = None
