"""The typed contexts of the debugging pages: what their selectors build, the pages render and
`?format=json` returns, key for key (tests/debugging/test_page_shapes.py). The diagnostics
(debug_selectors), the token ledger (ledger_selectors), the run report (debug_views) and the
session comparison (compare_selectors), the replay's frames and scenes (debugging/replay.py;
the replay page's context is debugging/replay_page.py's)."""

# No `from __future__ import annotations`: TypedDict keys are read at run time (tests).
from typing import TypedDict

from canvases.scene_types import Scene
from sessions.page_types import Badge, BadgeCount, BadgeLink, Compression  # noqa: F401 - the debugging pages' badges


# ---- badges and diagnostics ----------------------------------------------------------------
class SessionFindings(TypedDict):
    session: str
    findings: list[BadgeCount]  # the diagnoses the session has (no zero counts)


class SessionDiagnosticsPage(TypedDict):
    agent: str
    session: str
    findings: list[Badge]  # every diagnosis of the session, in diagnostics.KINDS order
    badges: list[Badge]  # the debug nav's: the findings that are not zero


class AgentDiagnosticsPage(TypedDict):
    agent: str
    session: None  # the template's "no session": the agent's page
    findings: list[Badge]  # every session's summed, and the canvas-wide checks
    per_session: list[SessionFindings]


# ---- token ledger ----------------------------------------------------------------------------
class LayerCount(TypedDict):
    """A layer's tokens (token_ledger.Layer.as_json)."""

    tokens: int
    items: int
    exact_items: int
    exact: bool
    chars: int


class BlockCount(TypedDict):
    """The injected block: the final canvas and the plugin's wrapper text around it."""

    tokens: int
    canvas: str | None
    exact: bool


class LedgerLayers(TypedDict):
    refs: LayerCount
    summaries: LayerCount
    canvas: LayerCount
    block: BlockCount


class CanvasTokens(TypedDict):
    file: str
    tokens: int


class LedgerSeries(TypedDict):
    """The chart's points (token_ledger.ledger_series): at most SERIES_POINTS rows."""

    t: list[float]  # epoch seconds
    refs: list[int]  # cumulative
    summaries: list[int]  # cumulative
    canvas: list[int]
    block: list[int]
    utc_offset_minutes: float | None  # the agent's own offset, for the chart's axis


class Ledger(TypedDict):
    """The token ledger of a session or (``session`` None) of an agent: the agent's page."""

    agent: str
    session: str | None
    method: str
    notes: list[str]
    layers: LedgerLayers
    compression: Compression
    canvases: list[CanvasTokens]
    series: LedgerSeries


class SessionLedgerPage(Ledger):
    badges: list[Badge]  # the debug nav's


# ---- run report ------------------------------------------------------------------------------
class ReportSession(TypedDict):
    id: str
    file: str
    rows: int
    first: str
    last: str


class ReportRow(TypedDict):
    line_no: int
    timestamp: str
    tool_call: str
    node_id: str | None
    summary: str


class ReportCanvas(TypedDict):
    """The canvas the session ended on, as the replay's last frame shows it."""

    file: str
    source: str
    goal: str
    progress: int | None
    text: str
    render_body: str


class SessionReport(TypedDict):
    """The run report (Markdown, debugging/run_report.py) and its JSON twin."""

    agent: str
    generated_at: str | None
    session: ReportSession
    rows: list[ReportRow]
    canvas: ReportCanvas | None
    diagnostics: list[Badge]
    ledger: Ledger


# ---- session comparison ------------------------------------------------------------------------
class SessionChoice(TypedDict):
    id: str
    rows: int


class Picked(TypedDict):
    a: str  # "": not picked yet
    b: str


class ComparePicker(TypedDict):
    """The form that picks the two sessions: the page alone when either is missing."""

    agent: str
    picked: Picked
    choices: list[SessionChoice]


class CompareSession(TypedDict):
    id: str
    rows: int
    first: str
    last: str
    url: str
    ledger_url: str


