"""The typed contexts of the index's pages: what `sessions/selectors.py` builds, the pages
render and `?format=json` returns, key for key (tests/sessions/test_json_shapes.py)."""

# No `from __future__ import annotations`: a NotRequired key must be seen at run time.
from datetime import datetime
from typing import NotRequired, TypedDict, final


# ---- debug badges: a diagnosis as the pages show it (built by debugging, drawn by every app) --
class Detail(TypedDict):
    """What memviz says about one piece of evidence: a code of `diagnostics.DETAILS` and its
    values (the pages word it in the viewer's language), the English words beside them."""

    detail: str
    detail_code: str
    detail_args: dict[str, object]


@final  # a key's presence tells the kinds apart (mypy narrows on it)
class RowEvidence(TypedDict):
    """A row a diagnosis points at (the `#row-` anchor of its session page)."""

    row: int
    session: str
    line_no: int
    node_id: str | None
    tool_call: str  # at most 160 characters
    detail: str  # a code's words, or what the ref says (a failing call's error line)
    detail_code: NotRequired[str]
    detail_args: NotRequired[dict[str, object]]


@final  # a key's presence tells the kinds apart (mypy narrows on it)
class LoopEvidence(TypedDict):
    """The same tool call repeated: its first 20 rows."""

    tool_call: str
    repeats: int
    rows: list[RowEvidence]


@final  # a key's presence tells the kinds apart (mypy narrows on it)
class CanvasEvidence(Detail):
    """A canvas over budget, or one of its nodes stuck."""

    canvas: str
    node_id: NotRequired[str]


Evidence = RowEvidence | LoopEvidence | CanvasEvidence


class FindingCount(TypedDict):
    kind: str  # one of diagnostics.KINDS
    count: int


class FindingJson(FindingCount):
    """`Finding.as_json()`: a diagnosis, its evidence as found (English details)."""

    evidence: list[Evidence]  # at most diagnostics.EVIDENCE_CAP items
    more: int  # evidence items left out
    note: str


class BadgeCount(FindingCount):
    """A diagnosis and how often a session has it, titled in the viewer's language."""

    title: str
    help: str


class Badge(BadgeCount, FindingJson):
    """A diagnosis as the pages show it: `Finding.as_json()` titled (diagnosis_labels.titled),
    each evidence item's detail worded in the viewer's language."""


class BadgeLink(Badge):
    """A badge on a page other than the session's (the canvas page): it links to its diagnosis."""

    href: str  # the diagnosis on the agent's diagnostics page (the canvas page's badges)


class Compression(TypedDict):
    """How much smaller each memory layer is than the one below (None: nothing to compare)."""

    refs_to_summaries: float | None
    summaries_to_canvas: float | None
    refs_to_canvas: float | None


class AgentSummary(TypedDict):
    """An agent as the home page lists it (and `/?format=json` answers it)."""

    slug: str
    name: str
    path: str
    variant: str
    sessions: int
    canvases: int
    rows: int
    unmapped_rows: int
    problems: int
    refs: int
    refs_bytes: int
    summary_bytes: int
    canvas_bytes: int
    compression: Compression
    active_canvas: str | None
    ingested_at: datetime | None


class RefPlace(TypedDict):
    """Where a row's ``result_ref`` points in its agent folder (`RefLocator.locate`)."""

    name: str | None  # the ref's name inside the folder; None when the path is refused
    url_name: str | None  # the name the ref page's URL takes (without "refs/")
    exists: bool  # whether the index holds that file (the session page's rows fill it in)
    error: str | None  # why the path is refused, in the reader's language


class RowItem(TypedDict):
    """An offload row as the timeline, the node panel and the unplaced list show it."""

    id: int
    session: str
    line_no: int
    tool_call_id: str
    tool_call: str
    summary: str
    score: float | None
    node_id: str | None
    offloaded: str | None
    timestamp: str
    result_ref: str | None
    ref: RefPlace | None  # where the ref file is, and whether it is indexed (None: no result_ref)
    extra: dict[str, object]  # the row's fields beyond the format's, as the agent wrote them


