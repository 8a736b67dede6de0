"""Line-preserving text patches over a parsed canvas, and the rewriting of chain statements."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .model import Canvas, NodeRef, Statement


class PatchConflict(Exception):
    """Two changes of one edit overlap; a bug in the edit, reported as an EditError."""


@dataclass
class Patch:
    doc: Canvas
    spans: list[tuple[int, int, str]] = field(default_factory=list)

    def replace(self, start: int, end: int, new: str) -> None:
        self.spans.append((start, end, new))

    def line_bounds(self, line: int) -> tuple[int, int, int]:
        """(start, end of content, end including the newline) of a 1-based line."""
        starts, text = self.doc.line_starts, self.doc.text
        start = starts[line - 1]
        after = starts[line] if line < len(starts) else len(text)
        end = after
        if end > start and text[end - 1] == "\n":
            end -= 1
        if end > start and text[end - 1] == "\r":
            end -= 1
        return start, end, after

    def is_alone(self, statement: Statement) -> bool:
        text = self.doc.text
        first, _, _ = self.line_bounds(statement.line)
        _, last, _ = self.line_bounds(statement.line_end)
        return not text[first : statement.start].strip() and not text[statement.stop : last].strip()

    def indent_of(self, statement: Statement) -> str:
        start, end, _ = self.line_bounds(statement.line)
        line = self.doc.text[start:end]
        return line[: len(line) - len(line.lstrip())]

    def remove_statement(self, statement: Statement) -> None:
        if self.is_alone(statement):
            first, _, _ = self.line_bounds(statement.line)
            _, _, after = self.line_bounds(statement.line_end)
            self.replace(first, after, "")
        else:
            self.replace(statement.start, statement.stop, "")

    def replace_statement(self, statement: Statement, new: list[str]) -> None:
        if not new:
            self.remove_statement(statement)
            return
        if not self.is_alone(statement):
            self.replace(statement.start, statement.stop, "; ".join(new))
            return
        indent = self.indent_of(statement)
        first, _, _ = self.line_bounds(statement.line)
        _, end, after = self.line_bounds(statement.line_end)
        newline = "\n" if after > end else ""
        self.replace(first, after, "\n".join(indent + s for s in new) + newline)

    def insert_lines_after(self, line: int, new: list[str]) -> None:
        """Insert whole lines after 1-based `line` (0: at the top), each ending as the file's do."""
        if not new:
            return
        text = self.doc.text
        if line <= 0:
            self.replace(0, 0, "".join(s + "\n" for s in new))
            return
        _, _, after = self.line_bounds(min(line, len(self.doc.line_starts)))
        if after == len(text) and text and not text.endswith("\n"):
            self.replace(after, after, "".join("\n" + s for s in new))
        else:
            self.replace(after, after, "".join(s + "\n" for s in new))

    def apply(self) -> str:
        return self.apply_with_diff()[0]

    def apply_with_diff(self, context: int = 1) -> tuple[str, str, list[str]]:
        """New text, a unified diff of it, and the lines the patch wrote (without their ends)."""
        text, starts = self.doc.text, self.doc.line_starts
        count = len(starts)
        eol = file_eol(text)
        ordered = [span for _, span in sorted(enumerate(self.spans), key=_span_order)]
        groups: list[tuple[int, int, list[tuple[int, int, str]]]] = []
        cursor = 0
        for start, end, new in ordered:
            if start < cursor:
                raise PatchConflict(f"overlapping changes at offset {start}")
            cursor = end
            first, last = _lines_touched(text, starts, start, end)
            if groups and first <= groups[-1][1]:
                groups[-1] = (groups[-1][0], max(groups[-1][1], last), groups[-1][2])
                groups[-1][2].append((start, end, new))
            else:
                groups.append((first, last, [(start, end, new)]))
        out: list[str] = []
        changes: list[tuple[int, int, list[str], list[str]]] = []  # first, last, old, new
        at = 0
        for first, last, spans in groups:
            region_start = starts[first] if first < count else len(text)
            region_end = starts[last] if last < count else len(text)
            pieces, position = [], region_start
            for start, end, new in spans:
                pieces.append(text[position:start])
                pieces.append(new)
                position = end
            pieces.append(text[position:region_end])
            old_lines = split_lines(text[region_start:region_end])
            new_lines = _written_lines(old_lines, split_lines("".join(pieces)), eol)
            out.append(text[at:region_start])
            out.extend(new_lines)
            at = region_end
            if old_lines != new_lines:
                changes.append((first, last, old_lines, new_lines))
        out.append(text[at:])
        written = [
            line.rstrip("\r\n")
            for _, _, old_lines, new_lines in changes
            for line in new_lines
            if line not in old_lines
        ]
        return "".join(out), _unified(text, starts, changes, context), written


