"""The tolerant flowchart parser: any text in, a Canvas with what could be read and its problems."""

from __future__ import annotations

import re

from .labels import decode_label
from .lexer import FAST_LINE, SHAPE_OF_PAIR, link_kind, scan_chain, skip_spaces
from .mermaid_rules import mermaid_text_problems
from .meta import build_meta, is_directive, parse_braced, parse_comment
from .model import Canvas, Edge, Link, Node, NodeRef, Problem, Statement, Subgraph
from .repair import looks_escaped_oneliner, repair_text

HEADER = re.compile(
    r"(flowchart-elk|flowchart|graph)(?:[ \t]+(TB|TD|BT|RL|LR|<|>|\^|v))?"
    r"[ \t]*;?[ \t]*(?=$|\r?\n|%%)",
    re.IGNORECASE,
)
OTHER_DIAGRAM = re.compile(
    r"(sequenceDiagram|classDiagram|stateDiagram|erDiagram|gantt|pie|journey|gitGraph|mindmap|timeline)\b"
)
KEYWORD = re.compile(
    r"(subgraph|end|direction|classDef|class|style|linkStyle|click|accTitle|accDescr)"
    r"(?=[ \t;]|$|\r?\n)"
)
SUBGRAPH = re.compile(
    r"""subgraph[ \t]+(?:(?P<id>[^\s\["]+)[ \t]*(?:\[(?P<title>[^\n]*?)\])?"""
    r"""|"(?P<quoted>[^"\n]*)"|(?P<bare>[^\n;]*?))[ \t]*;?[ \t]*$"""
)
CLASS_NAME = re.compile(r"[\w-]+")
DIRECTION = re.compile(r"direction[ \t]+(TB|TD|BT|RL|LR)\b")
ID_LIST = re.compile(r"[^\s,;]+")
ACC = re.compile(r"(accTitle|accDescr)[ \t]*(:|\{)")
FENCE = re.compile(r"[ \t]*```+[ \t]*(?:mermaid)?[ \t]*$", re.IGNORECASE)
RESERVED_IDS = {"end"}


class _State:
    __slots__ = ("canvas", "text", "stack", "header_seen")

    def __init__(self, canvas: Canvas) -> None:
        self.canvas = canvas
        self.text = canvas.text
        self.stack: list[Subgraph] = []
        self.header_seen = False


def parse(text: str) -> Canvas:
    """Parse any string; never raises."""
    if not isinstance(text, str):
        text = str(text)
    canvas = Canvas(text=text)
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    canvas.line_starts = starts
    state = _State(canvas)
    try:
        _parse_lines(state)
    except Exception as error:  # noqa: BLE001 - the parser must never fail its caller
        canvas.problems.append(Problem(1, 1, "internal_error", "error", {"error": repr(error)}))
    _finish(state)
    if canvas.is_escaped_oneliner:
        _read_oneliner(canvas)
    return canvas


def parse_drawn(text: str, doc: Canvas | None = None) -> Canvas:
    """The canvas a picture of `text` shows: `doc` (its parse, when the caller has it) or a new
    parse; for a one-line file full of literal ``\\n``, the parse of its repair."""
    if doc is None or doc.text != text:
        doc = parse(text)
    if doc.is_escaped_oneliner:
        repaired = repair_text(text)
        if repaired is not None:
            doc = parse(repaired)
    return doc


def _read_oneliner(canvas: Canvas) -> None:
    """Show what the one-liner stands for; its offsets are not this text's, so edits refuse it."""
    repaired = repair_text(canvas.text)
    if repaired is None:
        return
    inner = parse(repaired)
    canvas.header, canvas.direction, canvas.meta = inner.header, inner.direction, inner.meta
    canvas.nodes, canvas.edges, canvas.subgraphs = inner.nodes, inner.edges, inner.subgraphs
    for node in canvas.nodes.values():
        node.line = 1
    for edge in canvas.edges:
        edge.line = 1
    for sub in canvas.subgraphs:
        sub.line_start = sub.line_end = 1
    canvas.meta.line = canvas.meta.line_end = 1 if canvas.meta.line else None
    canvas.problems = [Problem(1, 1, "escaped_oneliner", "error")]


