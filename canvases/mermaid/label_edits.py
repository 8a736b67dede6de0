"""The labels edits write: segments set or replaced, merged labels, all text made safe."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache

from .labels import escape_text, raw_segment_safe, raw_segments, truncate
from .lexer import SHAPE_DELIMITERS
from .model import Canvas, Node, NodeRef
from .patch import Patch
from .vocabulary import STATUS_PRECEDENCE

NOTE_LIMIT = 500
SUMMARY_LIMIT = 150
TITLE_LIMIT = 150
SEGMENT_ORDER = {None: 0, "status": 1, "summary": 2, "timestamp": 3}
SEGMENT_NAMES = {"status": "status", "summary": "summary", "timestamp": "Timestamp"}


def label_with(node: Node, changes: dict[str | None, str]) -> str:
    """The node's raw label with the given segments set (key None is the title; "" removes)."""
    segments: list[tuple[str | None, str]] = (
        raw_segments(node.label_raw) if node.label_ref is not None else [(None, node.id)]
    )
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
    kept = [(key, segment) for key, segment in segments if segment != ""]
    if kept and kept[0][0] is not None:  # the first segment is read as the title: keep one there
        kept.insert(0, (None, node.id))
    return "<br/>".join(raw_segment_safe(segment) for _, segment in kept)


def ref_with_label(doc: Canvas, ref: NodeRef, label: str, *, force_rect: bool = False) -> str:
    shape = "rect" if force_rect or ref.shape not in SHAPE_DELIMITERS else ref.shape
    opener, closer = SHAPE_DELIMITERS[shape]
    suffix = doc.text[ref.shape_end if ref.shape_end >= 0 else ref.id_end : ref.end]
    return f'{ref.id}{opener}"{label}"{closer}{suffix}'


def write_label(patch: Patch, node: Node, label: str) -> None:
    if node.label_ref is None:
        _insert_label(patch, node, label)
        return
    ref = node.label_ref
    patch.replace(ref.start, ref.end, ref_with_label(patch.doc, ref, label))


def _insert_label(patch: Patch, node: Node, label: str) -> None:
    ref = node.refs[0]
    patch.replace(ref.id_end, ref.id_end, f'["{label}"]')


def merged_segments(
    nodes: list[Node], *, label: str | None, summary: str | None, status: str | None
) -> list[str]:
    """Title, status, summary, Timestamp and extra segments of merged nodes (format spec §8).

    `status` is the status to write, already cleaned; None picks the most urgent one.
    """
    fields = [n.fields for n in nodes]
    title = escape_text(truncate(label.strip(), TITLE_LIMIT)) if label is not None else ""
    if not title:  # nothing typed (or only what human_text drops): the titles, joined
        title = escape_text(truncate(_join_titles(nodes), TITLE_LIMIT)) or nodes[0].id
    segments = [title]
    if status is not None:
        segments.append(f"status: {status}")
    else:
        statuses = [f.status for f in fields if f.status]
        known = [s for s in STATUS_PRECEDENCE if s in statuses]
        chosen = known[0] if known else (statuses[0] if statuses else None)
        if chosen:
            segments.append(f"status: {escape_text(chosen)}")
    if summary is not None:
        text = summary.strip()
    else:
        text = "; ".join(unique(f.summary for f in fields if f.summary))
    if text:
        segments.append(f"summary: {escape_text(truncate(text, SUMMARY_LIMIT))}")
    stamps = [f.timestamp for f in fields if f.timestamp]
    if stamps:
        segments.append(f"Timestamp: {escape_text(max(stamps, key=instant))}")
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
    titles = unique(n.fields.title for n in nodes if n.fields.title)
    phases = {n.fields.phase for n in nodes}
    if len(phases) == 1 and None not in phases:
        actions = unique(n.fields.action or "" for n in nodes)
        return f"{nodes[0].fields.phase}: {' + '.join(a for a in actions if a)}"
    return " + ".join(titles)


def segment_value(segments: list[str], key: str) -> str | None:
    for segment in segments[1:]:
        name, _, value = segment.partition(": ")
        if name.lower() == key:
            return value
    return None


@lru_cache(maxsize=4096)
def instant(stamp: str) -> tuple[int, float, str]:
    """Sort key for timestamps: parsed instants first, text otherwise."""
    try:
        moment = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
    except ValueError:
        return (0, 0.0, stamp)
    return (1, moment.timestamp(), stamp)


def unique(items: Iterable[str | None]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        if item is not None and item not in seen:
            seen[item] = None
    return list(seen)