def _unified(
    text: str,
    starts: list[int],
    changes: list[tuple[int, int, list[str], list[str]]],
    context: int,
) -> str:
    """A unified diff of line changes; changes closer than 2 × context share a hunk."""
    if not changes:
        return ""
    clusters: list[list[tuple[int, int, list[str], list[str]]]] = []
    for change in changes:
        if clusters and change[0] - clusters[-1][-1][1] <= 2 * context:
            clusters[-1].append(change)
        else:
            clusters.append([change])
    diff = ["--- before\n", "+++ after\n"]
    delta = 0
    for cluster in clusters:
        body: list[str] = []
        old_size = new_size = 0
        before = old_lines_before(text, starts, cluster[0][0], context)
        body.extend(" " + _newline_ended(line) for line in before)
        old_size += len(before)
        for index, (first, _last, old_lines, new_lines) in enumerate(cluster):
            if index:
                gap = _old_lines(text, starts, cluster[index - 1][1], first)
                body.extend(" " + _newline_ended(line) for line in gap)
                old_size += len(gap)
            body.extend("-" + _newline_ended(line) for line in old_lines)
            body.extend("+" + _newline_ended(line) for line in new_lines)
            old_size += len(old_lines)
            new_size += len(new_lines) - len(old_lines)
        after = old_lines_after(text, starts, cluster[-1][1], context)
        body.extend(" " + _newline_ended(line) for line in after)
        old_size += len(after)
        new_size += old_size
        old_first = cluster[0][0] + 1 - len(before)
        if old_size == 0:
            old_first -= 1
        new_first = old_first + delta if new_size else old_first + delta - 1
        diff.append(f"@@ -{old_first},{old_size} +{max(new_first, 0)},{new_size} @@\n")
        diff.extend(body)
        delta += new_size - old_size
    return "".join(diff)


def _old_lines(text: str, starts: list[int], first: int, last: int) -> list[str]:
    if last <= first:
        return []
    end = starts[last] if last < len(starts) else len(text)
    return split_lines(text[starts[first] : end])


def old_lines_before(text: str, starts: list[int], first: int, context: int) -> list[str]:
    lo = max(0, first - context)
    return split_lines(text[starts[lo] : starts[first]]) if first > lo else []


def old_lines_after(text: str, starts: list[int], last: int, context: int) -> list[str]:
    hi = min(len(starts), last + context)
    if last >= hi:
        return []
    end = starts[hi] if hi < len(starts) else len(text)
    return split_lines(text[starts[last] : end])