def _parse_lines(state: _State) -> None:
    canvas, text = state.canvas, state.text
    starts = canvas.line_starts
    count = len(starts)
    size = len(text)
    index = 0
    meta_comments: dict[str, object] = {}
    meta_lines: list[int] = []
    first_content = True
    statements, nodes, edges = canvas.statements, canvas.nodes, canvas.edges
    fast_match = FAST_LINE.match
    while index < count:
        line_start = starts[index]
        if state.header_seen:
            match = fast_match(text, line_start)
            if match is not None and _fast(state, match, index + 1, statements, nodes, edges):
                index += 1
                continue
        eol = starts[index + 1] - 1 if index + 1 < count else size
        if eol > line_start and text[eol - 1] == "\r":
            eol -= 1
        pos = skip_spaces(text, line_start)
        if pos == 0 and text.startswith("\ufeff"):
            pos = skip_spaces(text, 1)
            canvas.problems.append(Problem(1, 1, "bom", "warning"))
        lineno = index + 1
        index += 1
        if pos >= eol:
            continue
        char = text[pos]
        if char == "%":
            line = text[pos:eol]
            braced = parse_braced(line) if "{" in line else None
            if braced is not None and not is_directive(braced[1]):
                form, values = braced
                if canvas.meta.form == "none":
                    canvas.meta = build_meta(form, values, lineno, lineno)
                    _check_meta_position(canvas, lineno, form)
                _add(canvas, "meta", lineno, lineno, pos, eol)
                continue
            if braced is None and line.startswith("%%{"):
                col = pos - line_start + 1
                canvas.problems.append(Problem(lineno, col, "unclosed_directive", "warning"))
                _add(canvas, "meta_broken", lineno, lineno, pos, eol)
                continue
            if line.startswith("%%"):
                comment = None if state.header_seen else parse_comment(line)
                if comment is not None and canvas.meta.form in ("none", "comment"):
                    meta_comments[comment[0]] = comment[1]
                    meta_lines.append(lineno)
                    _add(canvas, "meta_comment", lineno, lineno, pos, eol)
                else:
                    _add(canvas, "comment", lineno, lineno, pos, eol)
                continue
        if char == "`" and FENCE.fullmatch(text, line_start, eol):
            canvas.fenced = True
            _add(canvas, "fence", lineno, lineno, pos, eol)
            if first_content:
                canvas.problems.append(Problem(lineno, 1, "fenced", "warning"))
            first_content = False
            continue
        first_content = False
        if not state.header_seen:
            if text.startswith("---", pos) and text[pos:eol].strip() == "---":
                index = _skip_front_matter(canvas, index, lineno, pos)
                continue
            match = HEADER.match(text, pos)
            if match is not None:
                state.header_seen = True
                canvas.header = match.group(1).lower()
                canvas.direction = (match.group(2) or "").upper() or None
                _add(canvas, "header", lineno, lineno, pos, match.end())
                continue
            state.header_seen = True
            other = OTHER_DIAGRAM.match(text, pos)
            col = pos - line_start + 1
            canvas.problems.append(
                Problem(lineno, col, "not_flowchart", "error", {"kind": other.group(1)})
                if other
                else Problem(lineno, col, "header_missing", "error")
            )
        index = _statements(state, lineno, line_start, pos, eol, index)
    if meta_comments and canvas.meta.form == "none":
        canvas.meta = build_meta("comment", meta_comments, meta_lines[0], meta_lines[-1])
    for sub in state.stack:
        canvas.problems.append(
            Problem(sub.line_start, 1, "subgraph_open", "error", {"id": sub.id})
        )
        sub.line_end = len(starts)


