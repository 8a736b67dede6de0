"""Tokens of a flowchart statement: node ids, shapes, links and node/edge chains."""

from __future__ import annotations

import re

from .model import Link, NodeRef
from .wording import Words

NODE_ID = re.compile(r"[\w$]+(?:(?:-(?!-|\.|>|&[gl]t;)|\.(?!-))[\w$]*)*")
CLASS_SUFFIX = re.compile(r":::[\w-]+")
SPACES = re.compile(r"[ \t]*")


def skip_spaces(text: str, pos: int) -> int:
    """The position after the spaces and tabs at `pos`."""
    match = SPACES.match(text, pos)  # always matches (possibly empty)
    return match.end() if match else pos
LINK = re.compile(
    r"(?:<|&lt;|[ox](?=[-=.]))?"
    r"(?:-{2,}(?:>|&gt;|o|x)|-{3,}|-\.+-(?:>|&gt;|o|x)?|={2,}(?:>|&gt;|o|x)|={3,}|~{3,})"
)
TEXT_LINK = re.compile(
    # `-- text -->`, `-. text .->`, `== text ==>`: the closing half must match the opening one
    r"(?P<head><|&lt;)?(?:(?P<open>--)(?![->=])[ \t]*(?P<text>[^\n|]*?)[ \t]*"
    r"(?P<close>-{2,}(?:>|&gt;|o|x)|-{3,})"
    r"|(?P<dopen>-\.)(?![->=])[ \t]*(?P<dtext>[^\n|]*?)[ \t]*(?P<dclose>\.-+(?:>|&gt;|o|x)?)"
    r"|(?P<topen>==)(?![->=])[ \t]*(?P<ttext>[^\n|]*?)[ \t]*(?P<tclose>={2,}(?:>|&gt;|o|x)|={3,}))"
)
EDGE_ID = re.compile(r"([A-Za-z_$][\w$]*)@(?=[-=.~<&]|[ox][-=.])")
PIPE_LABEL = re.compile(r"[ \t]*\|([^|\n]*)\|")

# opener -> (closers, shape); closers are tried in order, longest openers first.
SHAPES: list[tuple[str, tuple[tuple[str, str], ...]]] = [
    ("(((", ((")))", "double_circle"),)),
    ("((", (("))", "circle"),)),
    ("([", (("])", "stadium"),)),
    ("(", ((")", "round"),)),
    ("[[", (("]]", "subroutine"),)),
    ("[(", ((")]", "cylinder"),)),
    ("[/", (("/]", "parallelogram"), ("\\]", "trapezoid"))),
    ("[\\", (("\\]", "parallelogram_alt"), ("/]", "trapezoid_alt"))),
    ("[", (("]", "rect"),)),
    ("{{", (("}}", "hexagon"),)),
    ("{", (("}", "rhombus"),)),
    (">", (("]", "asymmetric"),)),
]
SHAPE_DELIMITERS = {shape: (opener, close) for opener, cs in SHAPES for close, shape in cs}
SHAPE_OF_PAIR = {(o, c): shape for o, closers in SHAPES for c, shape in closers}
_OPENERS = "|".join(re.escape(o) for o, _ in SHAPES)
_CLOSERS = "|".join(
    re.escape(c) for c in sorted({c for _, cs in SHAPES for c, _ in cs}, key=len, reverse=True)
)
# Fast path for the two line shapes that make up most canvases, `id["label"]` and `a --> b`;
# anything else goes through scan_chain.
FAST_LINE = re.compile(
    rf'[ \t]*({NODE_ID.pattern})(?:({_OPENERS})"([^"\n]*)"({_CLOSERS})'
    rf"|[ \t]*({LINK.pattern})(?:[ \t]*\|([^|\n]*)\|)?[ \t]*({NODE_ID.pattern}))"
    r"[ \t]*(;?)[ \t]*(?=\r?\n|\Z)"
)
EXPANDED_SHAPE = re.compile(r"@\{([^}\n]*)\}")
EXPANDED_FIELD = re.compile(r"""(\w+)\s*:\s*("(?:[^"\\]|\\.)*"|[^,]*)""")


