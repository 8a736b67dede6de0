"""Surgical edits of a canvas: each changes only the lines it must and returns the new text."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

from .labels import escape_text, raw_segment_safe, raw_segments, truncate
from .lexer import SHAPE_DELIMITERS
from .meta import PROGRESS_KEY, format_braced, format_comment, merge_keys, parse_comment
from .model import STATUS_VOCABULARY, Canvas, Node, NodeRef, Statement
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

NOTE_LIMIT = 500
SUMMARY_LIMIT = 150
TITLE_LIMIT = 150
TIMESTAMP_IN_LABEL = re.compile(r"(?i)timestamp\s*[:：]\s*([^<\"\]\n]+)")
STATUS_PRECEDENCE = ("blocked", "doing", "paused", "todo", "done")
SEGMENT_ORDER = {None: 0, "status": 1, "summary": 2, "timestamp": 3}
SEGMENT_NAMES = {"status": "status", "summary": "summary", "timestamp": "Timestamp"}


class EditError(ValueError):
    """An edit that cannot be applied; the message is meant for people."""


@dataclass
class EditResult:
    text: str
    id_map: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    added_edges: list[tuple[str, str]] = field(default_factory=list)
    removed_edges: list[tuple[str, str]] = field(default_factory=list)
    diff: str = ""


# ---------------------------------------------------------------------------------------------
# operations


def set_status(text: str, node_id: str, status: str) -> EditResult:
    doc = _parse(text)
    node = _node(doc, node_id)
    value = _clean_status(status)
    patch = Patch(doc)
    _write_label(patch, node, _label_with(node, {"status": value}))
    _sync_status_class(patch, doc, node_id, value)
    return _finish(doc, patch)


def annotate(text: str, node_id: str, note: str) -> EditResult:
    doc = _parse(text)
    node = _node(doc, node_id)
    if len(note) > NOTE_LIMIT:
        raise EditError(f"the note is {len(note)} characters long; the limit is {NOTE_LIMIT}")
    patch = Patch(doc)
    _write_label(patch, node, _label_with(node, {"note": escape_text(note)}))
    return _finish(doc, patch)


def edit_label(
    text: str, node_id: str, *, title: str | None = None, summary: str | None = None
) -> EditResult:
    doc = _parse(text)
    node = _node(doc, node_id)
    if title is None and summary is None:
        raise EditError("nothing to change: give a title or a summary")
    changes: dict[str | None, str] = {}
    if title is not None:
        if not title.strip():
            raise EditError("the title cannot be empty")
        changes[None] = escape_text(truncate(title.strip(), TITLE_LIMIT))
    if summary is not None:
        changes["summary"] = escape_text(truncate(summary.strip(), SUMMARY_LIMIT))
    patch = Patch(doc)
    _write_label(patch, node, _label_with(node, changes))
    return _finish(doc, patch)


def add_edge(text: str, source: str, target: str, *, label: str | None = None) -> EditResult:
    doc = _parse(text)
    _node(doc, source)
    _node(doc, target)
    if any(e.source == source and e.target == target for e in doc.edges):
        raise EditError(f"there is already an edge {source} → {target}")
    link = "-->"
    if label is not None and label.strip():
        link = '-->|"' + escape_text(label).replace("|", "#124;") + '"|'
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
        raise EditError(f"there is no edge {source} → {target}")
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
            _drop_from_id_statement(patch, statement, node_id)
    added: list[tuple[str, str]] = []
    if bridge:
        existing = {(e.source, e.target) for e in doc.edges}
        preds = _unique(e.source for e in doc.edges if e.target == node_id and e.source != node_id)
        succs = _unique(e.target for e in doc.edges if e.source == node_id and e.target != node_id)
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
    merged = _unique(ids)
    if not merged:
        raise EditError("nothing to merge: give at least one node id")
    for node_id in merged:
        _node(doc, node_id)
    keep = into if into is not None else merged[0]
    _node(doc, keep)
    if keep not in merged:
        merged.insert(0, keep)
    removed = [i for i in merged if i != keep]
    if not removed:
        raise EditError(f"merging {keep} into itself changes nothing")
    nodes = [doc.nodes[keep], *(doc.nodes[i] for i in removed)]
    rename = dict.fromkeys(removed, keep)

    segments = _merged_segments(nodes, keep, label=label, summary=summary, status=status)
    new_label = "<br/>".join(segments)
    final_status = _segment_value(segments, "status")

    patch = Patch(doc)
    keep_node = doc.nodes[keep]
    ref = keep_node.label_ref or keep_node.refs[0]
    label_override = {ref.start: _ref_with_label(doc, ref, new_label, force_rect=True)}
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
            _rename_in_id_statement(patch, doc, statement, rename, keep)
    if not written_label:  # pragma: no cover - the kept ref always sits in a chain
        raise EditError("internal error: the kept node's label was not written")
    _merge_status_classes(patch, doc, merged, keep, final_status)
    _update_meta_time(patch, doc, _segment_value(segments, "timestamp"))
    touched = [p for p in old_pairs if p[0] in rename or p[1] in rename]
    rewired = {(rename.get(s, s), rename.get(t, t)) for s, t in touched}
    added = sorted(p for p in rewired - set(old_pairs) if p[0] != p[1])
    return _finish(
        doc, patch, removed=removed, id_map=dict(rename), removed_edges=touched, added_edges=added
    )


def set_meta(text: str, **values: object) -> EditResult:
    if not values:
        raise EditError("nothing to change: give at least one metadata value")
    for key, value in values.items():
        if key == "progress" or PROGRESS_KEY.fullmatch(key):
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise EditError("progress must be a number from 0 to 100")
            try:
                number = float(value)
            except ValueError:
                raise EditError(f"progress must be a number from 0 to 100, not {value!r}") from None
            if not 0 <= number <= 100:
                raise EditError(f"progress must be from 0 to 100, not {value!r}")
        elif not isinstance(value, str | int | float) or isinstance(value, bool):
            raise EditError(f"{key} must be text or a number")
    doc = _parse(text)
    patch = Patch(doc)
    _write_meta(patch, doc, dict(values))
    return _finish(doc, patch)


def repair_oneliner(text: str) -> EditResult:
    repaired = repair_text(text)
    if repaired is None:
        raise EditError("this is not a one-line canvas with literal \\n separators")
    doc = parse(repaired)
    if doc.has_errors:
        first = next(p for p in doc.problems if p.severity == "error")
        where = f"line {first.line}: {first.message}"
        raise EditError(f"the repaired canvas still does not parse: {where}")
    return EditResult(text=repaired, diff=_diff(text, repaired))


# ---------------------------------------------------------------------------------------------
# labels


def _parse(text: str) -> Canvas:
    doc = parse(text)
    if doc.is_escaped_oneliner:
        raise EditError("this canvas is one line full of literal \\n: repair it first")
    return doc


def _node(doc: Canvas, node_id: str) -> Node:
    if not isinstance(node_id, str) or node_id not in doc.nodes:
        raise EditError(f"no node with id {node_id!r} in this canvas")
    return doc.nodes[node_id]


def _clean_status(status: str) -> str:
    if not isinstance(status, str) or not status.strip():
        raise EditError("the status cannot be empty")
    value = status.strip()
    value = value.lower() if value.lower() in STATUS_VOCABULARY else value
    value = escape_text(value)
    if len(value) > 40:
        raise EditError("a status is one short word (done, doing, todo, paused, blocked)")
    return value


def _label_with(node: Node, changes: dict[str | None, str]) -> str:
    """The node's raw label with the given segments set (key None is the title; "" removes)."""
    segments = raw_segments(node.label_raw) if node.label_ref is not None else [(None, node.id)]
    for key, value in changes.items():
        line = value if key is None else f"{SEGMENT_NAMES.get(key, key)}: {value}"
        index = next((i for i, (k, _) in enumerate(segments) if k == key), None)
        if index is not None and key is not None:  # one segment per key: drop repeats
            segments = segments[: index + 1] + [s for s in segments[index + 1 :] if s[0] != key]
        if index is not None:
            if value == "" and key is not None:
                del segments[index]
            else:
                segments[index] = (key, line)
        elif value != "":
            order = SEGMENT_ORDER.get(key, 9)
            at = len(segments)
            for i, (k, _) in enumerate(segments):
                if i and SEGMENT_ORDER.get(k, 9) > order:
                    at = i
                    break
            segments.insert(at, (key, line))
    return "<br/>".join(_safe(segment) for _, segment in segments if segment != "")