def _fast(
    state: _State,
    match: re.Match[str],
    lineno: int,
    statements: list[Statement],
    nodes: dict[str, Node],
    edges: list[Edge],
) -> bool:
    """Record a line read by FAST_LINE; False sends it to the general path."""
    first, opener, label, closer, arrow, link_label, second, semicolon = match.groups()
    sub = state.stack[-1].id if state.stack else None
    start, id_end = match.span(1)
    if opener is not None:
        shape = SHAPE_OF_PAIR.get((opener, closer))
        if shape is None or label.endswith("\\"):
            return False
        end = match.end(4)
        ref = NodeRef(first, start, id_end, end, shape, label, id_end, end, True)
        stop = match.end(8) if semicolon else end
        statements.append(Statement("chain", lineno, lineno, start, stop, [[ref]]))
        node = nodes.get(first)
        if node is None:
            nodes[first] = Node(first, "", "", "bare", lineno, sub, [ref], ref)
            return True
        node.refs.append(ref)
        if node.label_ref is None:
            node.line = lineno
        node.label_ref = ref
        if node.subgraph is None and sub is not None:
            node.subgraph = sub
        return True
    arrow_start, arrow_end = match.span(5)
    if link_label is not None:
        link_end = match.end(6) + 1
        link_label = link_label.strip().strip('"')
    else:
        link_end = arrow_end
    kind = link_kind(arrow)
    link = Link(state.text[arrow_start:link_end], arrow, kind, link_label, arrow_start, link_end)
    source = NodeRef(first, start, id_end, id_end)
    target_start, target_end = match.span(7)
    target = NodeRef(second, target_start, target_end, target_end)
    stop = match.end(8) if semicolon else target_end
    number = len(statements)
    statements.append(Statement("chain", lineno, lineno, start, stop, [[source], [target]], [link]))
    for ref in (source, target):
        node = nodes.get(ref.id)
        if node is None:
            nodes[ref.id] = Node(ref.id, "", "", "bare", lineno, sub, [ref])
        else:
            node.refs.append(ref)
            if node.subgraph is None and sub is not None:
                node.subgraph = sub
    edges.append(Edge(first, second, link_label, kind, arrow, lineno, number, 0))
    return True


def _check_meta_position(canvas: Canvas, lineno: int, form: str) -> None:
    if lineno != 1 or canvas.text.startswith("\ufeff"):
        canvas.problems.append(Problem(lineno, 1, "meta_not_first", "warning"))
    if form in ("loose", "single_percent"):
        canvas.problems.append(Problem(lineno, 1, "meta_not_json", "warning", {"form": form}))


def _skip_front_matter(canvas: Canvas, index: int, lineno: int, pos: int) -> int:
    starts, text = canvas.line_starts, canvas.text
    for other in range(index, len(starts)):
        end = starts[other + 1] if other + 1 < len(starts) else len(text)
        if text[starts[other] : end].strip() == "---":
            _add(canvas, "front_matter", lineno, other + 1, pos, end)
            if other == index:
                canvas.problems.append(Problem(lineno, 1, "front_matter_empty", "error"))
            return other + 1
    canvas.problems.append(Problem(lineno, 1, "front_matter_open", "error"))
    return len(starts)


def _add(canvas: Canvas, kind: str, line: int, line_end: int, start: int, stop: int) -> Statement:
    statement = Statement(kind, line, line_end, start, stop)
    canvas.statements.append(statement)
    return statement


