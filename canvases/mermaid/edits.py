"""Surgical edits of a canvas: each changes only the lines it must and returns the new text."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from .agent_view import read_meta
from .header import write_header
from .human_text import human_text, human_text_display
from .id_statements import (
    drop_from_id_statement,
    merge_status_classes,
    rename_in_id_statement,
    sync_status_class,
)
from .label_edits import (
    NOTE_LIMIT,
    SUMMARY_LIMIT,
    TITLE_LIMIT,
    instant,
    label_with,
    merged_segments,
    ref_with_label,
    segment_value,
    unique,
    write_label,
)
from .labels import escape_text, truncate
from .meta import PROGRESS_KEY
from .model import STATUS_VOCABULARY, Canvas, Node, Statement
from .parser import parse
from .patch import (
    Patch,
    PatchConflict,
    RewriteScope,
    rewrite_chain,
    split_lines,
    statements_with,
)
from .repair import repair_text
from .wording import EditError, Note, Words

TIMESTAMP_IN_LABEL = re.compile(r"(?i)timestamp\s*[:：]\s*([^<\"\]\n]+)")


@dataclass
class EditResult:
    text: str
    id_map: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    added_edges: list[tuple[str, str]] = field(default_factory=list)
    removed_edges: list[tuple[str, str]] = field(default_factory=list)
    diff: str = ""
    notes: list[Note] = field(default_factory=list)  # what the edit did beyond its op, for people


# ---------------------------------------------------------------------------------------------
# operations


def set_status(text: str, node_id: str, status: str) -> EditResult:
    doc = _parse(text)
    node = _node(doc, node_id)
    value = _clean_status(status)
    patch = Patch(doc)
    write_label(patch, node, label_with(node, {"status": value}))
    sync_status_class(patch, doc, node_id, value)
    return _finish(doc, patch)


def annotate(text: str, node_id: str, note: str) -> EditResult:
    doc = _parse(text)
    node = _node(doc, node_id)
    if len(note) > NOTE_LIMIT:
        raise EditError("note_too_long", n=len(note), limit=NOTE_LIMIT)
    patch = Patch(doc)
    write_label(patch, node, label_with(node, {"note": escape_text(note)}))
    return _finish(doc, patch)


def edit_label(
    text: str, node_id: str, *, title: str | None = None, summary: str | None = None
) -> EditResult:
    doc = _parse(text)
    node = _node(doc, node_id)
    if title is None and summary is None:
        raise EditError("title_or_summary")
    changes: dict[str | None, str] = {}
    if title is not None:
        changes[None] = escape_text(truncate(title.strip(), TITLE_LIMIT))
        if not changes[None]:
            raise EditError("title_empty")
    if summary is not None:
        changes["summary"] = escape_text(truncate(summary.strip(), SUMMARY_LIMIT))
    patch = Patch(doc)
    write_label(patch, node, label_with(node, changes))
    return _finish(doc, patch)


def add_edge(text: str, source: str, target: str, *, label: str | None = None) -> EditResult:
    doc = _parse(text)
    _node(doc, source)
    _node(doc, target)
    if any(e.source == source and e.target == target for e in doc.edges):
        raise EditError("edge_exists", source=source, target=target)
    written = human_text(label, "edge_label") if label is not None else ""
    link = f'-->|"{written}"|' if written else "-->"
    patch = Patch(doc)
    line, indent = _edge_insertion_point(doc, patch)
    patch.insert_lines_after(line, [f"{indent}{source} {link} {target}"])
    return _finish(doc, patch, added_edges=[(source, target)])


def remove_edge(text: str, source: str, target: str) -> EditResult:
    doc = _parse(text)
    _node(doc, source)
    _node(doc, target)
    matches = [e for e in doc.edges if e.source == source and e.target == target]
    if not matches:
        raise EditError("no_edge", source=source, target=target)
    patch = Patch(doc)
    statements = [doc.statements[n] for n in sorted({e.statement for e in matches})]
    scope = RewriteScope(statements)
    for statement in statements:
        new = rewrite_chain(
            doc,
            statement,
            keep_edge=lambda s, t, _i: not (s == source and t == target),
            rename={},
            drop_nodes=set(),
            overrides={},
            scope=scope,
        )
        if new is not None:
            patch.replace_statement(statement, new)
    return _finish(doc, patch, removed_edges=[(source, target)] * len(matches))


def prune(text: str, node_id: str, *, bridge: bool = True) -> EditResult:
    doc = _parse(text)
    _node(doc, node_id)
    patch = Patch(doc)
    removed_edges = [(e.source, e.target) for e in doc.edges if node_id in (e.source, e.target)]
    statements = statements_with(doc, [node_id])
    scope = RewriteScope(statements)
    for statement in statements:
        new = rewrite_chain(
            doc,
            statement,
            keep_edge=_keep_all,
            rename={},
            drop_nodes={node_id},
            overrides={},
            scope=scope,
        )
        if new is not None:
            patch.replace_statement(statement, new)
    for statement in doc.statements:
        if statement.kind in ("class", "style", "click") and node_id in statement.ids:
            drop_from_id_statement(patch, statement, node_id)
    added: list[tuple[str, str]] = []
    if bridge:
        existing = {(e.source, e.target) for e in doc.edges}
        preds = unique(e.source for e in doc.edges if e.target == node_id and e.source != node_id)
        succs = unique(e.target for e in doc.edges if e.source == node_id and e.target != node_id)
        added = [(p, s) for p in preds for s in succs if p != s and (p, s) not in existing]
        if added:
            line, indent = _edge_insertion_point(doc, patch)
            patch.insert_lines_after(line, [f"{indent}{p} --> {s}" for p, s in added])
    return _finish(doc, patch, removed=[node_id], added_edges=added, removed_edges=removed_edges)


def merge(
    text: str,
    ids: Iterable[str],
    *,
    into: str | None = None,
    label: str | None = None,
    summary: str | None = None,
    status: str | None = None,
) -> EditResult:
    doc = _parse(text)
    merged = unique(ids)
    if not merged:
        raise EditError("merge_nothing")
    for node_id in merged:
        _node(doc, node_id)
    keep = into if into is not None else merged[0]
    _node(doc, keep)
    if keep not in merged:
        merged.insert(0, keep)
    removed = [i for i in merged if i != keep]
    if not removed:
        raise EditError("merge_itself", node=keep)
    nodes = [doc.nodes[keep], *(doc.nodes[i] for i in removed)]
    rename = dict.fromkeys(removed, keep)

    cleaned = _clean_status(status) if status is not None else None
    segments = merged_segments(nodes, label=label, summary=summary, status=cleaned)
    new_label = "<br/>".join(segments)
    final_status = segment_value(segments, "status")

    patch = Patch(doc)
    keep_node = doc.nodes[keep]
    ref = keep_node.label_ref or keep_node.refs[0]
    label_override = {ref.start: ref_with_label(doc, ref, new_label, force_rect=True)}
    seen = {
        (e.source, e.target) for e in doc.edges if e.source not in rename and e.target not in rename
    }
    old_pairs = [(e.source, e.target) for e in doc.edges]
    written_label = False
    touched_chains = statements_with(doc, merged)
    chains = {id(s) for s in touched_chains}
    scope = RewriteScope(touched_chains)
    for statement in doc.statements:
        if statement.kind == "chain":
            if id(statement) not in chains:
                continue
            new = rewrite_chain(
                doc,
                statement,
                keep_edge=_keep_all,
                rename=rename,
                drop_nodes=set(),
                overrides=label_override,
                seen=seen,
                scope=scope,
            )
            if new is not None:
                patch.replace_statement(statement, new)
                written_label = written_label or any(
                    statement.start <= start < statement.stop for start in label_override
                )
        elif statement.kind == "class" and statement.name in STATUS_VOCABULARY:
            continue
        elif statement.kind in ("class", "style", "click") and set(statement.ids) & set(rename):
            rename_in_id_statement(patch, doc, statement, rename, keep)
    if not written_label:  # pragma: no cover - the kept ref always sits in a chain
        raise EditError("label_not_written")
    merge_status_classes(patch, doc, merged, keep, final_status)
    meta_updates = _newer_updated_time(doc, segment_value(segments, "timestamp"))
    touched = [p for p in old_pairs if p[0] in rename or p[1] in rename]
    rewired = {(rename.get(s, s), rename.get(t, t)) for s, t in touched}
    added = sorted(p for p in rewired - set(old_pairs) if p[0] != p[1])
    return _finish(
        doc,
        patch,
        meta_updates=meta_updates,
        removed=removed,
        id_map=dict(rename),
        removed_edges=touched,
        added_edges=added,
    )


def set_meta(text: str, **values: object) -> EditResult:
    if not values:
        raise EditError("meta_nothing")
    for key, value in values.items():
        if key == "progress" or PROGRESS_KEY.fullmatch(key):
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise EditError("progress_range", value=value)
            try:
                number = float(value)
            except ValueError:
                raise EditError("progress_range", value=value) from None
            if not 0 <= number <= 100:
                raise EditError("progress_range", value=value)
        elif not isinstance(value, str | int | float) or isinstance(value, bool):
            raise EditError("meta_value", key=key)
    doc = _parse(text)
    typed = {k: human_text(v, "meta") if isinstance(v, str) else v for k, v in values.items()}
    return _finish(doc, Patch(doc), meta_updates=typed)


def agent_meta(text: str) -> EditResult:
    """Rewrite the metadata as the strict JSON line 1 the agent reads, keeping every value."""
    doc = _parse(text)
    if read_meta(text).on_line_one:
        raise EditError("header_already")
    return _finish(doc, Patch(doc))


def repair_oneliner(text: str) -> EditResult:
    repaired = repair_text(text)
    if repaired is None:
        raise EditError("not_oneliner")
    doc = parse(repaired)
    if doc.has_errors:
        first = next(p for p in doc.problems if p.severity == "error")
        where = Words("problem_at_line", line=first.line, problem=first.words)
        raise EditError("repair_fails", where=where)
    patch = Patch(doc)
    notes = write_header(patch, doc)
    repaired = patch.apply()
    return EditResult(text=repaired, diff=_diff(text, repaired), notes=notes)


def edit_survives(result: EditResult, current: str) -> bool:
    """Whether `current` still holds what the edit did: every line it wrote, none it removed.

    For the map-builder's window (format spec §4.8.8): a reply in flight overwrites the file or
    splices stale line ranges into it. Line 1 (the header) is left out, since the agent rewrites
    its own metadata; a line the agent itself changes later also counts as lost.
    """
    added, removed = set(), set()
    for line in result.diff.splitlines()[2:]:
        if line.startswith("+"):
            added.add(line[1:])
        elif line.startswith("-"):
            removed.add(line[1:])
    header = result.text.split("\n", 1)[0]
    now = Counter(current.replace("\r\n", "\n").split("\n")[1:])
    expected = Counter(result.text.replace("\r\n", "\n").split("\n")[1:])
    return all(now[line] for line in added - {header}) and all(
        now[line] <= expected[line] for line in removed - added
    )


# ---------------------------------------------------------------------------------------------
# shared steps


def _parse(text: str) -> Canvas:
    doc = parse(text)
    if doc.is_escaped_oneliner:
        raise EditError("repair_first")
    return doc


def _node(doc: Canvas, node_id: str) -> Node:
    if not isinstance(node_id, str) or node_id not in doc.nodes:
        raise EditError("no_node", node=node_id)
    return doc.nodes[node_id]


def _clean_status(status: str) -> str:
    if not isinstance(status, str) or not status.strip():
        raise EditError("status_empty")
    value = status.strip()
    value = value.lower() if value.lower() in STATUS_VOCABULARY else value
    value = escape_text(value)
    if not value:
        raise EditError("status_empty")
    if len(value) > 40:
        raise EditError("status_word")
    return value


def _newer_updated_time(doc: Canvas, merged_stamp: str | None) -> dict[str, object]:
    """`updatedTime` moves to the newest node Timestamp (rule 1, format spec §4.7)."""
    stamps = [m.strip() for m in TIMESTAMP_IN_LABEL.findall(doc.text)]
    if merged_stamp:
        stamps.append(human_text(human_text_display(merged_stamp), "meta"))
    if not stamps:
        return {}
    newest = max(stamps, key=instant)
    if doc.meta.updated and instant(doc.meta.updated) >= instant(newest):
        return {}
    return {"updatedTime": newest}


def _keep_all(_source: str, _target: str, _index: int) -> bool:
    return True


# ---------------------------------------------------------------------------------------------
# placing new lines, finishing


def _edge_insertion_point(doc: Canvas, patch: Patch) -> tuple[int, str]:
    """After the last top-level chain statement (outside every subgraph), with its indent."""
    best: Statement | None = None
    depth = 0
    for statement in doc.statements:
        kind = statement.kind
        if kind == "subgraph":
            depth += 1
        elif kind == "end":
            depth = max(0, depth - 1)
            if depth == 0:
                best = statement
        elif depth == 0 and kind in ("chain", "header"):
            best = statement
    if best is None:
        return len(doc.line_starts), "    "
    indent = patch.indent_of(best) if best.kind != "header" else ""
    return best.line_end, indent or "    "


def _diff(old: str, new: str) -> str:
    return "".join(difflib.unified_diff(split_lines(old), split_lines(new), "before", "after", n=1))


def _check_written_lines(written: list[str]) -> None:
    """Parse the lines this edit wrote (they are all statements of a flowchart body)."""
    if not written:
        return
    probe = parse("flowchart TD\n" + "\n".join(written))
    errors = [p for p in probe.problems if p.severity == "error"]
    if errors:
        first = errors[0]
        line = written[first.line - 2] if 2 <= first.line <= len(written) + 1 else ""
        raise EditError("result_would_not_parse", problem=first.words, line=line.strip()[:80])


def _finish(
    doc: Canvas, patch: Patch, *, meta_updates: dict[str, object] | None = None, **fields: object
) -> EditResult:
    """Apply the patch with line 1 made the strict header (format spec §4.7 rule 8, §4.8.4)."""
    notes = write_header(patch, doc, meta_updates)
    try:
        new_text, diff, written = patch.apply_with_diff()
    except PatchConflict as error:
        raise EditError("not_clean", reason=str(error)) from None
    _check_written_lines(written)
    id_map = fields.get("id_map")
    if doc.has_errors:
        _check_no_text_became_nodes(doc, new_text, id_map if isinstance(id_map, dict) else {})
    renumbered = _renumber_link_styles(doc, new_text, id_map if isinstance(id_map, dict) else {})
    if renumbered is not None:
        new_text, diff = renumbered, _diff(doc.text, renumbered)
    result = EditResult(text=new_text, diff=diff, notes=notes)
    for key, value in fields.items():
        setattr(result, key, value)
    return result


def _check_no_text_became_nodes(doc: Canvas, new_text: str, rename: dict[str, str]) -> None:
    """On a canvas with unreadable text, taking a statement off its line can leave that text
    alone, where it reads as a node (`B["x"]junk["y"]` less `B` is `junk["y"]`): refuse."""
    appeared = set(parse(new_text).nodes) - set(doc.nodes) - set(rename.values())
    if appeared:
        raise EditError("text_becomes_nodes", nodes=", ".join(sorted(appeared)))


def _renumber_link_styles(doc: Canvas, new_text: str, rename: dict[str, str]) -> str | None:
    """`linkStyle <n>` counts edges: after edges move, point each line at the same edges again."""
    styles = [s for s in doc.statements if s.kind == "linkStyle"]
    if not styles or all(_link_indices(doc.text, s) is None for s in styles):
        return None
    new_doc = parse(new_text)
    old_edges = [
        (rename.get(e.source, e.source), rename.get(e.target, e.target)) for e in doc.edges
    ]
    new_edges = [(e.source, e.target) for e in new_doc.edges]
    if old_edges == new_edges:
        return None
    free: dict[tuple[str, str], list[int]] = {}
    for index, pair in enumerate(new_edges):
        free.setdefault(pair, []).append(index)
    moved = {}
    for index, pair in enumerate(old_edges):
        if free.get(pair):
            moved[index] = free[pair].pop(0)
    patch = Patch(new_doc)
    for statement in (s for s in new_doc.statements if s.kind == "linkStyle"):
        indices = _link_indices(new_text, statement)
        if indices is None:
            continue
        kept = [moved[i] for i in indices if i in moved]
        style = new_text[statement.start : statement.stop].split(None, 2)[2:]
        if not kept or not style:
            patch.remove_statement(statement)
        elif kept != indices:
            patch.replace_statement(statement, [f"linkStyle {','.join(map(str, kept))} {style[0]}"])
    return patch.apply()


def _link_indices(text: str, statement: Statement) -> list[int] | None:
    parts = text[statement.start : statement.stop].split(None, 2)
    if len(parts) < 2 or not re.fullmatch(r"\d+(?:,\d+)*", parts[1]):
        return None  # `linkStyle default …` and anything unusual stay as written
    return [int(i) for i in parts[1].split(",")]