def _safe(segment: str) -> str:
    return raw_segment_safe(segment)


def _ref_with_label(doc: Canvas, ref: NodeRef, label: str, *, force_rect: bool = False) -> str:
    shape = "rect" if force_rect or ref.shape not in SHAPE_DELIMITERS else ref.shape
    opener, closer = SHAPE_DELIMITERS[shape]
    suffix = doc.text[ref.shape_end if ref.shape_end >= 0 else ref.id_end : ref.end]
    return f'{ref.id}{opener}"{label}"{closer}{suffix}'


def _write_label(patch: Patch, node: Node, label: str) -> None:
    if node.label_ref is None:
        _insert_label(patch, node, label)
        return
    ref = node.label_ref
    patch.replace(ref.start, ref.end, _ref_with_label(patch.doc, ref, label))


def _insert_label(patch: Patch, node: Node, label: str) -> None:
    ref = node.refs[0]
    patch.replace(ref.id_end, ref.id_end, f'["{label}"]')


def _merged_segments(
    nodes: list[Node], keep: str, *, label: str | None, summary: str | None, status: str | None
) -> list[str]:
    fields = [n.fields for n in nodes]
    if label is not None and label.strip():
        title = escape_text(truncate(label.strip(), TITLE_LIMIT))
    else:
        title = escape_text(truncate(_join_titles(nodes), TITLE_LIMIT))
    segments = [title]
    if status is not None:
        segments.append(f"status: {_clean_status(status)}")
    else:
        statuses = [f.status for f in fields if f.status]
        known = [s for s in STATUS_PRECEDENCE if s in statuses]
        chosen = known[0] if known else (statuses[0] if statuses else None)
        if chosen:
            segments.append(f"status: {escape_text(chosen)}")
    if summary is not None:
        text = summary.strip()
    else:
        text = "; ".join(_unique(f.summary for f in fields if f.summary))
    if text:
        segments.append(f"summary: {escape_text(truncate(text, SUMMARY_LIMIT))}")
    stamps = [f.timestamp for f in fields if f.timestamp]
    if stamps:
        segments.append(f"Timestamp: {escape_text(max(stamps, key=_instant))}")
    extras: dict[str, list[str]] = {}
    for f in fields:
        for key, value in f.extra.items():
            extras.setdefault(key, [])
            if value and value not in extras[key]:
                extras[key].append(value)
    for key, values in extras.items():
        if values:
            joined = escape_text(truncate(" / ".join(values), NOTE_LIMIT))
            segments.append(f"{escape_text(key)}: {joined}")
    return segments