class LexError(Exception):
    """What stopped the scan at `pos`: a code of `wording.TEXTS` and its values."""

    def __init__(self, pos: int, code: str, **values: object) -> None:
        super().__init__(str(Words(code, **values)))
        self.pos = pos
        self.code, self.values = code, values
        self.ref: NodeRef | None = None  # a node whose label is broken: kept so it still shows


_KINDS: dict[str, str] = {}


def link_kind(arrow: str) -> str:
    kind = _KINDS.get(arrow)
    if kind is None:
        kind = _KINDS[arrow] = _link_kind(arrow)
    return kind


def _link_kind(arrow: str) -> str:
    plain = arrow.replace("&gt;", ">").replace("&lt;", "<")
    if "~" in plain:
        return "invisible"
    head, tail = plain[0], plain[-1]
    if head in "<ox" and tail == {"<": ">", "o": "o", "x": "x"}[head] and len(plain) > 3:
        return "bidirectional"
    if "." in plain:
        return "dotted" if tail == ">" else "dotted_open"
    if "=" in plain:
        return "thick" if tail == ">" else "thick_open"
    return {">": "arrow", "o": "circle", "x": "cross"}.get(tail, "open")


def scan_link(text: str, pos: int) -> Link | None:
    named = EDGE_ID.match(text, pos)
    if named is not None:  # `A e1@--> B`: the link has an id (mermaid 11), not a node `e1`
        link = scan_link(text, named.end())
        if link is not None:
            link.raw, link.start, link.id = text[pos : link.end], pos, named.group(1)
        return link
    match = LINK.match(text, pos)
    if match is not None:
        arrow = match.group(0)
        end = match.end()
        label = None
        pipe = PIPE_LABEL.match(text, end)
        if pipe is not None:
            label = pipe.group(1).strip().strip('"')
            end = pipe.end()
        return Link(text[pos:end], arrow, link_kind(arrow), label, pos, end)
    match = TEXT_LINK.match(text, pos)
    if match is None:
        return None
    head = match.group("head") or ""
    if match.group("open"):
        label, arrow = match.group("text"), head + match.group("close")
    elif match.group("dopen"):
        label, arrow = match.group("dtext"), head + "-" + match.group("dclose")
    else:
        label, arrow = match.group("ttext"), head + match.group("tclose")
    if not label:
        return None
    label = label.strip().strip('"')
    return Link(match.group(0), arrow, link_kind(arrow), label, pos, match.end())


def scan_node(text: str, pos: int, eol: int) -> NodeRef:
    match = NODE_ID.match(text, pos)
    if match is None or match.end() > eol:
        raise LexError(pos, "expected_id")
    node_id = match.group(0)
    end = match.end()
    ref = NodeRef(node_id, pos, end, end)
    if end < len(text):
        char = text[end]
        if char in "([{>":
            try:
                end = _scan_shape(text, end, eol, ref)
            except LexError as error:
                _salvage(text, end, eol, ref)
                error.ref = ref
                raise
        elif char == "@" and text.startswith("@{", end):
            end = _scan_expanded(text, end, eol, ref)
        ref.shape_end = end
    suffix = CLASS_SUFFIX.match(text, end)
    if suffix is not None:
        end = suffix.end()
    ref.end = end
    return ref


