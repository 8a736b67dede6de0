"""Dataclasses of a parsed canvas: nodes, edges, subgraphs, metadata, problems and statements."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field

from .labels import extract_fields
from .vocabulary import STATUS_VOCABULARY, LabelFields
from .wording import Words

__all__ = ["STATUS_VOCABULARY", "LabelFields"]  # re-exported: their home is vocabulary.py


@dataclass(slots=True)
class Problem:
    """Something wrong at `line`, `col` of a text: a code of `wording.TEXTS` and its values
    (`message` is its English sentence; the pages translate the code)."""

    line: int
    col: int
    code: str
    severity: str = "error"  # "error" | "warning"
    values: Mapping[str, object] = field(default_factory=dict)

    @property
    def words(self) -> Words:
        return Words(self.code, **self.values)

    @property
    def message(self) -> str:
        return str(self.words)


@dataclass(slots=True)
class CanvasMeta:
    form: str = "none"  # "json" | "loose" | "comment" | "single_percent" | "none"
    values: dict[str, object] = field(default_factory=dict)
    task_goal: str = ""
    progress: int | None = None
    created: str = ""
    updated: str = ""
    line: int | None = None
    line_end: int | None = None


@dataclass(slots=True)
class Link:
    """One link token of a chain statement, e.g. `-->|yes|` or `-- yes -->`."""

    raw: str  # as written, label included
    arrow: str
    kind: str
    label: str | None
    start: int
    end: int
    id: str = ""  # mermaid 11's edge id, `A e1@--> B`


@dataclass(slots=True)
class NodeRef:
    """One mention of a node id inside a statement, with its shape if it has one there."""

    id: str
    start: int  # offset of the id
    id_end: int
    end: int  # offset after shape and `:::class`
    shape: str | None = None
    label_raw: str | None = None
    shape_start: int = -1  # offset of the opening delimiter
    shape_end: int = -1  # offset after the closing delimiter
    quoted: bool = False


@dataclass(slots=True)
class Statement:
    """One statement of the file; `start`/`stop` are offsets, `line`/`line_end` 1-based."""

    kind: str
    line: int
    line_end: int
    start: int
    stop: int
    groups: list[list[NodeRef]] = field(default=())  # type: ignore[arg-type]
    links: list[Link] = field(default=())  # type: ignore[arg-type]
    ids: list[str] = field(default=())  # type: ignore[arg-type]  # class/style/click targets
    name: str = ""  # class name of `class`, classDef name, subgraph id


@dataclass(slots=True)
class Node:
    id: str
    label_raw: str
    label: str
    shape: str
    line: int
    subgraph: str | None
    refs: list[NodeRef] = field(default_factory=list, repr=False)
    label_ref: NodeRef | None = field(default=None, repr=False)
    cached_fields: LabelFields | None = field(default=None, repr=False)

    @property
    def fields(self) -> LabelFields:
        """Memory fields of the label, read on first use (most parses never need them all)."""
        if self.cached_fields is None:
            self.cached_fields = extract_fields(
                self.label_raw if self.label_ref is not None else self.id
            )
        return self.cached_fields


@dataclass(slots=True)
class Edge:
    source: str
    target: str
    label: str | None
    kind: str
    arrow: str
    line: int
    statement: int = field(default=-1, repr=False)
    link: int = field(default=-1, repr=False)


@dataclass(slots=True)
class Subgraph:
    id: str
    title: str
    parent: str | None
    node_ids: list[str]
    line_start: int
    line_end: int
    title_raw: str = ""  # the title as written (a markdown string keeps its backticks)


@dataclass(slots=True)
class Canvas:
    text: str
    header: str | None = None
    direction: str | None = None
    meta: CanvasMeta = field(default_factory=CanvasMeta)
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    subgraphs: list[Subgraph] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    is_escaped_oneliner: bool = False
    statements: list[Statement] = field(default_factory=list, repr=False)
    line_starts: list[int] = field(default_factory=list, repr=False)
    fenced: bool = False
    acc_title: str = ""  # `accTitle: …`, `accDescr: …` / `accDescr { … }` (mermaid's a11y text)
    acc_descr: str = ""

    @property
    def has_errors(self) -> bool:
        return any(p.severity == "error" for p in self.problems)

    def serialize(self) -> str:
        return self.text

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset."""
        return bisect_right(self.line_starts, offset)
