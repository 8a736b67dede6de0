"""The text handed to mermaid.js: header and fences removed, repairs, status styling, collapsing."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .labels import escape_text
from .model import STATUS_VOCABULARY, Canvas, Statement, Subgraph
from .parser import parse
from .patch import Patch, rewrite_chain
from .repair import repair_text

STATUS_CLASS_PREFIX = "mvz_"
STATUS_STYLES = {
    "done": "fill:#e3f4e1,stroke:#3b8b3b,color:#1d3d1d",
    "doing": "fill:#fff4cc,stroke:#c49a00,color:#3d3000,stroke-width:2px",
    "todo": "fill:#eef2f7,stroke:#7b8794,color:#1f2933",
    "paused": "fill:#ece6f5,stroke:#7d5ba6,color:#2f2140,stroke-dasharray:4 3",
    "blocked": "fill:#fde2e2,stroke:#c0392b,color:#5a1a12",
    # a status word outside the vocabulary (`进行中`), and a node with no status at all
    "other": "fill:#ffffff,stroke:#57606a,color:#1f2328,stroke-dasharray:2 2",
    "none": "fill:#ffffff,stroke:#8c959f,color:#57606a",
}
# Subgraphs: neutral grey-blue, unlike any status (mermaid's default cluster yellow read as "doing").
GROUP_CLASS = f"{STATUS_CLASS_PREFIX}group"
GROUP_STYLE = "fill:#f6f8fa,stroke:#6e7781,color:#24292f,stroke-width:1px"
URGENCY = ("blocked", "doing", "paused", "todo", "done", "other", "none")
NOT_ID_CHARS = re.compile(r"[^\w-]")
REMOVED_FOR_MERMAID = ("meta", "meta_broken", "fence")


def render_body(text: str, collapse: Iterable[str] = (), *, doc: Canvas | None = None) -> str:
    """Mermaid-ready text; collapsed subgraphs become one summary node named by the subgraph id.

    ``doc`` is ``parse(text)`` when the caller has it already (rendering never changes it).
    """
    if doc is None or doc.text != text:
        doc = parse(text)
    if doc.is_escaped_oneliner:
        repaired = repair_text(text)
        if repaired is not None:
            doc = parse(repaired)
    patch = Patch(doc)
    hidden, root_ids = _collapse_map(doc, set(collapse))
    roots = {sub.id: sub for sub in doc.subgraphs if sub.id in root_ids}
    seen: set[tuple[str, str]] = {
        (e.source, e.target) for e in doc.edges if e.source not in hidden and e.target not in hidden
    }
    skip_until = 0
    for statement in doc.statements:
        if statement.line <= skip_until and statement.kind not in ("chain",):
            patch.remove_statement(statement)
            continue
        kind = statement.kind
        if kind in REMOVED_FOR_MERMAID:
            patch.remove_statement(statement)
        elif kind == "subgraph" and statement.name in roots:
            sub = roots[statement.name]
            skip_until = sub.line_end
            patch.replace_statement(statement, [_summary_node(doc, sub, hidden)])
        elif kind == "chain":
            _render_chain(doc, patch, statement, hidden, seen)
        elif kind in ("class", "style", "click") and set(statement.ids) & set(hidden):
            patch.remove_statement(statement)
    body = patch.apply().replace("\r\n", "\n").lstrip("\ufeff").rstrip("\n")
    return "\n".join([body, *_status_lines(doc, hidden)]) + "\n"


def _render_chain(
    doc: Canvas,
    patch: Patch,
    statement: Statement,
    hidden: dict[str, str],
    seen: set[tuple[str, str]],
) -> None:
    text = doc.text
    overrides: dict[int, str] = {}
    for group in statement.groups:
        for ref in group:
            if ref.id in hidden:
                continue
            if ref.label_raw is not None and '\\"' in ref.label_raw:
                overrides[ref.start] = text[ref.start : ref.end].replace('\\"', "#quot;")
    escaped_links = any("&" in link.raw for link in statement.links)
    if not (overrides or escaped_links or any(r.id in hidden for g in statement.groups for r in g)):
        return
    new = rewrite_chain(
        doc,
        statement,
        keep_edge=lambda *_: True,
        rename=hidden,
        drop_nodes=set(),
        overrides=overrides,
        seen=seen,
    )
    if new is None:
        new = [text[statement.start : statement.stop]]
    if escaped_links:
        new = [line.replace("&gt;", ">").replace("&lt;", "<") for line in new]
    patch.replace_statement(statement, new)


def _collapse_map(doc: Canvas, chosen: set[str]) -> tuple[dict[str, str], set[str]]:
    """(node id -> outermost chosen subgraph holding it, the outermost chosen subgraphs)."""
    by_id = {sub.id: sub for sub in doc.subgraphs}

    def outermost(start: str | None) -> str | None:
        found, seen = None, set()
        while start is not None and start in by_id and start not in seen:
            seen.add(start)  # duplicate subgraph ids can make the parent chain loop
            if start in chosen:
                found = start
            start = by_id[start].parent
        return found

    hidden = {
        node.id: summary_id(root)
        for node in doc.nodes.values()
        if (root := outermost(node.subgraph))
    }
    roots = {sub.id for sub in doc.subgraphs if sub.id in chosen and outermost(sub.id) == sub.id}
    for sub in doc.subgraphs:  # links to a subgraph now go to the summary node
        root = outermost(sub.id)
        if root is not None and summary_id(root) != sub.id:
            hidden[sub.id] = summary_id(root)
    return hidden, roots


def summary_id(subgraph_id: str) -> str:
    """The subgraph id as a node id (`subgraph Loose title` has spaces a node id cannot have)."""
    return NOT_ID_CHARS.sub("_", subgraph_id) or "subgraph"


def _summary_node(doc: Canvas, sub: Subgraph, hidden: dict[str, str]) -> str:
    node_id = summary_id(sub.id)
    members = [doc.nodes[n] for n, root in hidden.items() if root == node_id and n in doc.nodes]
    counts: dict[str, int] = {}
    for node in members:
        if node.fields.status:
            counts[node.fields.status] = counts.get(node.fields.status, 0) + 1
    detail = ", ".join(f"{n} {s}" for s, n in counts.items())
    noun = "node" if len(members) == 1 else "nodes"
    label = escape_text(sub.title or sub.id) + f"<br/>{len(members)} {noun}"
    if detail:
        label += " · " + escape_text(detail)
    return f'{node_id}[["{label}"]]'


def status_key(status: str | None) -> str:
    """The style a status gets: its own for the vocabulary, "other" for any word, "none"."""
    if not status:
        return "none"
    return status if status in STATUS_VOCABULARY else "other"


def _status_lines(doc: Canvas, hidden: dict[str, str]) -> list[str]:
    groups: dict[str, list[str]] = {key: [] for key in STATUS_STYLES}
    for node in doc.nodes.values():
        if node.id not in hidden:
            groups[status_key(node.fields.status)].append(node.id)
    for root in sorted(set(hidden.values())):
        keys = {
            status_key(doc.nodes[n].fields.status)
            for n, r in hidden.items()
            if r == root and n in doc.nodes
        }
        groups[next((k for k in URGENCY if k in keys), "none")].append(root)
    # memviz's own class names: the page's legend holds whatever classDefs the agent wrote
    # (an agent's "doing" may be blue in one canvas, yellow in the next); ours come last and win.
    lines: list[str] = []
    for status, ids in groups.items():
        if not ids:
            continue
        lines.append(f"classDef {STATUS_CLASS_PREFIX}{status} {STATUS_STYLES[status]}")
        lines.append(f"class {','.join(ids)} {STATUS_CLASS_PREFIX}{status}")
    shown = [sub.id for sub in doc.subgraphs if sub.id not in hidden and sub.id not in hidden.values()]
    shown = [sid for sid in shown if not NOT_ID_CHARS.search(sid)]
    if shown:
        lines.append(f"classDef {GROUP_CLASS} {GROUP_STYLE}")
        lines.append(f"class {','.join(shown)} {GROUP_CLASS}")
    return lines