class SideCounts(TypedDict):
    a: int
    b: int


class SideScores(TypedDict):
    a: float | None
    b: float | None


class NodeCounts(TypedDict):
    both: int
    only_a: int
    only_b: int


class CompareSummary(TypedDict):
    """session_compare's figures: pairs per status (same … moved) and the sides' totals."""

    rows: SideCounts
    aligned: int
    same: int
    result: int
    changed: int
    only_a: int
    only_b: int
    moved: int
    score_differs: int
    nodes: NodeCounts
    result_bytes: SideCounts
    mean_score: SideScores


class NodeRef(TypedDict):
    id: str
    title: str | None  # None: no canvas draws the node
    status: str | None
    canvas: str | None
    url: str


class CompareNode(TypedDict):
    group: int
    a: NodeRef | None
    b: NodeRef | None
    a_rows: int
    b_rows: int
    shared: int
    how: str  # "calls", "id", "title" or "" (visited by one run only)
    first: int | None  # the group's first pair


class PairSide(TypedDict):
    row: int
    line_no: int
    tool_call: str
    summary: str
    score: float | None
    node_id: str | None
    node_title: str | None
    result_ref: str | None
    result_size: int | None
    ref_url: str | None  # None: the index holds no such ref
    row_url: str


class ComparePair(TypedDict):
    index: int
    status: str
    differs: list[str]
    group: int | None
    partner: int | None  # a moved pair's partner
    a: PairSide | None
    b: PairSide | None


class SessionComparePage(ComparePicker):
    a: CompareSession
    b: CompareSession
    summary: CompareSummary
    nodes: list[CompareNode] | None  # None: a JSON page asked by cursor (the first has them)
    show: str  # "all" | "diff"
    count: int  # pairs shown in this view, every page
    rows: list[ComparePair]  # a page of them
    before: int | None  # the cursors of the previous and next pages
    after: int | None


class LayerTotals(TypedDict):
    refs: int
    summaries: int
    canvas: int
    block: int


class CompareTokens(TypedDict):
    """Both sessions' token totals, asked for after the page is shown (``?part=tokens``)."""

    a: LayerTotals
    b: LayerTotals


# ---- replay ------------------------------------------------------------------------------------
class FrameRow(TypedDict):
    id: int
    line_no: int
    node_id: str | None


class ReplayFrame(TypedDict):
    """One instant of a replay (`Replay.frame`): a row, and the canvas as it stood then."""

    index: int
    time: str | None  # the row's instant, or its neighbour's when the row has none
    time_known: bool  # the row carries its own instant
    row: FrameRow
    active_canvas: str | None  # what state.json named then
    scene: int | None  # the index of the scene drawn (None: no canvas yet)
    source: str | None  # "revision" or "reconstructed"
    revision: int | None
    hash: str | None
    nodes: list[str]  # the scene's nodes present at this frame


# "from" is a keyword: the functional form
ReplayNode = TypedDict(
    "ReplayNode",
    {"id": str, "from": int, "appears": str | None, "title": str, "status": str, "summary": str},
)


class ReplayScene(TypedDict):
    """One canvas text as some frames show it (`replay.Scene.as_json`), drawn three ways."""

    index: int
    file: str
    source: str
    revision: int | None
    author: str | None
    recorded_at: str | None
    hash: str
    nodes: list[ReplayNode]  # each with the first frame it is present in
    render_body: str  # the flowchart as the agent reads it
    scene: Scene  # what the page draws
    mermaid: dict[str, str]  # what the mermaid.js view draws


class PayloadFrames(TypedDict):
    t: list[str | None]
    known: list[bool]
    scene: list[int | None]
    active: list[str | None]


class ReplayPayload(TypedDict):
    """Every frame, compactly, for the replay page's script (one row is a list: id, line
    number, time, node_id, tool call and summary cut to PAYLOAD_TEXT)."""

    index: int
    frames: PayloadFrames
    rows: list[list[int | str | None]]
    scenes: list[ReplayScene]
    canvas_url: str
    session_url: str
