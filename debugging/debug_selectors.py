"""Read-side data of the debugging pages: replay, diagnostics and badges, memoized per content.

Loads rows, canvases and revisions from the index and hands plain values to the Django-free
cores (`replay`, `diagnostics`); nothing here writes.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TypedDict

from django.db import connection
from django.urls import reverse
from django.utils import timezone

from agentfs.layout import REFS_DIR
from agentfs.paths import UnsafePath, confine_file
from agentfs.refs import PLAIN_REF, ref_relative
from agentfs.row_fields import WAIT_SQL, aliases_of_all
from canvases.mermaid import parse
from canvases.models import Revision
from debugging import diagnostics as diag
from debugging.debug_cache import agent_fingerprint, memo, session_fingerprint
from debugging.diagnosis_labels import titled, titled_counts
from debugging.page_types import (
    AgentDiagnosticsPage,
    Badge,
    BadgeLink,
    SessionDiagnosticsPage,
)
from debugging.ref_scan import scan_ref
from debugging.replay import CanvasVersion, Replay, ReplayRow, build_replay
from sessions.instants import parse_instant
from sessions.models import Agent, AgentSession, Canvas, Ref, Row

ROW_FIELDS = (
    "pk",
    "session__session_id",
    "line_no",
    "timestamp",
    "tool_call",
    "summary",
    "node_id",
    "result_ref",
)


@dataclass(frozen=True, slots=True)
class LoadedRow:
    id: int
    session: str
    line_no: int
    timestamp: str
    time: datetime | None
    tool_call: str
    summary: str
    node_id: str | None
    result_ref: str | None


def load_rows(agent: Agent, session: AgentSession | None = None) -> list[LoadedRow]:
    rows = Row.objects.filter(session=session) if session else Row.objects.filter(agent=agent)
    return [
        LoadedRow(pk, sid, line, stamp, parse_instant(stamp), call, summary, node, ref)
        for pk, sid, line, stamp, call, summary, node, ref in rows.order_by(
            "session_id", "line_no"
        ).values_list(*ROW_FIELDS)
    ]


def ref_name(result_ref: str | None) -> tuple[str | None, str]:
    """The ref's name in the index for a row's ``result_ref``, and "none"/"refused"/"named"."""
    if result_ref is None or not result_ref.strip():
        return None, "none"
    try:
        return ref_relative(result_ref), "named"
    except UnsafePath:
        return None, "refused"


def canvases_parsed(agent: Agent) -> list[diag.DiagCanvas]:
    """The agent's canvases, parsed once per content (every session's diagnostics needs them)."""
    return memo(
        ("canvases", agent_fingerprint(agent)),
        lambda: [
            diag.DiagCanvas(file, text, parse(text))
            for file, text in Canvas.objects.filter(agent=agent)
            .order_by("filename")
            .values_list("filename", "text")
        ],
    )


def node_first_rows(rows: list[LoadedRow]) -> dict[str, datetime]:
    first: dict[str, datetime] = {}
    for row in rows:
        if row.node_id and row.time and (row.node_id not in first or row.time < first[row.node_id]):
            first[row.node_id] = row.time
    return first


# ---- replay --------------------------------------------------------------------------------
def replay_for(agent: Agent, session: AgentSession) -> Replay:
    return memo(("replay", agent_fingerprint(agent), session.pk), lambda: _build(agent, session))


def _build(agent: Agent, session: AgentSession) -> Replay:
    rows = load_rows(agent, session)
    versions: dict[str, list[CanvasVersion]] = {}
    for file, text in Canvas.objects.filter(agent=agent).values_list("filename", "text"):
        versions[file] = [CanvasVersion(file, text, None)]
    for file, created, number, author, text in (
        Revision.objects.filter(canvas__agent=agent)
        .order_by("number")
        .values_list("canvas__filename", "created_at", "number", "author", "after_text")
    ):
        versions.setdefault(file, [])
        versions[file].append(CanvasVersion(file, text, created, number, author))
    for file, found in versions.items():
        if len(found) > 1:  # recorded revisions exist: the index copy is the newest of them
            versions[file] = [v for v in found if v.recorded_at is not None]
    agent_rows = load_rows(agent) if agent.rows_count != session.rows_count else rows
    return build_replay(
        [
            ReplayRow(r.id, r.line_no, r.time, r.timestamp, r.node_id, r.tool_call, r.summary)
            for r in rows
        ],
        versions,
        node_first_row=node_first_rows(agent_rows),
        fallback_active=agent.active_mmd_file or None,
    )


# ---- diagnostics ---------------------------------------------------------------------------
def _fresh_waits(agent: Agent, now: datetime) -> frozenset[int]:
    """Wait rows still inside the map-builder's window: when one ages out, the key changes."""
    fresh = set()
    # Only stamps that can be that recent reach Python (a year of an agent holds thousands of
    # wait rows): an ISO stamp's local date is at most a day behind its UTC date, so older
    # dates compare below the cut-off as strings; anything not starting with a digit is kept.
    cutoff = (now - diag.WAIT_WINDOW - timedelta(days=2)).date().isoformat()
    # Two ranges of the partial index row_wait_time: 'wait' is spelled out (a parameter would
    # not prove the index's condition to SQLite), and an OR of the two was read through the
    # node index instead, visiting every wait row of the agent (4-6 ms at 1M rows).
    waits = (
        f"SELECT id, timestamp FROM {Row._meta.db_table} "
        f"WHERE agent_id = %s AND node_id = {WAIT_SQL} AND timestamp {{}}"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"{waits.format('>= %s')} UNION ALL {waits.format('< %s')}",
            [agent.pk, cutoff, agent.pk, "0"],
        )
        found = cursor.fetchall()
    for pk, stamp in found:
        moment = parse_instant(stamp)
        if moment is not None and moment >= now - diag.WAIT_WINDOW:
            fresh.add(pk)
    return frozenset(fresh)


