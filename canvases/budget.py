"""Curating a canvas to a character budget: each node's share of the injected block, and
suggestions (merge finished chains, prune nodes whose rows are all low-score or dropped, shorten
long summaries) that bring the canvas to a target; bulk steps chosen by a filter.

No Django, no files: text in, text and numbers out. A suggestion is a *step*, replayed on the
text as it is when it is applied (`apply_steps`), so any chosen subset applies as one revision
through `canvases.services`, and the rows a step takes off the canvas follow the node that
absorbed them (the merge op's rule), never left on no canvas.
"""

from __future__ import annotations

import difflib
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agentfs.state_edit import CANVAS_BUDGET_CHARS
from canvases.mermaid import EditError, EditResult, agent_view, edits, parse
from canvases.mermaid.labels import truncate
from canvases.mermaid.model import Canvas as Doc
from canvases.mermaid.wording import Note

DEFAULT_TARGET = CANVAS_BUDGET_CHARS  # spec §4.6: the map-builder keeps a canvas near 4,000
DEFAULT_LOW_SCORE = 3.0  # a row's score (0–10 replaceability) at or below this counts as low
DEFAULT_SUMMARY_LIMIT = 60
CHAIN_TITLE_LIMIT = 80
MAX_STEPS = 500  # one request never runs more engine edits than this
MAX_SUGGESTIONS = 150  # ~2.5 s on a 300-node canvas of a loaded 2-core machine; more: ask again
STEP_OPS = ("merge", "fold", "set_status", "shorten")
BULK_ACTIONS = ("merge_done", "set_status", "prune_find")


@dataclass(frozen=True, slots=True)
class RowStats:
    """A node's rows as the suggestions need them: how many, and how many are low or dropped."""

    rows: int = 0
    low_or_dropped: int = 0


@dataclass(frozen=True, slots=True)
class NodeShare:
    id: str
    title: str
    status: str | None
    chars: int
    percent: float  # of the injected block


@dataclass(frozen=True, slots=True)
class Shares:
    block_chars: int  # the preview's count (agent_view.block_preview), code points
    block_tokens: int
    canvas_chars: int
    overhead: int  # fixed lines of the block, metadata, header, subgraphs, classDefs
    nodes: list[NodeShare]


@dataclass(slots=True)
class Suggestion:
    key: str
    kind: str  # "merge" | "prune" | "shorten"
    nodes: list[str]
    step: dict[str, Any]
    before_chars: int  # canvas characters before this suggestion (the ones above applied)
    after_chars: int
    diff: str

    @property
    def saved(self) -> int:
        return self.before_chars - self.after_chars


@dataclass(slots=True)
class Plan:
    target: int
    canvas_chars: int
    block_chars: int
    after_canvas_chars: int
    after_block_chars: int
    after_block_tokens: int
    reached: bool
    elapsed_ms: float
    suggestions: list[Suggestion] = field(default_factory=list)
    more: bool = False  # stopped at MAX_SUGGESTIONS: applying them and asking again goes on

    @property
    def steps(self) -> list[dict[str, Any]]:
        return [s.step for s in self.suggestions]


# ---------------------------------------------------------------------------------------------
# shares


def node_shares(
    filename: str, text: str, preview: agent_view.BlockPreview | None = None
) -> Shares:
    """Each node's characters in the block the agent injects, by the preview's own count.

    A node owns its definitions and mentions; the rest of a statement that names nodes (links,
    indentation, line break, `class a,b done`) is split evenly among the nodes it names. What
    names no node is overhead; so the shares and the overhead add up to the block exactly.
    `preview`: the block already built for `text` (its tokens are not counted twice).
    """
    preview = preview or agent_view.block_preview(filename, text)
    if preview is None:
        return Shares(0, 0, 0, 0, [])
    doc = parse(text)
    owned: dict[str, float] = dict.fromkeys(doc.nodes, 0.0)
    starts = Counter(s.line for s in doc.statements)
    for statement in doc.statements:
        refs = [ref for group in statement.groups for ref in group]
        ids = [i for i in dict.fromkeys([r.id for r in refs] + list(statement.ids)) if i in owned]
        if not ids:
            continue
        start, stop = statement.start, statement.stop
        if starts[statement.line] == 1:  # alone on its lines: indentation and "\n" too
            start = doc.line_starts[statement.line - 1]
            stop = _line_end(text, doc, statement.line_end)
        rest = float(stop - start)
        for ref in refs:
            if ref.id in owned:
                owned[ref.id] += ref.end - ref.start
                rest -= ref.end - ref.start
        for node_id in ids:
            owned[node_id] += rest / len(ids)
    shares = [
        NodeShare(
            id=node_id,
            title=node.fields.title,
            status=node.fields.status,
            chars=round(owned[node_id]),
            percent=round(100 * owned[node_id] / preview.chars, 1),
        )
        for node_id, node in doc.nodes.items()
    ]
    shares.sort(key=lambda s: -s.chars)
    overhead = preview.chars - sum(s.chars for s in shares)
    return Shares(preview.chars, preview.tokens, len(text), overhead, shares)


