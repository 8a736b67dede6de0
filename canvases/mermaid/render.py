"""The text handed to mermaid.js: rebuilt from the parse, labels as text, status styling, collapsing.

The canvas is untrusted (an LLM wrote it from tool output), and mermaid keeps HTML in labels even
in "strict" mode. So nothing of the file reaches mermaid verbatim: every statement is written
again from its parsed tokens. Node ids come from the lexer's id pattern; labels are decoded to
plain text and escaped (their `<br>` separators stay line breaks); CSS must be plain colours and
lengths; `click`, accessibility text, directives, front matter, comments and statements the
parser could not read are dropped. One pass over the statements: linear in the text, whatever
the nesting. It never raises: a failure renders a one-node diagram that says so (and is logged).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from functools import lru_cache

from .labels import SEGMENT_SPLIT, decode_label
from .lexer import CLASS_SUFFIX, NODE_ID, SHAPE_DELIMITERS
from .model import STATUS_VOCABULARY, Canvas, Link, NodeRef, Statement, Subgraph
from .parser import CLASS_NAME, DIRECTION, parse_drawn
from .vocabulary import STATUS_STYLES as STATUS_LOOKS
from .vocabulary import URGENCY

log = logging.getLogger(__name__)

STATUS_CLASS_PREFIX = "mvz_"
# mermaid's classDef of each status (light theme), in the vocabulary's order: the page's CSS
# comes from the same table.
STATUS_STYLES = {
    style.key: ",".join(
        [f"fill:{style.light.fill}", f"stroke:{style.light.line}", f"color:{style.light.text}"]
        + [f"{name}:{value}" for name, value in style.outline]
    )
    for style in sorted(STATUS_LOOKS, key=lambda s: (STATUS_VOCABULARY + ("other", "none")).index(s.key))
}
# Subgraphs: neutral grey-blue, unlike any status (mermaid's default cluster yellow read as "doing").
GROUP_CLASS = f"{STATUS_CLASS_PREFIX}group"
GROUP_STYLE = "fill:#f6f8fa,stroke:#6e7781,color:#24292f,stroke-width:1px"
NOT_ID_CHARS = re.compile(r"[^\w-]")
# Characters a label keeps as they are; anything else is written as a mermaid entity.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_ENTITY_LIKE = re.compile(r"#(?=\w+;)")
_LABEL_ESCAPES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "#quot;",
    "`": "#96;",
    "%": "#37;",
    "|": "#124;",
    "\\": "#92;",
}
_LABEL_SPECIAL = re.compile('[&<>"`%|\\\\]')
# Text with nothing mermaid or HTML would read: no markup, entity, control or quoting character.
_PLAIN = re.compile('[^&<>"`%|#\\\\\x00-\x1f\x7f-\x9f\u2028\u2029]*')
# Plain colours, lengths and keywords: no url(), no escapes, no quotes, no at-rules.
_SAFE_CSS = re.compile(r"[\w\s#:;,.%()!+-]*")
_UNSAFE_CSS_WORDS = re.compile(r"url|expression|image|import|var\(|attr\(|src", re.IGNORECASE)
_LINK_STYLE = re.compile(r"linkStyle[ \t]+(default|\d+(?:[ \t]*,[ \t]*\d+)*)[ \t]+(.+?)[ \t]*;?")
_EXPANDED_SHAPE = re.compile(r"[a-z][a-z0-9-]{0,30}")
_REFUSED_EXPANDED = frozenset({"image", "img", "icon"})
_SIMPLE_EDGE_LABEL = re.compile(r"[\w .,:!?/+-]*")
_KEPT_KEYWORDS = frozenset(
    {"header", "end", "direction", "class", "classDef", "style", "linkStyle"}
)


def render_body(text: str, collapse: Iterable[str] = (), *, doc: Canvas | None = None) -> str:
    """Mermaid-ready text; collapsed subgraphs become one summary node named by the subgraph id.

    ``doc`` is ``parse(text)`` when the caller has it already (rendering never changes it).
    """
    try:
        return _render(text, set(collapse), doc)
    except Exception as error:  # noqa: BLE001 - a page must show something for any canvas
        log.exception("render_body failed; drawing a placeholder instead")
        return render_failure(error)


def render_failure(error: BaseException) -> str:
    """A diagram that says the canvas could not be drawn (the node list beside it still can)."""
    what = label_text(f"memviz could not draw this canvas ({type(error).__name__})")
    return f'flowchart TD\n  memviz_render_error["{what}"]\n'


def label_text(plain: str) -> str:
    """Plain text as the inside of a quoted mermaid label: shown as text, never read as HTML."""
    plain = _CONTROL.sub(" ", plain)
    plain = _ENTITY_LIKE.sub("#35;", plain)
    if _LABEL_SPECIAL.search(plain):
        plain = _LABEL_SPECIAL.sub(lambda m: _LABEL_ESCAPES[m.group(0)], plain)
    return plain


@lru_cache(maxsize=8192)
def label_from_raw(raw: str) -> str:
    """A raw label (as written in the file) as safe label text; `<br>` separators stay breaks."""
    if len(raw) >= 2 and raw[0] == "`" and raw[-1] == "`":
        raw = raw[1:-1]
    parts = SEGMENT_SPLIT.split(raw.strip())
    if all(_PLAIN.fullmatch(part) for part in parts):
        return "<br>".join(parts)  # nothing to decode or escape: the common case
    return "<br>".join(label_text(decode_label(part)) for part in parts)


class _Renderer:
    def __init__(self, doc: Canvas, chosen: set[str]) -> None:
        self.doc = doc
        self.text = doc.text
        self.hidden, self.roots = _collapse_map(doc, chosen)
        self.seen: set[tuple[str, str]] = {
            (e.source, e.target)
            for e in doc.edges
            if e.source not in self.hidden and e.target not in self.hidden
        }
        # A subgraph id a node id could not be (spaces, quotes) is written as one it can.
        self.sub_ids = {
            sub.id: sub.id if NODE_ID.fullmatch(sub.id) else summary_id(sub.id)
            for sub in doc.subgraphs
        }
        self.lines: list[str] = []

    def indent(self, statement: Statement) -> str:
        starts = self.doc.line_starts
        start = starts[statement.line - 1] if 0 < statement.line <= len(starts) else 0
        line = self.text[start : statement.start]
        return line if not line.strip() else ""

    def run(self) -> list[str]:
        skip_until = 0
        roots = {sub.id: sub for sub in self.doc.subgraphs if sub.id in self.roots}
        for statement in self.doc.statements:
            kind = statement.kind
            if statement.line <= skip_until and kind != "chain":
                continue
            if kind == "subgraph" and statement.name in roots:
                sub = roots[statement.name]
                skip_until = sub.line_end
                self.emit(statement, [self.summary_node(sub)])
            elif kind == "subgraph":
                self.emit(statement, [self.subgraph_line(statement)])
            elif kind == "chain":
                self.emit(statement, self.chain(statement))
            elif kind in _KEPT_KEYWORDS:
                self.emit(statement, self.keyword(statement))
        return self.lines

    def emit(self, statement: Statement, lines: list[str]) -> None:
        indent = self.indent(statement)
        self.lines.extend(indent + line for line in lines if line)

    # --- statements -----------------------------------------------------------------------

    def keyword(self, statement: Statement) -> list[str]:
        raw = self.text[statement.start : statement.stop].strip().rstrip(";").strip()
        kind = statement.kind
        if kind == "header":
            return [raw]
        if kind == "end":
            return ["end"]
        if kind == "direction":
            match = DIRECTION.match(raw)
            return [match.group(0)] if match else []
        if any(i in self.hidden for i in statement.ids):
            return []
        if kind == "class":
            ids = [self.node_id(i) for i in statement.ids]
            kept = [i for i in ids if i]
            if len(kept) == len(ids) and CLASS_NAME.fullmatch(statement.name):
                return [f"class {','.join(kept)} {statement.name}"]
            return []
        if kind == "style":
            css = statement.name
            node = self.node_id(statement.ids[0]) if statement.ids else None
            return [f"style {node} {css}"] if node and _safe_css(css) else []
        if kind == "classDef":
            name, _, css = raw[len("classDef") :].strip().partition(" ")
            css = css.strip()
            if CLASS_NAME.fullmatch(name) and _safe_css(css):
                return [f"classDef {name} {css}"]
            return []
        if kind == "linkStyle" and not self.hidden:
            match = _LINK_STYLE.fullmatch(raw)
            if match and _safe_css(match.group(2)):
                return [f"linkStyle {match.group(1)} {match.group(2)}"]
        return []

    def node_id(self, raw: str) -> str | None:
        if raw in self.sub_ids:
            return self.sub_ids[raw]
        return raw if NODE_ID.fullmatch(raw) else None

    def subgraph_line(self, statement: Statement) -> str:
        sub_id = statement.name
        sub = next((s for s in self._subgraphs_at(statement.line) if s.id == sub_id), None)
        title = sub.title if sub is not None else sub_id
        return f'subgraph {self.sub_ids.get(sub_id, summary_id(sub_id))}["{label_text(title)}"]'

    def _subgraphs_at(self, line: int) -> list[Subgraph]:
        if not hasattr(self, "_by_line"):
            self._by_line: dict[int, list[Subgraph]] = {}
            for sub in self.doc.subgraphs:
                self._by_line.setdefault(sub.line_start, []).append(sub)
        return self._by_line.get(line, [])

    def summary_node(self, sub: Subgraph) -> str:
        node_id = summary_id(sub.id)
        members = self.members.get(node_id, [])
        counts: dict[str, int] = {}
        for node in members:
            if node.fields.status:
                counts[node.fields.status] = counts.get(node.fields.status, 0) + 1
        detail = ", ".join(f"{n} {s}" for s, n in counts.items())
        noun = "node" if len(members) == 1 else "nodes"
        label = label_text(sub.title or sub.id) + f"<br>{len(members)} {noun}"
        if detail:
            label += " · " + label_text(detail)
        return f'{node_id}[["{label}"]]'

    @property
    def members(self) -> dict[str, list]:
        if not hasattr(self, "_members"):
            self._members: dict[str, list] = {}
            for node_id, root in self.hidden.items():
                if node_id in self.doc.nodes:
                    self._members.setdefault(root, []).append(self.doc.nodes[node_id])
        return self._members

    def chain(self, statement: Statement) -> list[str]:
        groups = statement.groups
        if not groups:
            return []
        if len(groups) == 1 and len(groups[0]) == 1 and groups[0][0].id not in self.hidden:
            return [self.ref_text(groups[0][0])]  # a node definition: most lines of a canvas
        links = statement.links[: len(groups) - 1]
        if not any(ref.id in self.hidden for group in groups for ref in group):
            parts = [" & ".join(self.ref_text(ref) for ref in groups[0])]
            for link, group in zip(links, groups[1:], strict=False):
                parts.append(link_text(link))
                parts.append(" & ".join(self.ref_text(ref) for ref in group))
            return [" ".join(parts)]
        return self.collapsed_chain(groups, links)

    def collapsed_chain(self, groups: list[list[NodeRef]], links: list[Link]) -> list[str]:
        """Edges of a chain that touches collapsed nodes, renamed to their summary node."""
        out: list[str] = []
        defined: set[int] = set()

        def emit(ref: NodeRef) -> str:
            if ref.id in self.hidden:
                return self.hidden[ref.id]
            if ref.start in defined or ref.shape is None:
                return ref.id
            defined.add(ref.start)
            return self.ref_text(ref)

        for index, link in enumerate(links):
            for source in groups[index]:
                for target in groups[index + 1]:
                    pair = (
                        self.hidden.get(source.id, source.id),
                        self.hidden.get(target.id, target.id),
                    )
                    renamed = source.id in self.hidden or target.id in self.hidden
                    if renamed and (pair[0] == pair[1] or pair in self.seen):
                        continue
                    self.seen.add(pair)
                    out.append(f"{emit(source)} {link_text(link)} {emit(target)}")
        mentioned = {part for line in out for part in line.split()}
        for group in groups:
            for ref in group:
                if ref.id in self.hidden or ref.start in defined:
                    continue
                if ref.shape is not None or ref.id not in mentioned:
                    out.append(self.ref_text(ref))
                    defined.add(ref.start)
        return out

    def ref_text(self, ref: NodeRef) -> str:
        node_id = self.sub_ids.get(ref.id, ref.id)
        if ref.shape is None or ref.label_raw is None:
            shape = ""
            after = ref.id_end
        else:
            shape = shape_text(ref.shape, label_from_raw(ref.label_raw))
            after = ref.shape_end if ref.shape_end >= 0 else ref.end
        suffix = self.text[after : ref.end] if ref.end > after else ""
        if suffix and not CLASS_SUFFIX.fullmatch(suffix):
            suffix = ""
        return node_id + shape + suffix


def shape_text(shape: str, label: str) -> str:
    delimiters = SHAPE_DELIMITERS.get(shape)
    if delimiters is not None:
        return f'{delimiters[0]}"{label}"{delimiters[1]}'
    if _EXPANDED_SHAPE.fullmatch(shape) and shape not in _REFUSED_EXPANDED:
        return f'@{{ shape: {shape}, label: "{label}" }}'
    return f'["{label}"]'


def link_text(link: Link) -> str:
    arrow = link.arrow.replace("&gt;", ">").replace("&lt;", "<")
    if not link.label:
        return arrow
    if _SIMPLE_EDGE_LABEL.fullmatch(link.label):
        return f"{arrow}|{link.label}|"
    return f'{arrow}|"{label_from_raw(link.label)}"|'


def _safe_css(css: str) -> bool:
    return bool(css) and bool(_SAFE_CSS.fullmatch(css)) and not _UNSAFE_CSS_WORDS.search(css)


def _render(text: str, chosen: set[str], doc: Canvas | None) -> str:
    doc = parse_drawn(text, doc)
    renderer = _Renderer(doc, chosen)
    lines = renderer.run()
    return "\n".join([*lines, *_status_lines(doc, renderer.hidden, renderer.members)]) + "\n"


def _collapse_map(doc: Canvas, chosen: set[str]) -> tuple[dict[str, str], set[str]]:
    """(node id -> outermost chosen subgraph holding it, the outermost chosen subgraphs).

    Subgraphs are listed parent first, so one pass gives each its outermost chosen ancestor.
    """
    outer: dict[str, str | None] = {}
    if chosen:
        for sub in doc.subgraphs:
            above = outer.get(sub.parent) if sub.parent is not None else None
            outer[sub.id] = above or (sub.id if sub.id in chosen else None)
    hidden = {
        node.id: summary_id(root)
        for node in doc.nodes.values()
        if node.subgraph is not None and (root := outer.get(node.subgraph))
    }
    roots = {sub_id for sub_id, root in outer.items() if root == sub_id}
    for sub_id, root in outer.items():  # links to a subgraph now go to the summary node
        if root is not None and summary_id(root) != sub_id:
            hidden[sub_id] = summary_id(root)
    return hidden, roots


def summary_id(subgraph_id: str) -> str:
    """The subgraph id as a node id (`subgraph Loose title` has spaces a node id cannot have)."""
    return NOT_ID_CHARS.sub("_", subgraph_id) or "subgraph"


def status_key(status: str | None) -> str:
    """The style a status gets: its own for the vocabulary, "other" for any word, "none"."""
    if not status:
        return "none"
    return status if status in STATUS_VOCABULARY else "other"


def _status_lines(doc: Canvas, hidden: dict[str, str], members: dict[str, list]) -> list[str]:
    groups: dict[str, list[str]] = {key: [] for key in STATUS_STYLES}
    for node in doc.nodes.values():
        if node.id not in hidden:
            groups[status_key(node.fields.status)].append(node.id)
    for root in sorted(set(hidden.values())):
        keys = {status_key(node.fields.status) for node in members.get(root, [])}
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