def _join_titles(nodes: list[Node]) -> str:
    titles = _unique(n.fields.title for n in nodes if n.fields.title)
    phases = {n.fields.phase for n in nodes}
    if len(phases) == 1 and None not in phases:
        actions = _unique(n.fields.action or "" for n in nodes)
        return f"{nodes[0].fields.phase}: {' + '.join(a for a in actions if a)}"
    return " + ".join(titles)


def _segment_value(segments: list[str], key: str) -> str | None:
    for segment in segments[1:]:
        name, _, value = segment.partition(": ")
        if name.lower() == key:
            return value
    return None


@lru_cache(maxsize=4096)
def _instant(stamp: str) -> tuple[int, float, str]:
    """Sort key for timestamps: parsed instants first, text otherwise."""
    try:
        moment = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
    except ValueError:
        return (0, 0.0, stamp)
    return (1, moment.timestamp(), stamp)


# ---------------------------------------------------------------------------------------------
# class / style / click statements


def _keep_all(_source: str, _target: str, _index: int) -> bool:
    return True


def _id_statement_text(statement: Statement, ids: list[str]) -> str:
    if statement.kind == "class":
        return f"class {','.join(ids)} {statement.name}"
    return f"{statement.kind} {ids[0]} {statement.name}".rstrip()


def _drop_from_id_statement(patch: Patch, statement: Statement, node_id: str) -> None:
    rest = [i for i in statement.ids if i != node_id]
    if rest and statement.kind == "class":
        patch.replace_statement(statement, [_id_statement_text(statement, rest)])
    else:
        patch.remove_statement(statement)


def _rename_in_id_statement(
    patch: Patch, doc: Canvas, statement: Statement, rename: dict[str, str], keep: str
) -> None:
    ids = _unique(rename.get(i, i) for i in statement.ids)
    duplicate = any(
        other is not statement
        and other.kind == statement.kind
        and keep in other.ids
        and (statement.kind != "class" or other.name == statement.name)
        and not set(other.ids) & set(rename)
        for other in doc.statements
    )
    if duplicate:
        ids = [i for i in ids if i != keep]
    if not ids:
        patch.remove_statement(statement)
    else:
        patch.replace_statement(statement, [_id_statement_text(statement, ids)])