def _diag_rows(agent: Agent, rows: list[LoadedRow]) -> list[diag.DiagRow]:
    present = set(Ref.objects.filter(agent=agent).values_list("name", flat=True))
    out = []
    for r in rows:
        name, state = ref_name(r.result_ref)
        if state == "named":
            state = "ok" if name in present else "missing"
        out.append(
            diag.DiagRow(
                r.id,
                r.session,
                r.line_no,
                r.time,
                r.tool_call,
                r.summary,
                r.node_id,
                r.result_ref,
                name if state == "ok" else None,
                state,
            )
        )
    return out


def _scanner(agent: Agent) -> Callable[[str], diag.RefFacts | None]:
    """Reads refs confined to the agent folder; `refs/<file>` names take a fast path."""
    base = Path(agent.path)
    try:
        refs_dir = confine_file(base, REFS_DIR)  # a linked refs/ stays the link: reads refuse it
    except UnsafePath:
        refs_dir = None

    def scan(name: str) -> diag.RefFacts | None:
        plain = PLAIN_REF.match(name)
        if refs_dir is not None and plain:
            # refs/ confined to the folder; a plain file in it cannot lead out (and when refs/
            # is a link, the reader refuses every file under it).
            path = refs_dir / plain.group(1)
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    return scan_ref(path)
            except OSError:
                return None
        try:  # a link stays the link, which the reader refuses (as the ref page does)
            return scan_ref(confine_file(base, name))
        except UnsafePath:
            return None

    return scan


def session_findings(agent: Agent, session: AgentSession) -> list[diag.Finding]:
    now = timezone.now()
    key = ("diag", session_fingerprint(agent, session), _fresh_waits(agent, now))
    return memo(key, lambda: _session_findings(agent, session, now))


def _session_findings(agent: Agent, session: AgentSession, now: datetime) -> list[diag.Finding]:
    rows = load_rows(agent, session)
    canvases = canvases_parsed(agent)
    placed = diag.placed_aliases(canvases)
    used = {r.node_id for r in rows if r.node_id}
    mine = [c for c in canvases if used & aliases_of_all(list(c.doc.nodes))]
    return diag.diagnose(
        _diag_rows(agent, rows), mine, placed_ids=placed, scan_ref=_scanner(agent), now=now
    )


def badge_slot(session_id: str) -> str:
    """The HTML id of a session's badge slot on the agent page (any session id is safe)."""
    return "badges-" + hashlib.blake2s(session_id.encode(), digest_size=8).hexdigest()