def file_eol(text: str) -> str:
    """The file's line ending: CRLF when most of its lines end so, else LF."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and 2 * crlf > text.count("\n") else "\n"


def _written_lines(old_lines: list[str], new_lines: list[str], eol: str) -> list[str]:
    """Lines the patch changed end as the file's lines do (``eol``), so a CRLF file stays
    CRLF throughout; lines it only carried along keep their ending."""
    kept = set(old_lines)
    out = []
    for line in new_lines:
        if line in kept or not line.endswith("\n"):
            out.append(line)
        else:
            out.append(line[: -2 if line.endswith("\r\n") else -1] + eol)
    return out


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on LF only (str.splitlines also splits on \\x1e, …)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _span_order(item: tuple[int, tuple[int, int, str]]) -> tuple[int, int, int]:
    index, (start, end, _) = item
    return start, end, index


def _newline_ended(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def _lines_touched(text: str, starts: list[int], start: int, end: int) -> tuple[int, int]:
    """0-based [first, last) old lines a span changes; an insertion at a line start changes none."""
    first = bisect_right(starts, start) - 1
    if end > start:
        return first, bisect_right(starts, end - 1)
    if start == len(text) and text and not text.endswith("\n"):
        return first, first + 1  # appending after a last line that has no newline changes it
    if start == starts[first]:
        return first, first
    return first, first + 1


def statements_with(doc: Canvas, node_ids: Iterable[str]) -> list[Statement]:
    """The chain statements that mention any of the nodes, in file order."""
    starts = [s.start for s in doc.statements]
    found: set[int] = set()
    for node_id in node_ids:
        node = doc.nodes.get(node_id)
        for ref in node.refs if node is not None else ():
            found.add(bisect_right(starts, ref.start) - 1)
    return [doc.statements[i] for i in sorted(found)]


def statement_edges(statement: Statement) -> list[tuple[NodeRef, int, NodeRef]]:
    return [
        (source, index, target)
        for index in range(len(statement.links))
        for source in statement.groups[index]
        for target in statement.groups[index + 1]
    ]


@dataclass
class RewriteScope:
    """The statements one edit rewrites, so a node mentioned only there is kept exactly once."""

    statements: list[Statement]
    kept_alive: set[str] = field(default_factory=set)

    def would_vanish(self, doc: Canvas, node_id: str) -> bool:
        node = doc.nodes.get(node_id)
        if node is None or node_id in self.kept_alive:
            return False
        return all(any(s.start <= ref.start < s.stop for s in self.statements) for ref in node.refs)


def rewrite_chain(
    doc: Canvas,
    statement: Statement,
    *,
    keep_edge: Callable[[str, str, int], bool],
    rename: dict[str, str],
    drop_nodes: set[str],
    overrides: dict[int, str],
    seen: set[tuple[str, str]] | None = None,
    scope: RewriteScope | None = None,
) -> list[str] | None:
    """New statements for a chain after dropping/renaming; None when it can stay as it is.

    `overrides` maps a ref's start offset to the text that replaces that ref (id, shape, class).
    Renamed refs lose their shape: the kept node's own definition wins. A self-loop or a duplicate
    created by a rename is dropped. Nodes that would vanish from the file are kept standalone.
    """
    text = doc.text
    refs = [ref for group in statement.groups for ref in group]
    touched = any(
        ref.id in rename or ref.id in drop_nodes or ref.start in overrides for ref in refs
    )
    kept: list[tuple[NodeRef, int, NodeRef]] = []
    dropped_any = False
    for source, index, target in statement_edges(statement):
        if source.id in drop_nodes or target.id in drop_nodes:
            dropped_any = True
            continue
        if not keep_edge(source.id, target.id, index):
            dropped_any = True
            continue
        new_pair = (rename.get(source.id, source.id), rename.get(target.id, target.id))
        renamed = source.id in rename or target.id in rename
        if renamed and (new_pair[0] == new_pair[1] or (seen is not None and new_pair in seen)):
            dropped_any = True
            continue
        if seen is not None:
            seen.add(new_pair)
        kept.append((source, index, target))
    if not touched and not dropped_any:
        return None

    def ref_text(ref: NodeRef) -> str:
        if ref.start in overrides:
            return overrides[ref.start]
        if ref.id in rename:
            return rename[ref.id]
        return text[ref.start : ref.end]

    if not statement.links:
        staying = [ref for ref in refs if ref.id not in rename and ref.id not in drop_nodes]
        if scope is not None:  # defined here: a later statement need not keep them standalone
            scope.kept_alive.update(ref.id for ref in staying)
        return [" & ".join(ref_text(ref) for ref in staying)] if staying else []
    if not dropped_any and not any(ref.id in drop_nodes for ref in refs):
        if scope is not None:
            scope.kept_alive.update(rename.get(ref.id, ref.id) for ref in refs)
        return [_chain_text(text, statement, ref_text)]
    out: list[str] = []
    emitted: set[int] = set()

    def emit(ref: NodeRef) -> str:
        if ref.start in emitted or (ref.shape is None and ref.start not in overrides):
            return rename.get(ref.id, ref.id)
        emitted.add(ref.start)
        return ref_text(ref)

    for source, index, target in kept:
        link = statement.links[index].raw
        out.append(f"{emit(source)} {link} {emit(target)}")
    present = {rename.get(ref.id, ref.id) for s, _, t in kept for ref in (s, t)}
    scope = scope or RewriteScope([statement])
    for ref in refs:
        if ref.id in drop_nodes or ref.id in rename or ref.start in emitted:
            continue
        has_shape = ref.shape is not None or ref.start in overrides
        if has_shape or (ref.id not in present and scope.would_vanish(doc, ref.id)):
            out.append(ref_text(ref))
            emitted.add(ref.start)
            present.add(ref.id)
    scope.kept_alive.update(present)
    return out


def _chain_text(text: str, statement: Statement, ref_text: Callable[[NodeRef], str]) -> str:
    """The statement with each ref replaced in place, keeping its own spacing and links."""
    pieces: list[str] = []
    cursor = statement.start
    for group in statement.groups:
        for ref in group:
            pieces.append(text[cursor : ref.start])
            pieces.append(ref_text(ref))
            cursor = ref.end
    pieces.append(text[cursor : statement.stop])
    return "".join(pieces)