def _line_end(text: str, doc: Doc, line: int) -> int:
    """Offset after line `line` (1-based), its line break included."""
    if line < len(doc.line_starts):
        return doc.line_starts[line]
    return len(text)


# ---------------------------------------------------------------------------------------------
# steps: replayed on the text at apply time


def apply_steps(text: str, steps: object) -> EditResult:
    """Run the steps in order; one result whose `id_map` sends every removed node's rows to the
    node that holds them at the end (a merge's survivor, a pruned node's neighbour)."""
    if not isinstance(steps, list) or not steps:
        raise EditError("no_steps")
    if len(steps) > MAX_STEPS:
        raise EditError("too_many_steps", count=len(steps), limit=MAX_STEPS)
    moved: dict[str, str] = {}
    removed: list[str] = []
    notes: list[Note] = []
    current = text
    for step in steps:
        result = _step(current, step)
        for old, new in moved.items():
            moved[old] = result.id_map.get(new, new)
        moved.update(result.id_map)
        removed += result.removed
        notes += [n for n in result.notes if n not in notes]
        current = result.text
    return EditResult(text=current, id_map=moved, removed=removed, notes=notes)


def _step(text: str, step: object) -> EditResult:
    if not isinstance(step, dict) or step.get("op") not in STEP_OPS:
        raise EditError("step_op", ops=", ".join(STEP_OPS))
    op = step["op"]
    node = step.get("node")
    if op == "merge":
        return merge_fields(text, step)
    if not isinstance(node, str):
        raise EditError("step_node", op=op)
    if op == "set_status":
        return edits.set_status(text, node, _text(step, "status") or "")
    if op == "fold":
        return fold(text, node)
    limit = step.get("limit", DEFAULT_SUMMARY_LIMIT)
    if not isinstance(limit, int) or limit < 10:
        raise EditError("step_limit")
    return shorten(text, node, limit)


def merge_fields(text: str, fields: dict[str, Any]) -> EditResult:
    """A merge from untrusted fields: the ops endpoint's `merge` and a batch's merge step."""
    nodes = fields.get("nodes", [])  # the ops endpoint leaves an empty list out
    if not isinstance(nodes, list) or not all(isinstance(n, str) for n in nodes):
        raise EditError("merge_node_list")
    into = _text(fields, "into")
    if len(set(nodes) | ({into} if into else set())) < 2:
        raise EditError("merge_two")
    return edits.merge(
        text,
        nodes,
        into=into,
        label=_text(fields, "label"),
        summary=_text(fields, "summary"),
        status=_text(fields, "status"),
    )


def _text(step: dict[str, Any], key: str) -> str | None:
    value = step.get(key)
    if value is not None and not isinstance(value, str):
        raise EditError("not_text", field=key)
    return value or None


def fold(text: str, node_id: str) -> EditResult:
    """Prune a node (bridging its edges) and give its rows to a neighbour: its first
    predecessor, else its first successor. A node with no neighbour is refused: its rows
    would be left on no canvas."""
    doc = parse(text)
    if node_id not in doc.nodes:
        raise EditError("no_node", node=node_id)
    neighbours = [e.source for e in doc.edges if e.target == node_id and e.source != node_id]
    neighbours += [e.target for e in doc.edges if e.source == node_id and e.target != node_id]
    if not neighbours:
        raise EditError("no_neighbour", node=node_id)
    result = edits.prune(text, node_id, bridge=True)
    result.id_map = {node_id: neighbours[0]}
    return result


