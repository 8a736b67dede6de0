"""Index one .mmd file into Canvas/CanvasNode rows and record changes seen on disk as revisions."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentfs.layout import CANVAS_DIR, NUMBER_PREFIX
from agentfs.paths import read_regular
from agentfs.wording import refusal_of
from canvases.mermaid import Canvas as ParsedCanvas
from canvases.mermaid import content_hash, parse
from canvases.mermaid.wording import Words
from canvases.models import Revision
from sessions import counters, search_index
from sessions.models import Agent, Canvas, CanvasNode

NUMBER_SUFFIX = re.compile(r"-(\d+)\.mmd$")


def canvas_number_and_label(filename: str) -> tuple[int | None, str]:
    """``003-k8s.mmd`` → (3, "k8s"); the ports' ``label-003.mmd`` → (3, "label")."""
    stem = filename[:-4] if filename.endswith(".mmd") else filename
    match = NUMBER_PREFIX.match(filename)
    if match:
        return int(match.group(1)), stem[match.end() :]
    match = NUMBER_SUFFIX.search(filename)
    if match:
        return int(match.group(1)), stem[: match.start()]
    return None, stem


@lru_cache(maxsize=16)
def parsed(text: str) -> ParsedCanvas:
    """`parse` with a small cache: one edit reads the same text in several places.

    Callers treat the result as read-only (the engine's editors parse their own copy).
    """
    return parse(text)


def read_text(path: Path) -> str:
    """``<agent>/mmds/<file>``, opened without following a link anywhere in those three names."""
    return read_regular(path, folders=2).decode("utf-8", errors="replace")


def canvas_apply_text(
    canvas: Canvas, text: str, doc: ParsedCanvas | None = None, *, size: int | None = None
) -> None:
    """Refresh a canvas row and its nodes from the text now on disk (does not save revisions)."""
    doc = doc or parsed(text)
    canvas.text = text
    canvas.content_hash = content_hash(text)
    canvas.size = len(text.encode("utf-8")) if size is None else size
    canvas.task_goal = doc.meta.task_goal or ""
    canvas.progress = doc.meta.progress
    canvas.created_time = (doc.meta.created or "")[:64]
    canvas.updated_time = (doc.meta.updated or "")[:64]
    counts: dict[str, int] = {}
    for node in doc.nodes.values():
        if node.fields.status:
            counts[node.fields.status] = counts.get(node.fields.status, 0) + 1
    canvas.status_counts = counts
    canvas.node_count = len(doc.nodes)
    canvas.edge_count = len(doc.edges)
    canvas.problems = [
        {
            "line": p.line,
            "col": p.col,
            "code": p.code,
            # JSON-safe: a cause that is itself Words is kept as its English sentence
            "values": {k: str(v) if isinstance(v, Words) else v for k, v in p.values.items()},
            "message": p.message,
            "severity": p.severity,
        }
        for p in doc.problems
    ]
    canvas.has_errors = doc.has_errors
    canvas.save()
    _nodes_sync(canvas, doc)


NODE_FIELDS = ("position", "title", "status", "summary", "timestamp", "shape", "subgraph")