def _scan_shape(text: str, pos: int, eol: int, ref: NodeRef) -> int:
    for opener, closers in SHAPES:
        if not text.startswith(opener, pos):
            continue
        start = pos + len(opener)
        inner = skip_spaces(text, start)
        if inner < len(text) and text[inner] == '"':
            close_quote = _closing_quote(text, inner + 1, closers)
            if close_quote < 0:
                raise LexError(inner, "unclosed_quote")
            after = skip_spaces(text, close_quote + 1)
            for closer, shape in closers:
                if text.startswith(closer, after):
                    ref.shape, ref.shape_start, ref.quoted = shape, pos, True
                    ref.label_raw = text[inner + 1 : close_quote]
                    return after + len(closer)
            raise LexError(pos, "label_not_closed", closer=closers[0][0])
        best = -1
        best_shape = ""
        best_closer = ""
        for closer, shape in closers:
            found = text.find(closer, start, eol)
            if found >= 0 and (best < 0 or found < best):
                best, best_shape, best_closer = found, shape, closer
        if best < 0:
            raise LexError(pos, "unclosed_label", opener=opener)
        label = text[start:best]
        if '"' in label:
            raise LexError(start + label.index('"'), "quote_unquoted")
        ref.shape, ref.label_raw, ref.shape_start = best_shape, label, pos
        return best + len(best_closer)
    raise LexError(pos, "unknown_shape")  # pragma: no cover - OPENERS guard the call


def _salvage(text: str, pos: int, eol: int, ref: NodeRef) -> None:
    """Keep a node with a broken label: the label is the rest of the line."""
    opener = next(o for o, _ in SHAPES if text.startswith(o, pos))
    closers = dict(SHAPES)[opener]
    ref.shape = closers[0][1]
    ref.shape_start = pos
    ref.label_raw = text[pos + len(opener) : eol].strip().strip('"')
    ref.shape_end = ref.end = eol


def _closing_quote(text: str, start: int, closers: tuple[tuple[str, str], ...]) -> int:
    """Offset of the quote closing a label, or -1 when there is none.

    `\\"` is an escaped quote (T writes labels that way) unless the shape's closer follows it:
    then it ends the label, as it does for mermaid (`"C:\\dir\\"]`).
    """
    pos = start
    while True:
        found = text.find('"', pos)
        if found < 0:
            return -1
        if text[found - 1] != "\\":
            return found
        after = skip_spaces(text, found + 1)
        if any(text.startswith(closer, after) for closer, _ in closers):
            return found
        pos = found + 1


def _scan_expanded(text: str, pos: int, eol: int, ref: NodeRef) -> int:
    match = EXPANDED_SHAPE.match(text, pos)
    if match is None or match.end() > eol:
        raise LexError(pos, "unclosed_expanded")
    values = {k: v.strip().strip('"') for k, v in EXPANDED_FIELD.findall(match.group(1))}
    ref.shape = values.get("shape", "rect")
    if "shape" not in values and ("icon" in values or "img" in values):
        # mermaid's names for an icon (by its `form`) or an image node
        form = values.get("form", "").strip().lower()
        kind = "icon" if "icon" in values else "image"
        ref.shape = kind + ({"square": "Square", "circle": "Circle", "rounded": "Rounded"}.get(form, "") if kind == "icon" else "Square")
    ref.label_raw = values.get("label", ref.id)
    ref.shape_start = pos
    return match.end()


def scan_chain(
    text: str, pos: int, eol: int
) -> tuple[list[list[NodeRef]], list[Link], int, LexError | None]:
    """Read `A & B --> C -.-> D …` from `pos`; stops before `;`, a comment or the line end."""
    groups: list[list[NodeRef]] = []
    links: list[Link] = []
    while True:
        group: list[NodeRef] = []
        while True:
            try:
                ref = scan_node(text, pos, eol)
            except LexError as error:
                if error.ref is not None:
                    group.append(error.ref)
                if group:
                    groups.append(group)
                if links and len(links) >= len(groups):
                    links.pop()
                return groups, links, (error.ref.end if error.ref else pos), error
            group.append(ref)
            pos = skip_spaces(text, ref.end)
            if pos < len(text) and text[pos] == "&":
                pos = skip_spaces(text, pos + 1)
                continue
            break
        groups.append(group)
        if ref.end > eol:
            eol = text.find("\n", ref.end)
            eol = len(text) if eol < 0 else eol
        link = scan_link(text, pos)
        if link is None:
            return groups, links, ref.end, None
        links.append(link)
        pos = skip_spaces(text, link.end)