def shorten(text: str, node_id: str, limit: int) -> EditResult:
    doc = parse(text)
    if node_id not in doc.nodes:
        raise EditError("no_node", node=node_id)
    summary = doc.nodes[node_id].fields.summary or ""
    if len(summary) <= limit:
        raise EditError("already_short", node=node_id, limit=limit)
    return edits.edit_label(text, node_id, summary=truncate(summary, limit))


def step_nodes(steps: object) -> list[str]:
    """The node ids the steps name (for the clean re-apply rule)."""
    out: list[str] = []
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, dict):
            nodes = step.get("nodes")
            named: list[Any] = nodes if isinstance(nodes, list) else [step.get("node")]
            out += [n for n in named if isinstance(n, str)]
    return out


# ---------------------------------------------------------------------------------------------
# bulk operations by filter


def bulk_steps(text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps of a bulk action, chosen on the text it will be applied to."""
    action = params.get("action")
    doc = parse(text)
    if action == "merge_done":
        group = params.get("group")
        if not isinstance(group, str) or group not in {s.id for s in doc.subgraphs}:
            raise EditError("choose_group")
        members = _group_members(doc, group)
        done = [i for i in doc.nodes if i in members and doc.nodes[i].fields.status == "done"]
        if len(done) < 2:
            raise EditError("group_few_done", group=group)
        return [{"op": "merge", "nodes": done, "into": done[0], "status": "done"}]
    if action == "set_status":
        nodes, status = params.get("nodes"), params.get("status")
        if not isinstance(nodes, list) or not nodes or not isinstance(status, str) or not status:
            raise EditError("nodes_and_status")
        return [{"op": "set_status", "node": n, "status": status} for n in nodes]
    if action == "prune_find":
        query = params.get("query")
        if not isinstance(query, str) or not query.strip():
            raise EditError("find_what")
        hits = find(doc, query)
        if not hits:
            raise EditError("no_match", query=query)
        return [{"op": "fold", "node": n} for n in hits]
    raise EditError("bulk_action", actions=", ".join(BULK_ACTIONS))


def _group_members(doc: Doc, group: str) -> set[str]:
    """The nodes of a subgraph and of the subgraphs nested in it."""
    inside = {group}
    for subgraph in doc.subgraphs:  # parents are listed before their children
        if subgraph.parent in inside:
            inside.add(subgraph.id)
    return {n for s in doc.subgraphs if s.id in inside for n in s.node_ids}


def find(doc: Doc, query: str) -> list[str]:
    """The page's find (static/js/canvas-nav.js): every word in id, label lines or status."""
    words = query.lower().split()
    hits = []
    for node_id, node in doc.nodes.items():
        f = node.fields
        lines = [f.title, f"summary: {f.summary}" if f.summary else "", *f.extra.values()]
        haystack = f"{node_id}\n" + "\n".join(lines) + f"\nstatus: {f.status or 'none'}"
        if all(word in haystack.lower() for word in words):
            hits.append(node_id)
    return hits


# ---------------------------------------------------------------------------------------------
# suggestions


def suggest(
    filename: str,
    text: str,
    stats: dict[str, RowStats],
    *,
    target: int = DEFAULT_TARGET,
    summary_limit: int = DEFAULT_SUMMARY_LIMIT,
    clock: Callable[[], float] = time.perf_counter,
) -> Plan:
    """Suggestions, in the order they apply, until the canvas fits `target` characters.

    Finished chains are merged first (they lose the most and keep every row), then nodes whose
    rows are all low-score or dropped are pruned into a neighbour, then the longest summaries
    shortened. Each suggestion is measured and diffed against the text the ones above leave.
    """
    started = clock()
    current = text
    chosen: list[Suggestion] = []
    for kind, make in (("merge", _chain_steps), ("prune", _fold_steps), ("shorten", _shorten_steps)):
        if len(current) <= target:
            break
        for step in make(parse(current), stats, summary_limit):
            if len(current) <= target or len(chosen) == MAX_SUGGESTIONS:
                break
            try:
                after = _step(current, step).text
            except EditError:
                continue  # an earlier suggestion changed what this one needs
            if len(after) >= len(current):
                continue
            nodes = step.get("nodes") or [step["node"]]
            chosen.append(
                Suggestion(
                    key=f"{kind}:{nodes[0]}",
                    kind=kind,
                    nodes=list(nodes),
                    step=step,
                    before_chars=len(current),
                    after_chars=len(after),
                    diff=_diff(current, after),
                )
            )
            current = after
    before = agent_view.block_preview(filename, text)
    after_block = agent_view.block_preview(filename, current)
    return Plan(
        target=target,
        canvas_chars=len(text),
        block_chars=before.chars if before else 0,
        after_canvas_chars=len(current),
        after_block_chars=after_block.chars if after_block else 0,
        after_block_tokens=after_block.tokens if after_block else 0,
        reached=len(current) <= target,
        elapsed_ms=round((clock() - started) * 1000, 1),
        suggestions=chosen,
        more=len(chosen) == MAX_SUGGESTIONS and len(current) > target,
    )


def _diff(before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), "before", "after", n=0, lineterm=""
    )
    return "\n".join(list(lines)[2:])  # the two file-name lines say nothing here