def _nodes_sync(canvas: Canvas, doc: ParsedCanvas) -> None:
    """Bring CanvasNode rows in line with the text, touching only nodes that changed.

    Compares plain tuples, not model instances: an edit of a 300-node canvas changes one or two.
    """
    wanted: dict[str, tuple] = {}
    for position, node in enumerate(doc.nodes.values()):
        fields = node.fields
        wanted[node.id] = (
            position,
            fields.title or node.label,
            (fields.status or "")[:100],
            fields.summary or "",
            (fields.timestamp or "")[:64],
            node.shape,
            node.subgraph or "",
        )
    existing: dict[str, tuple[int, tuple]] = {}
    if canvas.pk:
        for pk, node_id, *values in CanvasNode.objects.filter(canvas=canvas).values_list(
            "pk", "node_id", *NODE_FIELDS
        ):
            existing[node_id] = (pk, tuple(values))
    differing = sum(1 for i, v in wanted.items() if i not in existing or existing[i][1] != v)
    # Placement and search follow the ids that appear or go (see sessions.counters).
    moved_ids = set(wanted).symmetric_difference(existing)
    if differing > 20:  # e.g. positions shifted after a merge: rewriting beats a CASE update
        search_index.nodes_unindex([pk for pk, _ in existing.values()])
        CanvasNode.objects.filter(canvas=canvas).delete()
        existing = {}
    stale = [pk for node_id, (pk, _) in existing.items() if node_id not in wanted]
    changed = [
        CanvasNode(pk=existing[node_id][0], **dict(zip(NODE_FIELDS, values, strict=True)))
        for node_id, values in wanted.items()
        if node_id in existing and existing[node_id][1] != values
    ]
    search_index.nodes_unindex([*stale, *(node.pk for node in changed)])
    if stale:
        CanvasNode.objects.filter(pk__in=stale).delete()
    if changed:
        CanvasNode.objects.bulk_update(changed, NODE_FIELDS)
    created = CanvasNode.objects.bulk_create(
        [
            CanvasNode(
                canvas=canvas,
                agent_id=canvas.agent_id,
                node_id=node_id,
                **dict(zip(NODE_FIELDS, values, strict=True)),
            )
            for node_id, values in wanted.items()
            if node_id not in existing
        ]
    )
    search_index.nodes_index([*(node.pk for node in changed), *(node.pk for node in created)])
    if moved_ids:
        counters.placement_refresh(canvas.agent_id, moved_ids)


def revision_record(
    canvas: Canvas,
    *,
    author: str,
    op: str,
    before_text: str,
    after_text: str,
    params: dict | None = None,
    remaps: dict | None = None,
    user: Any = None,
) -> Revision:
    last = canvas.revisions.order_by("-number").values_list("number", flat=True).first() or 0
    return Revision.objects.create(
        canvas=canvas,
        number=last + 1,
        author=author,
        user=user,
        op=op,
        params=params or {},
        before_text=before_text,
        after_text=after_text,
        before_hash=content_hash(before_text) if before_text else "",
        after_hash=content_hash(after_text),
        remaps=remaps or {},
    )


def canvas_index_file(agent: Agent, path: Path) -> bool:
    """Index ``path``; returns True when the canvas is new or its text changed on disk."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    canvas = Canvas.objects.filter(agent=agent, filename=path.name).first()
    if canvas and canvas.size == st.st_size and canvas.mtime_ns == st.st_mtime_ns:
        return False
    try:
        text = read_text(path)
    except FileNotFoundError:
        return False
    except OSError as error:  # a link, FIFO or device swapped in, or too large: not indexed
        # named on the agent's page with the refused links (ingest saves the agent)
        refusal = refusal_of(error, path.name, where=f"{CANVAS_DIR}/{path.name}")
        agent.refused_links = [*agent.refused_links, refusal.as_json()]
        return False
    if canvas and canvas.content_hash == content_hash(text):
        canvas.mtime_ns = st.st_mtime_ns
        canvas.save(update_fields=["mtime_ns"])
        return False
    before = canvas.text if canvas else ""
    if canvas is None:
        number, label = canvas_number_and_label(path.name)
        canvas = Canvas(agent=agent, filename=path.name, number=number, label=label)
    canvas.mtime_ns = st.st_mtime_ns
    canvas_apply_text(canvas, text, size=st.st_size)
    revision_record(
        canvas,
        author="agent",
        op="imported" if not before else "disk",
        before_text=before,
        after_text=text,
    )
    return True


def canvas_remove_missing(agent: Agent, missing: list[str]) -> None:
    """Drop the canvases whose files are gone; their nodes stop placing rows."""
    nodes = list(
        CanvasNode.objects.filter(agent=agent, canvas__filename__in=missing).values_list(
            "pk", "node_id"
        )
    )
    search_index.nodes_unindex([pk for pk, _ in nodes])
    Canvas.objects.filter(agent=agent, filename__in=missing).delete()
    counters.placement_refresh(agent.pk, {node_id for _, node_id in nodes})
