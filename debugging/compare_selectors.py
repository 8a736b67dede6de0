"""Read side of the session comparison: rows and node facts from the index, a page of pairs.

The alignment of two sessions is built once per content (memo keyed by both sessions'
fingerprints); a page is then a slice of it found by bisection, so the 300th page of two
20,000-row sessions costs what the first does. Nothing here writes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TypedDict
from urllib.parse import quote

from django.db.models import OuterRef, Subquery
from django.urls import reverse

from agentfs.refs import PLAIN_REF, ref_url_name
from agentfs.row_fields import GO_DRAWN_PREFIX
from debugging.debug_cache import memo, session_fingerprint
from debugging.debug_selectors import ref_name
from debugging.ledger_selectors import session_ledger
from debugging.page_types import (
    CompareNode,
    ComparePair,
    ComparePicker,
    CompareSession,
    CompareTokens,
    LayerTotals,
    NodeRef,
    PairSide,
    SessionComparePage,
)
from debugging.session_compare import Call, Comparison, compare
from sessions.models import Agent, AgentSession, CanvasNode, Ref, Row

PAGE = 100
CHUNK = 500  # names per IN (…) query: well under SQLite's bound-parameter limit
SHOW = ("all", "diff")


def _chunks(items: list[str]) -> list[list[str]]:
    return [items[k : k + CHUNK] for k in range(0, len(items), CHUNK)]


def load_calls(agent: Agent, session: AgentSession) -> list[Call]:
    """A session's rows, each with the size of its ref (None when the index has none)."""
    # The plugin's `refs/<file>` is the ref's own name: its size comes with the row, through
    # the (agent, name) index, instead of a second scan of the agent's refs.
    size = Ref.objects.filter(agent=agent, name=OuterRef("result_ref")).values("size")[:1]
    rows = list(
        Row.objects.filter(session=session)
        .order_by("line_no")
        .annotate(ref_size=Subquery(size))
        .values_list(
            "pk", "line_no", "tool_call", "summary", "score", "node_id", "result_ref", "ref_size"
        )
    )
    other = {  # result_refs of another form (a bare file name, a server key): looked up by name
        name
        for r in rows
        if r[7] is None and r[6] and not PLAIN_REF.match(r[6]) and (name := ref_name(r[6])[0])
    }
    sizes: dict[str, int] = {}
    for part in _chunks(sorted(other)):
        sizes.update(Ref.objects.filter(agent=agent, name__in=part).values_list("name", "size"))
    return [
        Call(
            pk,
            line,
            call,
            summary,
            score,
            node,
            ref,
            found if found is not None else _other(ref, sizes),
        )
        for pk, line, call, summary, score, node, ref, found in rows
    ]


def _other(result_ref: str | None, sizes: dict[str, int]) -> int | None:
    if not sizes or not result_ref or PLAIN_REF.match(result_ref):
        return None
    name = ref_name(result_ref)[0]
    return sizes.get(name) if name else None


class NodeFact(TypedDict):
    title: str
    status: str
    canvas: str


def node_facts(agent: Agent, node_ids: set[str]) -> dict[str, NodeFact]:
    """Row node id → the canvas node drawing it (title, status, canvas), ``n_`` form included."""
    wanted = sorted(node_ids | {GO_DRAWN_PREFIX + n for n in node_ids})
    facts: dict[str, NodeFact] = {}
    for part in _chunks(wanted):
        for node_id, title, status, canvas in (
            CanvasNode.objects.filter(agent=agent, node_id__in=part)
            .order_by("-canvas__filename")  # the first canvas drawing it wins, as node links do
            .values_list("node_id", "title", "status", "canvas__filename")
        ):
            fact: NodeFact = {"title": title, "status": status, "canvas": canvas}
            facts[node_id] = fact
            if node_id.startswith(GO_DRAWN_PREFIX):
                facts.setdefault(node_id[len(GO_DRAWN_PREFIX) :], fact)
    return facts


class BuiltComparison(TypedDict):
    """Two sessions aligned, built once per content: every page of the comparison reads it."""

    result: Comparison
    facts: dict[str, NodeFact]  # row node id -> the canvas node drawing it
    first_of_group: dict[int, int]  # node group -> its first pair


def comparison_for(agent: Agent, a: AgentSession, b: AgentSession) -> BuiltComparison:
    key = ("compare", session_fingerprint(agent, a), session_fingerprint(agent, b))
    return memo(key, lambda: _build(agent, a, b))


def _build(agent: Agent, a: AgentSession, b: AgentSession) -> BuiltComparison:
    calls_a = load_calls(agent, a)
    calls_b = calls_a if a.pk == b.pk else load_calls(agent, b)
    visited = {c.node_id for c in (*calls_a, *calls_b) if c.node_id}
    facts = node_facts(agent, visited)
    result = compare(calls_a, calls_b, {k: v["title"] for k, v in facts.items()})
    first_of_group: dict[int, int] = {}
    for k, group in enumerate(result.groups):
        if group is not None:
            first_of_group.setdefault(group, k)
    return {"result": result, "facts": facts, "first_of_group": first_of_group}


def compare_picker(agent: Agent, params: dict[str, str]) -> ComparePicker:
    """The form picking the two sessions (``?a=&b=``): the agent's sessions and the picked."""
    return {
        "agent": agent.slug,
        "picked": {"a": params.get("a", ""), "b": params.get("b", "")},
        "choices": [
            {"id": s, "rows": n}
            for s, n in AgentSession.objects.filter(agent=agent)
            .order_by("session_id")
            .values_list("session_id", "rows_count")
        ],
    }