class LineProblemItem(TypedDict):
    """A line of a session file that is not a row (`sessions/reader_words.py`)."""

    line_no: int
    offset: int
    kind: str  # "corrupt" | "invalid" | "partial"
    kind_words: str  # the kind in the reader's language
    code: str  # of agentfs/wording.py ("" for one indexed before problems had codes)
    reason: str  # in the reader's language
    excerpt: str


class RefusedItem(TypedDict):
    """A file or folder of the agent the last ingest left out or could not use
    (`sessions/reader_words.py`)."""

    code: str  # of agentfs/wording.py ("" for one indexed before refusals had codes)
    text: str  # the path and why, in the reader's language


class SessionItem(TypedDict):
    id: str
    file: str
    session_key: str | None
    rows: int
    problems: list[LineProblemItem]


class SessionTimeline(TypedDict):
    """A session's timeline, a page at a time (docs/architecture.md: "A session's timeline")."""

    agent: str
    session: SessionItem
    filters: dict[str, str]
    page: int | None
    pages: int | None
    count: int | None
    before: int | None
    after: int | None
    rows: list[RowItem]


class AgentCanvasItem(TypedDict):
    file: str
    number: int | None
    label: str
    task_goal: str
    progress: int | None
    status_counts: dict[str, int]
    nodes: int
    updated: str
    active: bool
    has_errors: bool
    problems: int
    size: int


class AgentSessionItem(TypedDict):
    id: str
    file: str
    session_key: str | None
    rows: int
    problems: list[LineProblemItem]
    first: str
    last: str


class UnplacedByKind(TypedDict):
    null: int
    wait: int
    dangling: int


class StateView(TypedDict):
    """The agent's state.json as read, and why it could not be (words and their code)."""

    data: dict[str, object]  # {} when it could not be read
    error: str | None
    error_code: str


class AgentDetail(TypedDict):
    agent: AgentSummary
    state: StateView
    registry_error: str | None  # in the reader's language
    registry_error_code: str
    refused_links: list[RefusedItem]
    canvases: list[AgentCanvasItem]  # newest first, a page at a time
    canvases_more: str | None
    sessions: list[AgentSessionItem]
    unplaced_rows: int
    unplaced_by_kind: UnplacedByKind


class UnplacedPage(TypedDict):
    unplaced: list[RowItem]
    unplaced_more: str | None


# ---- the search page (sessions/selectors.py: search_context) ----------------------------------
class SearchFilters(TypedDict):
    agent: str  # "" for none
    session: str
    status: str


class SearchChoices(TypedDict):
    agents: list[str]
    sessions: list[str]  # the chosen agent's
    statuses: list[str]


class NodeHit(TypedDict):
    id: int
    node_id: str
    title: str
    status: str
    summary: str
    agent: str
    canvas: str


class RowHit(TypedDict):
    id: int
    line_no: int
    node_id: str | None
    tool_call: str
    summary: str
    timestamp: str
    agent: str
    session: str


class RefHit(TypedDict):
    id: int
    name: str
    tool: str
    timestamp: str
    agent: str
    url_name: str


class CanvasHitItem(TypedDict):
    agent: str
    canvas: str
    places: list[tuple[str, str]]  # (what, text): what is "goal", "edge", "group" or "note"


class SearchPage(TypedDict):
    q: str
    filters: SearchFilters
    unknown_filters: list[str]  # filters naming no agent or session
    choices: SearchChoices
    nodes: list[NodeHit]
    rows: list[RowHit]
    refs: list[RefHit]
    canvases: list[CanvasHitItem]
    short_query: bool
    refs_indexed: bool
    more: dict[str, int | None]  # per kind: the cursor of its "more" link
    partial: dict[str, bool]  # per kind: stopped by the time budget


# ---- share links (the tokens page lists them beside the push tokens) --------------------------
class ShareLinkItem(TypedDict):
    """A share link as the tokens page lists it (`share_links.links_list`; never its secret)."""

    key: str
    agent: str
    session: str | None  # None: the link opens the whole agent
    created_by: str | None
    created_at: datetime
    expires_at: datetime
    last_used_at: datetime | None
    state: str  # "active", "revoked" or "expired"
    may_manage: bool  # the viewer may revoke it
