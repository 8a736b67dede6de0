"""Line-preserving text patches over a parsed canvas, and the rewriting of chain statements."""

from __future__ import annotations

from collections.abc import Callable
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
        """Insert whole lines after 1-based `line` (0: at the top), each ending in LF."""
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
        text = self.doc.text
        ordered = sorted(enumerate(self.spans), key=lambda item: (item[1][0], item[1][1], item[0]))
        out: list[str] = []
        cursor = 0
        for _, (start, end, new) in ordered:
            if start < cursor:
                raise PatchConflict(f"overlapping changes at offset {start}")
            out.append(text[cursor:start])
            out.append(new)
            cursor = end
        out.append(text[cursor:])
        return "".join(out)


def statement_edges(statement: Statement) -> list[tuple[NodeRef, int, NodeRef]]:
    return [
        (source, index, target)
        for index in range(len(statement.links))
        for source in statement.groups[index]
        for target in statement.groups[index + 1]
    ]


def rewrite_chain(
    doc: Canvas,
    statement: Statement,
    *,
    keep_edge: Callable[[str, str, int], bool],
    rename: dict[str, str],
    drop_nodes: set[str],
    overrides: dict[int, str],
    seen: set[tuple[str, str]] | None = None,
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
        alone = [ref_text(ref) for ref in refs if ref.id not in rename and ref.id not in drop_nodes]
        return [" & ".join(alone)] if alone else []
    if not dropped_any and not any(ref.id in drop_nodes for ref in refs):
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
    for ref in refs:
        if ref.id in drop_nodes or ref.id in rename or ref.start in emitted:
            continue
        has_shape = ref.shape is not None or ref.start in overrides
        if has_shape or (ref.id not in present and _only_here(doc, ref.id, statement)):
            out.append(ref_text(ref))
            emitted.add(ref.start)
            present.add(ref.id)
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


def _only_here(doc: Canvas, node_id: str, statement: Statement) -> bool:
    node = doc.nodes.get(node_id)
    if node is None:
        return False
    return all(statement.start <= ref.start < statement.stop for ref in node.refs)