def page_data(
    agent: Agent,
    a: AgentSession,
    b: AgentSession,
    params: dict[str, str],
    picker: ComparePicker,
    *,
    json_twin: bool = False,
) -> SessionComparePage:
    """The page: both sessions, the summary, the node table, one page of pairs, and the form.
    ``json_twin``: a page asked by cursor (``after``, ``before``, ``at``) has no node table."""
    built = comparison_for(agent, a, b)
    result = built["result"]
    facts = built["facts"]
    asked = params.get("show", "")
    show = asked if asked in SHOW else "all"
    positions: range | list[int] = result.differing if show == "diff" else range(len(result.pairs))
    start, stop = _window(positions, params)
    shown = positions[start:stop]
    context = _Links(agent, a, b, facts)
    nodes: list[CompareNode] | None = [
        {
            "group": k,
            "a": context.node(m.a),
            "b": context.node(m.b),
            "a_rows": m.a_rows,
            "b_rows": m.b_rows,
            "shared": m.shared,
            "how": m.how,
            "first": built["first_of_group"].get(k),
        }
        for k, m in enumerate(result.nodes)
    ]
    if json_twin and any(k in params for k in ("after", "before", "at")):
        nodes = None  # a cursor page: the first page has the node table
    rows: list[ComparePair] = []
    for k in shown:
        i, j, status = result.pairs[k]
        rows.append(
            {
                "index": k,
                "status": status,
                "differs": result.differences(k),
                "group": result.groups[k],
                "partner": result.partner.get(k),
                "a": context.side(result.a[i], a) if i is not None else None,
                "b": context.side(result.b[j], b) if j is not None else None,
            }
        )
    return {
        "agent": agent.slug,
        "a": _session_json(agent, a),
        "b": _session_json(agent, b),
        "summary": result.summary,
        "nodes": nodes,
        "show": show,
        "count": len(positions),
        "rows": rows,
        "before": shown[0] if start > 0 else None,
        "after": shown[-1] if stop < len(positions) else None,
        "picked": picker["picked"],
        "choices": picker["choices"],
    }


def token_totals(agent: Agent, a: AgentSession, b: AgentSession) -> CompareTokens:
    """Both sessions' token totals, from their ledgers (each read once per content)."""
    return {"a": _layer_totals(agent, a), "b": _layer_totals(agent, b)}


def _layer_totals(agent: Agent, session: AgentSession) -> LayerTotals:
    layers = session_ledger(agent, session)["layers"]
    return {
        "refs": layers["refs"]["tokens"],
        "summaries": layers["summaries"]["tokens"],
        "canvas": layers["canvas"]["tokens"],
        "block": layers["block"]["tokens"],
    }


def _window(positions: range | list[int], params: dict[str, str]) -> tuple[int, int]:
    """Where the page starts and stops in ``positions``: after/before/at a pair index."""
    cursor = {k: int(v) for k in ("after", "before", "at") if (v := params.get(k, "")).isdigit()}
    if "after" in cursor:
        start = bisect_right(positions, cursor["after"])
    elif "before" in cursor:
        start = max(0, bisect_left(positions, cursor["before"]) - PAGE)
    elif "at" in cursor:
        start = min(bisect_left(positions, cursor["at"]), max(0, len(positions) - 1))
    else:
        start = 0
    return start, min(len(positions), start + PAGE)


def _session_json(agent: Agent, session: AgentSession) -> CompareSession:
    return {
        "id": session.session_id,
        "rows": session.rows_count,
        "first": session.first_timestamp,
        "last": session.last_timestamp,
        "url": reverse("session", args=[agent.slug, session.session_id]),
        "ledger_url": reverse("session-ledger", args=[agent.slug, session.session_id]),
    }


class _Links:
    """Row and node entries of the page, with links to each row, its ref and its node."""

    def __init__(
        self, agent: Agent, a: AgentSession, b: AgentSession, facts: dict[str, NodeFact]
    ) -> None:
        self.facts = facts
        self.node_url = reverse("node-locate", args=[agent.slug])
        self.ref_base = reverse("ref", args=[agent.slug, "__REF__"])
        self.session_urls = {
            s.pk: reverse("session", args=[agent.slug, s.session_id]) for s in (a, b)
        }

    def node(self, node_id: str | None) -> NodeRef | None:
        if node_id is None:
            return None
        fact = self.facts.get(node_id)
        return {
            "id": node_id,
            "title": fact["title"] if fact else None,
            "status": fact["status"] if fact else None,
            "canvas": fact["canvas"] if fact else None,
            "url": f"{self.node_url}?id={quote(node_id, safe='')}",
        }

    def side(self, call: Call, session: AgentSession) -> PairSide:
        name, _ = ref_name(call.result_ref)
        ref_url = None
        if name is not None and call.result_size is not None:  # a ref the index holds
            ref_url = self.ref_base.replace("__REF__", quote(ref_url_name(name)))
        return {
            "row": call.id,
            "line_no": call.line_no,
            "tool_call": call.tool_call,
            "summary": call.summary,
            "score": call.score,
            "node_id": call.node_id,
            "node_title": fact["title"] if (fact := self.facts.get(call.node_id or "")) else None,
            "result_ref": call.result_ref,
            "result_size": call.result_size,
            "ref_url": ref_url,
            "row_url": f"{self.session_urls[session.pk]}?line={call.line_no}#row-{call.id}",
        }