def _sync_status_class(patch: Patch, doc: Canvas, node_id: str, status: str) -> None:
    """`class <id> <status>` lines follow the node's status so the file's own styling agrees."""
    for statement in doc.statements:
        if statement.kind != "class" or statement.name not in STATUS_VOCABULARY:
            continue
        if node_id not in statement.ids or statement.name == status:
            continue
        rest = [i for i in statement.ids if i != node_id]
        lines = [_id_statement_text(statement, rest)] if rest else []
        if status in STATUS_VOCABULARY:
            lines.append(f"class {node_id} {status}")
        patch.replace_statement(statement, lines)


def _merge_status_classes(
    patch: Patch, doc: Canvas, merged: list[str], keep: str, status: str | None
) -> None:
    """Status `class` lines of merged nodes collapse into one line for the kept node."""
    first = True
    for statement in doc.statements:
        if statement.kind != "class" or statement.name not in STATUS_VOCABULARY:
            continue
        if not set(statement.ids) & set(merged):
            continue
        rest = [i for i in statement.ids if i not in merged]
        lines = [_id_statement_text(statement, rest)] if rest else []
        if first and status in STATUS_VOCABULARY:
            lines.append(f"class {keep} {status}")
        first = False
        if lines != [doc.text[statement.start : statement.stop]]:
            patch.replace_statement(statement, lines)


# ---------------------------------------------------------------------------------------------
# metadata


def _write_meta(patch: Patch, doc: Canvas, updates: dict[str, object]) -> None:
    meta = doc.meta
    if meta.form in ("json", "loose", "single_percent"):
        statement = next(s for s in doc.statements if s.kind == "meta" and s.line == meta.line)
        values = merge_keys(meta.values, updates)
        patch.replace(
            statement.start,
            statement.stop,
            format_braced(values, single_percent=meta.form == "single_percent"),
        )
    elif meta.form == "comment":
        merged = merge_keys(meta.values, updates)
        lines = {s.line: s for s in doc.statements if s.kind == "meta_comment"}
        by_key: dict[str, Statement] = {}
        for statement in lines.values():
            parsed = parse_comment(doc.text[statement.start : statement.stop])
            if parsed is not None:
                by_key[parsed[0]] = statement
        new_lines = []
        for key, value in merged.items():
            if key in by_key and meta.values.get(key) != value:
                statement = by_key[key]
                patch.replace(statement.start, statement.stop, format_comment(key, value))
            elif key not in by_key:
                new_lines.append(format_comment(key, value))
        patch.insert_lines_after(meta.line_end or 0, new_lines)
    else:
        values = merge_keys({}, updates)
        patch.insert_lines_after(0, [format_braced(values)])


def _update_meta_time(patch: Patch, doc: Canvas, merged_stamp: str | None) -> None:
    if doc.meta.form == "none":
        return
    stamps = [m.strip() for m in TIMESTAMP_IN_LABEL.findall(doc.text)]
    if merged_stamp:
        stamps.append(merged_stamp)
    if not stamps:
        return
    newest = max(stamps, key=_instant)
    if doc.meta.updated and _instant(doc.meta.updated) >= _instant(newest):
        return
    key = next((k for k in doc.meta.values if k.lower() == "updatedtime"), "updatedTime")
    _write_meta(patch, doc, {key: newest})


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


def _unique(items: Iterable[str | None]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        if item is not None and item not in seen:
            seen[item] = None
    return list(seen)


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
        raise EditError(f"the result would not parse ({first.message}): {line.strip()[:80]}")


def _finish(doc: Canvas, patch: Patch, **fields: object) -> EditResult:
    try:
        new_text, diff, written = patch.apply_with_diff()
    except PatchConflict as error:
        raise EditError(f"this edit could not be applied cleanly: {error}") from None
    _check_written_lines(written)
    renumbered = _renumber_link_styles(doc, new_text, fields.get("id_map") or {})
    if renumbered is not None:
        new_text, diff = renumbered, _diff(doc.text, renumbered)
    result = EditResult(text=new_text, diff=diff)
    for key, value in fields.items():
        setattr(result, key, value)
    return result


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
