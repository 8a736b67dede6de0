"""The typed contexts of a canvas's panels: the node panel, the resume preview, the budget and
lint panels, and the "too large" page. Each is what its selector builds, the panel renders and
`?format=json` returns, key for key (tests/canvases/test_panel_shapes.py)."""

# No `from __future__ import annotations` here: the keys' NotRequired must be seen at run time
# (__optional_keys__), which string annotations hide on Python 3.11.
from typing import Any, TypedDict

from canvases.page_types import LiveItem, NodeBase, ProblemItem, ResumeState
from sessions.page_types import RowItem


class NodeFields(NodeBase):
    """A node as its panel shows it: its label fields, the plan fields included."""

    phase: str | None
    action: str | None


class NodePanel(TypedDict):
    agent: str
    file: str
    content_hash: str
    node: NodeFields
    rows: list[RowItem]  # in time order; a branch's copied rows included


class ShareItem(TypedDict):
    """A node's share of the injected block (the preview lists the largest)."""

    id: str
    title: str
    chars: int
    percent: float  # of the injected block


class ResumePreview(TypedDict):
    """The block the agent injects for a canvas, and its size against the budget."""

    agent: str
    file: str
    content_hash: str
    block: str  # "" when the agent injects nothing
    block_chars: int
    block_js_length: int
    block_tokens: int
    injected: bool
    task_goal: str | None
    node_index: bool
    meta_problem: str
    meta_on_line_one: bool
    empty_shell: bool
    canvas_chars: int
    canvas_tokens: int
    budget_chars: int
    over_budget: bool
    budget_percent: int
    node_shares: list[ShareItem]  # the largest first, at most selectors.PREVIEW_SHARES
    active: bool
    live: LiveItem  # liveness.LiveStatus.as_json()
    resume: ResumeState | None


class TooLarge(TypedDict):
    """What a page over MEMVIZ_CANVAS_MAX_BYTES shows instead of the canvas."""

    agent: str
    file: str
    too_large: bool
    size: int
    limit: int
    nodes: int
    status_counts: dict[str, int]
    raw: str  # the URL of the raw text


# ---- the budget panel: canvases/budget.py's dataclasses as JSON, field for field ------------
class NodeShareItem(ShareItem):
    """`budget.NodeShare`."""

    status: str | None


class SharesItem(TypedDict):
    """`budget.Shares`."""

    block_chars: int
    block_tokens: int
    canvas_chars: int
    overhead: int
    nodes: list[NodeShareItem]


class SuggestionItem(TypedDict):
    """`budget.Suggestion`, and what it saves."""

    key: str
    kind: str  # "merge" | "prune" | "shorten"
    nodes: list[str]
    step: dict[str, Any]  # as the ops endpoint's `batch` op takes it back
    before_chars: int
    after_chars: int
    diff: str
    saved: int


class PlanItem(TypedDict):
    """`budget.Plan`."""

    target: int
    canvas_chars: int
    block_chars: int
    after_canvas_chars: int
    after_block_chars: int
    after_block_tokens: int
    reached: bool
    elapsed_ms: float
    more: bool
    suggestions: list[SuggestionItem]


class RowStatsItem(TypedDict):
    """`budget.RowStats`."""

    rows: int
    low_or_dropped: int


class Titled(TypedDict):
    """A group (the budget panel) or a node (the lint panel): its id and title."""

    id: str
    title: str


class BudgetPage(TypedDict):
    agent: str
    file: str
    content_hash: str
    target: int
    low: float
    limit: int
    shares: SharesItem
    plan: PlanItem
    groups: list[Titled]
    rows: dict[str, RowStatsItem]  # node id -> its rows


# ---- the lint panel ----------------------------------------------------------------------
class DanglingRows(TypedDict):
    """Rows whose node id is drawn on no canvas of the agent."""

    node_id: str
    rows: int
    pruned: bool  # a memviz prune took that node off a canvas


class MissingRef(TypedDict):
    """A row whose ref file is not indexed."""

    node_id: str
    tool_call_id: str
    ref: str


class LintPage(TypedDict):
    agent: str
    file: str
    content_hash: str
    agent_warnings: list[ProblemItem]  # what the agent itself will make of the file
    nodes_without_rows: list[Titled]
    rows_on_no_canvas: list[DanglingRows]
    unmapped_rows: int
    wait_rows: int
    missing_refs: list[MissingRef]
    size_chars: int
    budget_chars: int
    over_budget: bool
    node_ids: list[str]
