"""The canvas page's context, typed: what `selectors.canvas_page` builds, the page and its htmx
answers render, and `?format=json` returns (the same dict, so the JSON twin is what the page
shows; mypy checks every key a view or selector reads or writes)."""

# No `from __future__ import annotations` here: the keys' NotRequired must be seen at run time
# (__optional_keys__), which string annotations hide on Python 3.11.
from typing import Any, NotRequired, TypedDict


class MetaItem(TypedDict):
    form: str  # how the goal header was written: "json" | "loose" | "comment" | …
    task_goal: str
    progress: int | None
    created: str
    updated: str
    values: dict[str, Any]  # the header's own fields, NUL-free (`1e400` as text)


class AgentReads(TypedDict):
    """What the agent's own reader makes of the header (spec §4.8.1)."""

    task_goal: str | None  # None: the header has no goal line
    problem: str  # why the agent reads no header ("" when it does)
    on_line_one: bool


class NodeItem(TypedDict):
    id: str
    label: str
    title: str
    status: str | None
    summary: str | None
    timestamp: str | None
    extra: dict[str, str]  # other label fields (`note`, …)
    shape: str
    subgraph: str | None
    line: int
    rows: int  # offload rows mapped to the node (aliases and a branch's copied rows included)


class EdgeItem(TypedDict):
    source: str
    target: str
    label: str | None
    kind: str


class GroupItem(TypedDict):
    id: str
    title: str
    parent: str | None
    nodes: list[str]


class MarkedLine(TypedDict):
    number: int
    text: str
    problems: list[str]


class EditorState(TypedDict):
    """What the editing UI needs beyond the canvas: live badge, undo/redo, dropped edits."""

    live: dict[str, Any]
    undo: dict[str, Any] | None
    redo: dict[str, Any] | None
    dropped: list[dict[str, Any]]
    reverted: list[dict[str, Any]]
    landed: list[dict[str, Any]]  # what the agent's last write left wrong
    revisions: int
    last_edit: dict[str, Any] | None
    disk: dict[str, bool]
    resume: dict[str, Any] | None


class CanvasPage(TypedDict):
    agent: str
    file: str
    active: bool  # the agent's active canvas (state.json)
    content_hash: str
    meta: MetaItem
    agent_reads: AgentReads
    header: str | None
    direction: str | None
    status_counts: dict[str, int]
    nodes: list[NodeItem]
    edges: list[EdgeItem]
    subgraphs: list[GroupItem]
    collapsed: list[str]
    problems: list[dict[str, Any]]
    has_errors: bool
    escaped_oneliner: bool
    raw: str
    scene: dict[str, Any]  # what memviz's renderer draws (canvases/drawing.py)
    author_coloured: int
    editor: EditorState
    marked_lines: NotRequired[list[MarkedLine]]  # a broken text only
    render_body: NotRequired[str]  # the render-ready text: the JSON twin and export only
