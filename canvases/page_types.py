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


class LiveItem(TypedDict):
    """`liveness.LiveStatus.as_json()`: is the agent writing now, and why memviz thinks so."""

    live: bool
    reasons: list[str]  # in the reader's language
    last_write_age: float | None  # seconds since its newest write memviz did not make


class HistoryStep(TypedDict):
    """The revision undo or redo would go back to."""

    revision: int
    op: str


class LostField(TypedDict):
    field: str
    was: str
    now: str


class DroppedEdit(TypedDict):
    """A person's edit whose fields an agent rewrite dropped (`dropped.dropped_edits`)."""

    revision: int
    op: str
    lost: list[LostField]
    what: str


class RevertedRow(TypedDict):
    tool_call_id: str
    summary: str
    offloaded: str


class RevertedDrop(TypedDict):
    """A drop whose rows the agent marked again (`reverts.reverted`)."""

    revision: int
    file: str
    by: str
    dropped_at: datetime
    seen_at: datetime
    nodes: list[str]
    rows: list[RevertedRow]
    why: str


class LandedProblem(TypedDict):
    """What the agent's last write left wrong (`landing.landed`), by kind."""

    kind: str  # "duplicate" | "edge_lost" | "rows_off_canvas"
    node: str | None
    lines: NotRequired[list[int]]  # duplicate: the lines defining it
    keep: NotRequired[int]  # duplicate: the definition kept
    source: NotRequired[str]  # edge_lost
    target: NotRequired[str]
    line: NotRequired[int]
    rows: NotRequired[int]  # rows_off_canvas: how many rows name the node
    suggest: NotRequired[str | None]  # rows_off_canvas: the node to move them to
    nodes: NotRequired[list[str]]  # rows_off_canvas: the nodes to choose from


class BranchEntry(TypedDict):
    """A branch of a canvas in the agent page's tree (`lineage.branch_tree`)."""

    file: str
    source_file: str
    source_revision: int | None
    source_present: bool
    origin: str
    moment: datetime | None
    session: str | None
    replay_row: int | None
    rows_copied: int
    by: str
    at: datetime
    children: list["BranchEntry"]


class BranchRoot(TypedDict):
    """A canvas that is no branch, with the branches made from it."""

    file: str
    present: bool
    children: list[BranchEntry]


class EditorState(TypedDict):
    """What the editing UI needs beyond the canvas: live badge, undo/redo, dropped edits."""

    live: LiveItem
    undo: HistoryStep | None
    redo: HistoryStep | None
    dropped: list[DroppedEdit]
    reverted: list[RevertedDrop]
    landed: list[LandedProblem]  # what the agent's last write left wrong
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


# ---- what a write answers a script (the ops API, restore, sync, resume, branch) ---------------
class EditAnswer(TypedDict):
    """A written edit, restore, undo or redo (`services.EditOutcome.as_json`)."""

    hash: str  # the canvas's content hash now: the next edit's "base"
    revision: int
    op: str
    author: str
    reapplied_on_newer_text: bool  # the agent had changed the canvas; the edit went on top
    rows_changed: int  # offload rows whose node_id the edit moved or marked
    warnings: list[str]
    text: str  # the canvas as written


class EditRefusal(TypedDict):
    """Why a write was refused (`edit_views._refused`): nothing was written."""

    error: str  # the reason, in the reader's language
    status: int
    code: NotRequired[str]  # the reason's code (canvases/messages.py), for scripts
    conflict: NotRequired[bool]  # the agent changed the canvas: reload from current_hash
    current_hash: NotRequired[str]
    file: NotRequired[str]  # the file the disk refused, and why
    reason: NotRequired[str]


class SyncAnswer(TypedDict):
    changed: bool  # the index differed from the file and was brought in line


class ResumeAnswer(TypedDict):
    held: bool  # state.json still names this canvas right after the write
    active: str  # what state.json names now ("" when nothing)
    message: str


class BranchSource(TypedDict):
    """Where a branch came from (its revision's params)."""

    source: str  # the canvas it was cut from
    revision: int | None  # that canvas's revision (None: its text at an instant of a replay)
    origin: str  # "revision", "current" (its text now) or "replay" (branches.REVISION …)
    session: NotRequired[str]  # a replay's session and row
    row: NotRequired[int | None]


class BranchMade(TypedDict):
    """A new canvas cut from another (`branches.BranchOutcome.as_json`)."""

    file: str
    revision: int
    source: BranchSource
    id_map: dict[str, str]  # the source's node ids → the branch's
    rows_copied: int
    notes: list[str]


class BranchAnswer(BranchMade):
    """What the branch endpoints answer: the new canvas, and where to go next."""

    canvas: str  # its canvas page, its resume preview, its resume endpoint
    preview: str
    resume: str