def _statements(state: _State, lineno: int, line_start: int, pos: int, eol: int, index: int) -> int:
    """Read the statements of one line (several when `;` separates them); returns the next line."""
    canvas, text = state.canvas, state.text
    while pos < eol:
        acc = ACC.match(text, pos)
        if acc is not None:
            return _accessibility(state, acc, lineno, eol, index)
        keyword = KEYWORD.match(text, pos)
        if keyword is not None:
            _keyword(state, keyword.group(1), lineno, pos, eol)
            return index
        if text.startswith("%%", pos):
            _add(canvas, "comment", lineno, lineno, pos, eol)
            return index
        groups, links, stop, error = scan_chain(text, pos, eol)
        if groups:
            statement = _add(canvas, "chain", lineno, lineno, pos, stop)
            if stop > eol:
                statement.line_end = canvas.line_of(stop)
                index = statement.line_end
                line_start = canvas.line_starts[index - 1]
                eol = _eol(text, canvas.line_starts, index - 1)
            _chain(state, statement, groups, links)
        if error is not None:
            line = canvas.line_of(error.pos)
            col = error.pos - canvas.line_starts[line - 1] + 1
            canvas.problems.append(Problem(line, col, error.code, "error", error.values))
            if not groups:
                _add(canvas, "unknown", lineno, lineno, pos, eol)
            return index
        pos = skip_spaces(text, stop)
        if pos < eol and text[pos] == ";":
            statement.stop = pos + 1
            pos = skip_spaces(text, pos + 1)
            continue
        if pos < eol and not text.startswith("%%", pos):
            if (
                not links
                and len(groups) == 1
                and len(groups[0]) == 1
                and groups[0][0].shape is None
            ):
                _forget_words(canvas, statement)  # prose, not a node
            col = pos - line_start + 1
            found = {"text": text[pos:eol][:30]}
            canvas.problems.append(Problem(lineno, col, "unexpected_text", "error", found))
            _add(canvas, "unknown", lineno, lineno, pos, eol)
            return index
    return index


def _accessibility(state: _State, acc: re.Match[str], lineno: int, eol: int, index: int) -> int:
    """`accTitle: …`, `accDescr: …` or a `accDescr { … }` block: text for screen readers."""
    canvas, text = state.canvas, state.text
    stop = eol
    if acc.group(2) == "{":
        close = text.find("}", acc.end())
        stop = close + 1 if close >= 0 else len(text)
        value = text[acc.end() : stop - 1 if close >= 0 else stop]
        value = "\n".join(line.strip() for line in value.strip().splitlines())
    else:
        value = text[acc.end() : eol].strip()
    statement = _add(canvas, acc.group(1), lineno, lineno, acc.start(), stop)
    if stop > eol:
        statement.line_end = canvas.line_of(stop - 1)
        index = statement.line_end
    if acc.group(1) == "accTitle":
        canvas.acc_title = value
    else:
        canvas.acc_descr = value
    return index


def _forget_words(canvas: Canvas, statement: Statement) -> None:
    ref = statement.groups[0][0]
    node = canvas.nodes.get(ref.id)
    if node is not None:
        node.refs.remove(ref)
        if not node.refs:
            del canvas.nodes[ref.id]
    statement.kind = "unknown"
    statement.groups = []


def _eol(text: str, starts: list[int], index: int) -> int:
    eol = starts[index + 1] - 1 if index + 1 < len(starts) else len(text)
    if eol > starts[index] and text[eol - 1] == "\r":
        eol -= 1
    return eol


def _keyword(state: _State, word: str, lineno: int, pos: int, eol: int) -> None:
    canvas, text = state.canvas, state.text
    stop = eol
    while stop > pos and text[stop - 1] in " \t":
        stop -= 1
    statement = _add(canvas, word, lineno, lineno, pos, stop)
    rest = text[pos + len(word) : stop].strip()
    if word == "subgraph":
        match = SUBGRAPH.match(text[pos:stop])
        if match is None or not (match.group("id") or match.group("quoted") or match.group("bare")):
            canvas.problems.append(Problem(lineno, 1, "subgraph_no_id", "error"))
            sub_id, title = f"subgraph-{lineno}", ""
        elif match.group("id"):
            sub_id = match.group("id")
            title = (match.group("title") or sub_id).strip().strip('"')
        else:
            sub_id = title = (match.group("quoted") or match.group("bare") or "").strip()
        parent = state.stack[-1].id if state.stack else None
        sub = Subgraph(sub_id, decode_label(title), parent, [], lineno, lineno, title)
        statement.name = sub_id
        canvas.subgraphs.append(sub)
        state.stack.append(sub)
    elif word == "end":
        if rest.strip(";").strip():
            canvas.problems.append(Problem(lineno, 1, "end_text", "error"))
        if state.stack:
            state.stack.pop().line_end = lineno
        else:
            canvas.problems.append(Problem(lineno, 1, "end_alone", "error"))
    elif word == "direction":
        if DIRECTION.match(text, pos) is None:
            canvas.problems.append(Problem(lineno, 1, "direction_word", "error"))
    elif word in ("class", "style", "click"):
        parts = rest.split(None, 1)
        if not parts:
            canvas.problems.append(Problem(lineno, 1, "statement_no_id", "error", {"word": word}))
            return
        statement.ids = ID_LIST.findall(parts[0]) if word == "class" else [parts[0]]
        statement.name = parts[1].strip().rstrip(";").strip() if len(parts) > 1 else ""
        if word == "class" and not CLASS_NAME.fullmatch(statement.name):
            name = {"name": statement.name[:30]}
            canvas.problems.append(Problem(lineno, 1, "class_name", "error", name))
    elif word == "classDef":
        parts = rest.split(None, 1)
        statement.name = parts[0] if parts else ""