class AgentFindings(TypedDict):
    findings: list[diag.Finding]  # every kind, in diag.KINDS order
    per_session: dict[str, dict[str, int]]  # session id -> kind -> count (no zero counts)


def agent_findings(agent: Agent) -> AgentFindings:
    """Every session's findings summed, plus the agent-wide canvas checks; per-session counts."""
    now = timezone.now()
    key = ("agent-diag", agent_fingerprint(agent), _fresh_waits(agent, now))
    return memo(key, lambda: _agent_findings(agent, now))


CANVAS_KINDS = ("stuck_node", "over_budget")


def _agent_findings(agent: Agent, now: datetime) -> AgentFindings:
    totals = {kind: diag.Finding(kind) for kind in diag.KINDS}
    per_session: dict[str, dict[str, int]] = {}
    for session in AgentSession.objects.filter(agent=agent).order_by("session_id"):
        counts = {}
        for finding in session_findings(agent, session):
            counts[finding.kind] = finding.count
            if finding.kind in CANVAS_KINDS:
                continue
            total = totals[finding.kind]
            total.count += finding.count
            room = diag.EVIDENCE_CAP - len(total.evidence)
            total.evidence += finding.evidence[: max(0, room)]
            total.note = "; ".join(n for n in (total.note, finding.note) if n)
        per_session[session.session_id] = {k: v for k, v in counts.items() if v}
    last = max((r for r in _session_ends(agent) if r), default=None)
    canvases = canvases_parsed(agent)
    canvas_only = diag.diagnose(
        [], canvases, placed_ids=set(), scan_ref=lambda _: None, now=now, end=last
    )
    for finding in canvas_only:
        if finding.kind in CANVAS_KINDS:
            totals[finding.kind] = finding
    return {"findings": [totals[k] for k in diag.KINDS], "per_session": per_session}


def _session_ends(agent: Agent) -> list[datetime | None]:
    return [
        parse_instant(stamp)
        for stamp in AgentSession.objects.filter(agent=agent).values_list(
            "last_timestamp", flat=True
        )
    ]


def canvas_findings(agent: Agent, canvas: Canvas) -> list[diag.Finding]:
    """The canvas-only checks (budget, stuck nodes) of one canvas: cheap, no rows read."""
    last = max((r for r in _session_ends(agent) if r), default=None)
    one = [diag.DiagCanvas(canvas.filename, canvas.text, parse(canvas.text))]
    found = diag.diagnose(
        [], one, placed_ids=set(), scan_ref=lambda _: None, now=timezone.now(), end=last
    )
    return [f for f in found if f.count]


def titled_findings(findings: Iterable[diag.Finding]) -> list[Badge]:
    """Findings as the pages show them: their JSON, titled in the viewer's language."""
    return titled([f.as_json() for f in findings])


def session_badges(agent: Agent, session: AgentSession) -> list[Badge]:
    """The badges of a session's pages (their debug nav): its findings that are not zero."""
    return titled_findings(f for f in session_findings(agent, session) if f.count)


def session_diagnostics(agent: Agent, session: AgentSession) -> SessionDiagnosticsPage:
    """A session's diagnostics page: every diagnosis with its evidence."""
    return {
        "agent": agent.slug,
        "session": session.session_id,
        "findings": titled_findings(session_findings(agent, session)),
        "badges": session_badges(agent, session),
    }


def agent_diagnostics(agent: Agent) -> AgentDiagnosticsPage:
    """The agent's diagnostics page: every session's findings summed, and each session's."""
    rollup = agent_findings(agent)
    return {
        "agent": agent.slug,
        "session": None,
        "findings": titled_findings(rollup["findings"]),
        "per_session": [
            {"session": sid, "findings": titled_counts(counts)}
            for sid, counts in rollup["per_session"].items()
        ],
    }


def canvas_badge_links(agent: Agent, canvas: Canvas) -> list[BadgeLink]:
    """The badges of a canvas page: its budget and stuck-node findings, titled, each linked to
    the agent's diagnostics (canvases/page_extras.py asks for them)."""
    base = reverse("agent-diagnostics", args=[agent.slug])
    return [
        {**f, "href": f"{base}#{f['kind']}"}
        for f in titled_findings(canvas_findings(agent, canvas))
    ]