def finished_chains(doc: Doc) -> list[list[str]]:
    """Runs of done nodes linked one to the next, each link the only way out of the first and
    the only way into the second, within one group; longest first."""
    done = {i for i, n in doc.nodes.items() if n.fields.status == "done"}
    outs: dict[str, set[str]] = {}
    ins: dict[str, set[str]] = {}
    for e in doc.edges:
        if e.source != e.target:
            outs.setdefault(e.source, set()).add(e.target)
            ins.setdefault(e.target, set()).add(e.source)

    def next_of(node_id: str) -> str | None:
        targets = outs.get(node_id, set())
        if node_id not in done or len(targets) != 1:
            return None
        (target,) = targets
        same_group = doc.nodes[target].subgraph == doc.nodes[node_id].subgraph
        if target in done and ins.get(target) == {node_id} and same_group:
            return target
        return None

    heads = [i for i in doc.nodes if i in done and not any(next_of(p) == i for p in ins.get(i, ()))]
    chains = []
    for head in heads:
        chain, node = [head], next_of(head)
        while node is not None and node not in chain:
            chain.append(node)
            node = next_of(node)
        if len(chain) >= 2:
            chains.append(chain)
    return sorted(chains, key=len, reverse=True)


def _chain_steps(doc: Doc, _stats: dict[str, RowStats], limit: int) -> Iterable[dict[str, Any]]:
    for chain in finished_chains(doc):
        fields = [doc.nodes[i].fields for i in chain]
        titles = list(dict.fromkeys(f.title for f in fields if f.title))
        summaries = list(dict.fromkeys(f.summary for f in fields if f.summary))
        label = " → ".join([titles[0], titles[-1]] if len(titles) > 1 else titles) or chain[0]
        step: dict[str, Any] = {
            "op": "merge",
            "nodes": chain,
            "into": chain[0],
            "label": truncate(label, CHAIN_TITLE_LIMIT),
            "status": "done",
        }
        if summaries:
            step["summary"] = truncate("; ".join(summaries), limit)
        yield step


def _fold_steps(doc: Doc, stats: dict[str, RowStats], _limit: int) -> Iterable[dict[str, Any]]:
    for node_id, node in doc.nodes.items():
        s = stats.get(node_id)
        if s and s.rows and s.low_or_dropped == s.rows and node.fields.status != "doing":
            yield {"op": "fold", "node": node_id}


def _shorten_steps(doc: Doc, _stats: dict[str, RowStats], limit: int) -> Iterable[dict[str, Any]]:
    long = [(len(n.fields.summary or ""), i) for i, n in doc.nodes.items()]
    for length, node_id in sorted(long, key=lambda item: -item[0]):
        if length > limit:
            yield {"op": "shorten", "node": node_id, "limit": limit}