def _chain(state: _State, statement: Statement, groups: list[list[NodeRef]], links: list) -> None:
    canvas = state.canvas
    statement.groups = groups
    statement.links = links
    nodes = canvas.nodes
    sub = state.stack[-1].id if state.stack else None
    number = len(canvas.statements) - 1
    for group in groups:
        for ref in group:
            node = nodes.get(ref.id)
            if node is None:
                node = Node(ref.id, "", "", "bare", statement.line, sub)
                nodes[ref.id] = node
            elif node.subgraph is None and sub is not None:
                node.subgraph = sub
            node.refs.append(ref)
            if ref.shape is not None:
                if node.label_ref is None:
                    node.line = (
                        statement.line
                        if statement.line == statement.line_end
                        else canvas.line_of(ref.start)
                    )
                node.label_ref = ref
    line_of = canvas.line_of
    for position, link in enumerate(links):
        line = statement.line if statement.line == statement.line_end else line_of(link.start)
        for source in groups[position]:
            for target in groups[position + 1]:
                edge = Edge(source.id, target.id, link.label, link.kind, link.arrow, line)
                edge.statement, edge.link = number, position
                canvas.edges.append(edge)


def _finish(state: _State) -> None:
    canvas = state.canvas
    subgraph_ids = {sub.id for sub in canvas.subgraphs}
    members: dict[str, list[str]] = {sub.id: [] for sub in canvas.subgraphs}
    edge_ids = {link.id for st in canvas.statements for link in st.links if link.id}
    for node_id in list(canvas.nodes):
        node = canvas.nodes[node_id]
        ref = node.label_ref
        if ref is None and node_id in subgraph_ids:
            del canvas.nodes[node_id]  # an edge to a subgraph, not a node
            continue
        if node_id in edge_ids and all(r.shape_start < 0 or canvas.text.startswith("@{", r.shape_start) for r in node.refs):
            del canvas.nodes[node_id]  # `e1@{ animate: true }` sets an edge's properties
            continue
        if ref is not None:
            node.shape = ref.shape or "bare"
            node.label_raw = ref.label_raw or ""
            node.label = decode_label(node.label_raw)
        else:
            node.label_raw = node.label = node_id
        if node.subgraph is not None:
            members[node.subgraph].append(node_id)
        if node_id.lower() in RESERVED_IDS:
            said = {"node": node_id}
            canvas.problems.append(Problem(node.line, 1, "reserved_id", "error", said))
        if ref is not None and '\\"' in node.label_raw:
            said = {"node": node_id}
            canvas.problems.append(Problem(node.line, 1, "escaped_quote", "warning", said))
    for sub in canvas.subgraphs:
        sub.node_ids = members[sub.id]
    for edge in canvas.edges:
        if "&" in edge.arrow:
            said = {"arrow": edge.arrow}
            canvas.problems.append(Problem(edge.line, 1, "escaped_arrow", "warning", said))
    mermaid_text_problems(canvas)
    if canvas.header is None and not any(p.severity == "error" for p in canvas.problems):
        canvas.problems.append(Problem(1, 1, "no_header", "error"))
    canvas.is_escaped_oneliner = looks_escaped_oneliner(canvas.text)
    canvas.problems.sort(key=lambda p: (p.line, p.col))
