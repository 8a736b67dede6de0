"""The canvas page's context, typed: what `selectors.canvas_page` builds, the page and its htmx
answers render, and `?format=json` returns (the same dict, so the JSON twin is what the page
shows; mypy checks every key a view or selector reads or writes)."""

# No `from __future__ import annotations` here: the keys' NotRequired must be seen at run time
# (__optional_keys__), which string annotations hide on Python 3.11.
from datetime import datetime
from typing import Any, NotRequired, TypedDict

from canvases.scene_types import Scene
from sessions.page_types import BadgeLink


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


class NodeBase(TypedDict):
    """A node's label fields and place, as the canvas page and the node panel show them."""

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


class NodeItem(NodeBase):
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


class ProblemItem(TypedDict):
    """A problem as a page lists it (a parse problem of the canvas page, what the agent will
    make of a canvas on the lint panel): its code, and its words in the reader's language."""

    line: int
    col: int
    code: str  # of canvases/mermaid/wording.py ("" for one indexed before problems had codes)
    message: str
    severity: str  # "error" | "warning"


class LastEdit(TypedDict):
    """memviz's newest standing edit of a canvas (`selectors._last_edit`)."""

    revision: int
    op: str
    author: str
    at: str  # UTC, `2026-06-11T14:15:30Z`


class ResumeState(TypedDict):
    """The last resume a person asked for, and whether the agent still has that canvas active."""

    file: str
    by: str
    at: datetime
    held_at_write: bool
    active_now: str  # the agent's active canvas now ("" for none)
    changed_by_agent: bool


class EditorState(TypedDict):
    """What the editing UI needs beyond the canvas: live badge, undo/redo, dropped edits."""

    live: dict[str, Any]
    undo: dict[str, Any] | None
    redo: dict[str, Any] | None
    dropped: list[dict[str, Any]]
    reverted: list[dict[str, Any]]
    landed: list[dict[str, Any]]  # what the agent's last write left wrong
    revisions: int
    last_edit: LastEdit | None
    disk: dict[str, bool]
    resume: ResumeState | None


class LivePanel(TypedDict):
    """What the canvas page polls (`edit_views.live_panel`): the live badge and dropped edits."""

    agent: str
    file: str
    content_hash: str
    editor: EditorState


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
    problems: list[ProblemItem]
    has_errors: bool
    escaped_oneliner: bool
    raw: str
    scene: Scene  # what memviz's renderer draws (canvases/drawing.py)
    author_coloured: int
    editor: EditorState
    marked_lines: NotRequired[list[MarkedLine]]  # a broken text only
    render_body: NotRequired[str]  # the render-ready text: the JSON twin and export only
    # Findings other apps show on the page (canvases/page_extras.py): the page and its JSON, not
    # an edit's answer (the badges are outside the regions an edit redraws)
    badges: NotRequired[list[BadgeLink]]


class RevisionItem(TypedDict):
    """One change of a canvas as the history, revision and compare pages show it."""

    number: int
    author: str  # a user name, or "agent" for a rewrite seen on disk
    created_at: datetime
    op: str
    params: dict[str, Any]
    before_hash: str
    after_hash: str
    undone: bool
    rows_changed: int
    node_map: dict[str, str]  # node id -> the node its rows went to (merge, prune)
    mark_deleted: list[str]


class NodeChanges(TypedDict):
    added: list[str]
    removed: list[str]
    changed: list[str]  # label, shape or group


class HistoryPage(TypedDict):
    agent: str
    file: str
    content_hash: str
    revisions: list[RevisionItem]  # newest first, the last 500
    branch_url: str  # POST file + revision: a branch from that version


class Picture(TypedDict):
    """One version of a canvas drawn beside another (a revision's before and after, the two
    sides of a compare): `drawing.picture`."""

    key: str  # the ids of its scripts: <key>-scene, <key>-mermaid
    label: str  # its caption, in the reader's language
    title: str  # what an export names it ("" for the caption)
    marks: str  # "before": its removed and changed nodes are marked; "after": added and changed
    text: str
    render: str  # the render-ready text ("" for an empty text)
    scene: Scene
    mermaid: dict[str, str]


class RevisionPage(TypedDict):
    agent: str
    file: str
    content_hash: str
    revision: RevisionItem
    diff: str
    changes: NodeChanges
    remaps: dict[str, Any]
    pictures: list[Picture]  # before (when the revision had one) and after
    is_current: bool  # the canvas is this revision's text now


class VersionRef(TypedDict):
    ref: str  # a revision number, or "current"
    label: str
    created_at: datetime | None
    author: str | None
    op: NotRequired[str]  # a revision's only
    hash: str


class CompareSide(TypedDict):
    label: str
    revision: int | None  # None: the text now


class ComparePage(TypedDict):
    agent: str
    file: str
    a: VersionRef
    b: VersionRef
    choices: list[str]
    changes: NodeChanges
    diff: str
    pictures: list[Picture]  # a, then b (a side whose text is empty is left out)
    branch_url: str  # "branch here" from either side
    sides: list[CompareSide]
