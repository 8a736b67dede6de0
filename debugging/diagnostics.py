"""What went wrong in a run: named findings, each counted and pointing at its evidence.

Plain Python: rows, canvases and a ref scanner come in, findings go out. The thresholds follow
the plugin's own timings (spec §2): the map-builder retries `wait` rows after 120 s and fires on
null rows after 300 s at the latest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from agentfs.row_fields import is_wait, node_aliases
from agentfs.state_edit import CANVAS_BUDGET_CHARS
from canvases.mermaid import Canvas as ParsedCanvas
from canvases.mermaid.code_words import CodeWords, gettext_noop
from canvases.mermaid.vocabulary import STATUS_ACTIVE
from sessions.instants import parse_instant
from sessions.page_types import Detail, Evidence, FindingJson, RowEvidence

KINDS = (
    "loop",
    "failing_call",
    "stuck_node",
    "never_placed",
    "map_builder_lag",
    "over_budget",
    "missing_ref",
    "empty_summary",
    "summary_longer_than_ref",
)
LOOP_REPEATS = 3  # the same tool call this many times ...
LOOP_WINDOW_ROWS = 10  # ... with at most this many rows between two of them
STUCK_AFTER = timedelta(minutes=30)
WAIT_WINDOW = timedelta(seconds=120)  # l2WaitRetrySeconds
NULL_GRACE = timedelta(seconds=300)  # the map-builder's time trigger
STUCK_STATUSES = STATUS_ACTIVE
EVIDENCE_CAP = 50
MAX_REF_SCANS = 2000


@dataclass(frozen=True, slots=True)
class DiagRow:
    id: int
    session: str
    line_no: int
    time: datetime | None
    tool_call: str
    summary: str
    node_id: str | None
    result_ref: str | None
    ref_name: str | None  # the ref's name inside the agent folder (None: none or refused)
    ref_state: str  # "ok", "missing", "refused", "none"


@dataclass(frozen=True, slots=True)
class DiagCanvas:
    file: str
    text: str
    doc: ParsedCanvas


@dataclass(frozen=True, slots=True)
class RefFacts:
    error_line: str | None  # the first error marker line of the result, if any
    result_chars: int


@dataclass(slots=True)
class Finding:
    kind: str
    count: int = 0
    evidence: list[Evidence] = field(default_factory=list)
    note: str = ""

    def add(self, item: Evidence, weight: int = 1) -> None:
        self.count += weight
        if len(self.evidence) < EVIDENCE_CAP:
            self.evidence.append(item)

    def as_json(self) -> FindingJson:
        return {
            "kind": self.kind,
            "count": self.count,
            "evidence": self.evidence,
            "more": max(0, self.count - len(self.evidence)) if self.kind != "loop" else 0,
            "note": self.note,
        }


# Evidence details memviz words itself: a code and its values, put in the viewer's language by
# debugging.diagnosis_labels.titled (the English words stay in "detail" for other readers).
DETAILS = CodeWords(
    "debugging/diagnostics.py",
    {
        "no_canvas": gettext_noop("node on no canvas"),
        "no_ref": gettext_noop("no result_ref"),
        "ref_missing": gettext_noop("file missing"),
        "ref_unsafe": gettext_noop("unsafe path"),
        "over_chars": gettext_noop("%(size)s > %(limit)s characters"),
        "status_since": gettext_noop("%(status)s since %(stamp)s"),
    },
)
# "wait" and "null": the row's node_id as the agent wrote it, data shown as is in any language.
AS_WRITTEN = ("wait", "null")


def _detail(code: str, **values: object) -> Detail:
    words = code if code in AS_WRITTEN else DETAILS.words(code, values)
    return {"detail": words, "detail_code": code, "detail_args": values}


def _row_evidence(row: DiagRow, detail: str | Detail = "") -> RowEvidence:
    evidence: RowEvidence = {
        "row": row.id,
        "session": row.session,
        "line_no": row.line_no,
        "node_id": row.node_id,
        "tool_call": row.tool_call[:160],
        "detail": detail if isinstance(detail, str) else detail["detail"],
    }
    if not isinstance(detail, str):
        evidence["detail_code"], evidence["detail_args"] = detail["detail_code"], detail["detail_args"]
    return evidence


def _norm_call(text: str) -> str:
    return " ".join(text.split())


def find_loops(rows: list[DiagRow], finding: Finding) -> None:
    positions: dict[tuple[str, str], list[int]] = {}
    for index, row in enumerate(rows):
        call = _norm_call(row.tool_call)
        if call:
            positions.setdefault((row.session, call), []).append(index)
    for (_, call), places in positions.items():
        cluster: list[int] = []
        for place in [*places, None]:
            if place is not None and (not cluster or place - cluster[-1] <= LOOP_WINDOW_ROWS):
                cluster.append(place)
                continue
            if len(cluster) >= LOOP_REPEATS:
                finding.add(
                    {
                        "tool_call": call[:160],
                        "repeats": len(cluster),
                        "rows": [_row_evidence(rows[i]) for i in cluster[:20]],
                    }
                )
            cluster = [place] if place is not None else []


def diagnose(
    rows: list[DiagRow],
    canvases: list[DiagCanvas],
    *,
    placed_ids: set[str],
    scan_ref: Callable[[str], RefFacts | None],
    now: datetime,
    end: datetime | None = None,
) -> list[Finding]:
    """Findings over ``rows`` (file order, one or more sessions) and the ``canvases`` they use.

    ``end`` is the run's last instant (default: the last row's): what "stuck for long" and
    "never placed" are measured against, so an old run reads the same on any day.
    """
    found = {kind: Finding(kind) for kind in KINDS}
    find_loops(rows, found["loop"])
    if end is None:
        end = max((r.time for r in rows if r.time), default=None)
    scanned = 0
    for row in rows:
        node = row.node_id
        if is_wait(node):
            if row.time is None or row.time < now - WAIT_WINDOW:
                found["map_builder_lag"].add(_row_evidence(row, _detail("wait")))
        elif node is None or node == "":
            if end is None or row.time is None or row.time < end - NULL_GRACE:
                found["never_placed"].add(_row_evidence(row, _detail("null")))
        elif node not in placed_ids:
            found["never_placed"].add(_row_evidence(row, _detail("no_canvas")))
        if not row.summary.strip():
            found["empty_summary"].add(_row_evidence(row))
        if row.ref_state != "ok":
            reason = {"none": "no_ref", "missing": "ref_missing", "refused": "ref_unsafe"}
            code = reason.get(row.ref_state)
            found["missing_ref"].add(_row_evidence(row, _detail(code) if code else row.ref_state))
            continue
        if scanned >= MAX_REF_SCANS or row.ref_name is None:
            continue
        scanned += 1
        facts = scan_ref(row.ref_name)
        if facts is None:
            continue
        if facts.error_line:
            found["failing_call"].add(_row_evidence(row, facts.error_line[:200]))
        if row.summary.strip() and len(row.summary) > facts.result_chars:
            found["summary_longer_than_ref"].add(
                _row_evidence(
                    row, _detail("over_chars", size=len(row.summary), limit=facts.result_chars)
                )
            )
    with_refs = sum(1 for r in rows if r.ref_state == "ok")
    if with_refs > scanned:
        note = f"{scanned} of {with_refs} refs read"
        found["failing_call"].note = found["summary_longer_than_ref"].note = note
    for canvas in canvases:
        size = len(canvas.text)
        if size > CANVAS_BUDGET_CHARS:
            found["over_budget"].add(
                {"canvas": canvas.file, **_detail("over_chars", size=size, limit=CANVAS_BUDGET_CHARS)}
            )
        if end is None:
            continue
        for placed in canvas.doc.nodes.values():
            status = (placed.fields.status or "").lower()
            stamp = parse_instant(placed.fields.timestamp)
            if status in STUCK_STATUSES and stamp is not None and stamp < end - STUCK_AFTER:
                found["stuck_node"].add(
                    {
                        "canvas": canvas.file,
                        "node_id": placed.id,
                        **_detail("status_since", status=status, stamp=placed.fields.timestamp),
                    }
                )
    return [found[k] for k in KINDS]


def placed_aliases(canvases: list[DiagCanvas]) -> set[str]:
    return {alias for c in canvases for node in c.doc.nodes for alias in node_aliases(node)}


# Error markers in a tool result: non-zero exits, tracebacks, error lines, failed test runs.
ERROR_MARKERS = re.compile(
    r"(?im)"
    r"exit(?:ed)?(?: with)?(?: code| status)?[ :=]+-?[1-9]\d*\b"
    r"|\"(?:isError|is_error)\"\s*:\s*true"
    r"|\"status\"\s*:\s*\"error\""
    r"|^traceback \(most recent call last\)"
    r"|^(?:error|fatal|panic)\b[:!]"
    r"|^\s*\w*(?:Error|Exception):\s"
    r"|(?-i:^\S+\s+ERROR\s)"
    r"|\b[1-9]\d* failed\b"
    r"|(?-i:^FAILED\s)"
    r"|command failed"
)
# Every marker contains one of these words: most results have none and skip the regex.
_MARKER_WORDS = ("exit", "error", "traceback", "fatal", "panic", "exception", "fail")


def error_line(text: str) -> str | None:
    """The line holding the first error marker of ``text``, stripped; None when there is none."""
    lowered = text.lower()
    if not any(word in lowered for word in _MARKER_WORDS):
        return None
    match = ERROR_MARKERS.search(text)
    if match is None:
        return None
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start : end if end >= 0 else len(text)].strip()
