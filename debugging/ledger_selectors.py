"""The token ledger of a session or an agent, from the index and the ref files (read only)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from agentfs.paths import UnsafePath, check_relative, read_regular
from agentfs.state_edit import resume_block
from canvases.mermaid.tokens import METHOD
from canvases.mermaid.tokens import token_count as count_tokens
from canvases.mermaid.tokens import token_counts as count_tokens_many
from debugging import token_ledger as tl
from debugging.debug_cache import agent_fingerprint, memo
from debugging.debug_selectors import (
    LoadedRow,
    canvases_parsed,
    load_rows,
    node_first_rows,
    ref_name,
    session_badges,
)
from debugging.page_types import Ledger, SessionLedgerPage
from debugging.replay import ReplayRow, active_canvases, canvases_by_number, node_canvas_map
from sessions.compression import compression
from sessions.instants import parse_instant
from sessions.models import Agent, AgentSession, Ref

NOTES = (
    "Each layer is counted exactly up to {budget:,} characters; past that, on an even sample "
    "whose tokens per character (per byte for refs) estimate the rest.",
    "Refs: the whole file the agent would read back (header and raw result).",
    "Canvas over time: the current canvas text, each line counted from when all its nodes exist "
    "(the earlier of a node's Timestamp and its first row).",
    "Injected block: the canvas plus the plugin's wrapper text around it (preamble, goal, file, "
    "node-index hint, reminder).",
)


def session_ledger(agent: Agent, session: AgentSession) -> Ledger:
    key = ("ledger", agent_fingerprint(agent), session.pk)
    return memo(key, lambda: _ledger(agent, load_rows(agent, session), session.session_id))


def session_ledger_with_badges(agent: Agent, session: AgentSession) -> SessionLedgerPage:
    """The session's ledger page: its ledger and the badges of its debug nav."""
    return {**session_ledger(agent, session), "badges": session_badges(agent, session)}


def agent_ledger(agent: Agent) -> Ledger:
    """The agent's ledger page: every session's rows, every canvas."""
    return memo(
        ("ledger", agent_fingerprint(agent)), lambda: _ledger(agent, load_rows(agent), None)
    )


def _read_text(base: Path, name: str) -> str | None:
    try:
        # the name is checked, not resolved: the opener refuses a link on the way itself
        data = read_regular(base / check_relative(name), folders=len(Path(name).parts))
        return data.decode("utf-8", errors="replace")
    except (OSError, UnsafePath):
        return None


def _ledger(agent: Agent, rows: list[LoadedRow], session_id: str | None) -> Ledger:
    base = Path(agent.path)
    sizes = dict(Ref.objects.filter(agent=agent).values_list("name", "size"))
    ref_rows = [
        (i, name) for i, r in enumerate(rows) if (name := ref_name(r.result_ref)[0]) in sizes
    ]
    ref_per_row, refs = tl.measure(
        [sizes[name] for _, name in ref_rows],
        lambda k: _read_text(base, ref_rows[k][1]),
        count_tokens_many,
    )
    ref_tokens = [0.0] * len(rows)
    for (index, _), tokens in zip(ref_rows, ref_per_row, strict=True):
        ref_tokens[index] = tokens
    summary_tokens, summaries = tl.measure(
        [len(r.summary) for r in rows], lambda k: rows[k].summary, count_tokens_many
    )
    canvases = canvases_parsed(agent)
    active = active_canvases(
        [_as_replay_row(r) for r in rows],
        node_canvas_map({c.file: c.text for c in canvases}),
        canvases_by_number(c.file for c in canvases),
        agent.active_mmd_file or None,
    )
    used = {a for a in active if a} if session_id else {c.file for c in canvases}
    shown = [c for c in canvases if c.file in used]
    lines = [line for c in shown for line in c.text.split("\n")]
    line_tokens, _ = tl.measure([len(x) for x in lines], lambda k: lines[k], count_tokens_many)
    exact = sum(len(c.text) for c in shown) <= tl.EXACT_BUDGET_CHARS
    first_rows = node_first_rows(rows)
    growth: dict[str, tl.CanvasGrowth] = {}
    overhead: dict[str, int] = {}
    position = 0
    for c in shown:
        count = c.text.count("\n") + 1
        first_seen = tl.node_times(c.doc.nodes, first_rows, parse_instant)
        growth[c.file] = tl.canvas_growth(
            c.file,
            c.text,
            first_seen,
            line_tokens[position : position + count],
            count_tokens(c.text) if exact else None,
        )
        position += count
        goal = c.doc.meta.task_goal or ""
        overhead[c.file] = count_tokens(resume_block(agent.name, c.file, "", goal))
    times = _carried_times(rows)
    series = tl.ledger_series(times, ref_tokens, summary_tokens, active, growth, overhead)
    final = next((a for a in reversed(active) if a), None) if session_id else None
    final = final or agent.active_mmd_file or None
    canvas_total = sum(g.total for g in growth.values())
    block = 0
    if final in growth:
        block = growth[final].total + overhead[final]
    chars = sum(len(c.text) for c in shown)
    canvas_layer = tl.Layer(canvas_total, len(shown), len(shown) if exact else 0, chars)
    return {
        "agent": agent.slug,
        "session": session_id,
        "method": METHOD,
        "notes": [n.format(budget=tl.EXACT_BUDGET_CHARS) for n in NOTES],
        "layers": {
            "refs": refs.as_json(),
            "summaries": summaries.as_json(),
            "canvas": canvas_layer.as_json(),
            "block": {"tokens": block, "canvas": final, "exact": exact},
        },
        "compression": compression(refs.tokens, summaries.tokens, canvas_total),
        "canvases": [{"file": f, "tokens": g.total} for f, g in growth.items()],
        "series": series,
    }


def _as_replay_row(row: LoadedRow) -> ReplayRow:
    return ReplayRow(row.id, row.line_no, row.time, row.timestamp, row.node_id, "", "")


def _carried_times(rows: list[LoadedRow]) -> list[datetime | None]:
    """Row times with unknown ones carried over from the previous row (as the replay does)."""
    out: list[datetime | None] = []
    last = None
    for row in rows:
        last = row.time or last
        out.append(last)
    return out
