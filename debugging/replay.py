"""Replaying a session: one frame per row, with the canvas as it stood at that row's instant.

Plain Python (no Django): the selector hands in the rows, every known version of each canvas
(memviz's recorded revisions, with the instant memviz saw them) and the first row time of each
node id; this module decides, for every row, which canvas was active and what it showed.

Two sources, labelled on every frame:
- ``revision``: memviz was watching — the newest recorded version at or before the instant.
- ``reconstructed``: before memviz first saw the canvas, its earliest recorded text is shown with
  each node present from the earlier of its label's ``Timestamp`` and its first row's time;
  nodes with neither (a root label) are present whenever the canvas is.
The active canvas follows the rows' node ids (the canvas holding the row's node, else the one
whose number prefixes it); rows before the first placed row take the first placed row's canvas.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from agentfs.layout import NUMBER_PREFIX
from agentfs.row_fields import is_wait, node_aliases, row_spelling
from canvases.canvas_scene import canvas_scene
from canvases.mermaid import Canvas as ParsedCanvas
from canvases.mermaid import content_hash, parse, render_body
from canvases.mermaid.mermaid_source import mermaid_view
from debugging.page_types import ReplayFrame, ReplayScene
from sessions.instants import iso, parse_instant

REVISION, RECONSTRUCTED, CURRENT = "revision", "reconstructed", "current"


@dataclass(frozen=True, slots=True)
class ReplayRow:
    id: int
    line_no: int
    time: datetime | None
    time_text: str
    node_id: str | None
    tool_call: str
    summary: str


@dataclass(frozen=True, slots=True)
class CanvasVersion:
    file: str
    text: str
    recorded_at: datetime | None  # when memviz saw this text; None: no revision recorded
    revision: int | None = None
    author: str | None = None


@dataclass(slots=True)
class SceneNode:
    id: str
    appears: datetime | None  # None: undated, present whenever the canvas is shown
    from_frame: int
    title: str
    status: str
    summary: str


@dataclass(slots=True)
class Scene:
    """One canvas text as shown by some frames (a revision, or the base of a reconstruction)."""

    index: int
    file: str
    source: str
    revision: int | None
    author: str | None
    recorded_at: datetime | None
    text: str
    hash: str
    nodes: list[SceneNode]
    doc: ParsedCanvas = field(repr=False)

    def present(self, frame: int) -> list[str]:
        return [n.id for n in self.nodes if n.from_frame <= frame]

    def as_json(self) -> ReplayScene:
        return {
            "index": self.index,
            "file": self.file,
            "source": self.source,
            "revision": self.revision,
            "author": self.author,
            "recorded_at": iso(self.recorded_at),
            "hash": self.hash,
            "nodes": [
                {
                    "id": n.id,
                    "from": n.from_frame,
                    "appears": iso(n.appears),
                    "title": n.title,
                    "status": n.status,
                    "summary": n.summary,
                }
                for n in self.nodes
            ],
            "render_body": render_body(self.text, doc=self.doc),
            "scene": canvas_scene(self.text, self.doc),  # what the page draws
            # what the mermaid.js view draws (static/js/canvas-mermaid.js), status colours apart
            "mermaid": mermaid_view(self.text, self.doc),
        }


@dataclass(slots=True)
class Replay:
    rows: list[ReplayRow]
    times: list[datetime | None]  # each row's instant (carried over from a neighbour if unknown)
    sorted_times: list[datetime]  # running maximum of `times`: what the slider bisects
    active: list[str | None]
    scene_of: list[int | None]
    scenes: list[Scene]

    def __len__(self) -> int:
        return len(self.rows)

    def index_at(self, instant: datetime) -> int:
        """The last frame at or before ``instant`` (0 when it is before the first row)."""
        if not self.sorted_times:
            return 0
        return max(0, bisect_right(self.sorted_times, instant) - 1)

    def present(self, index: int) -> list[str]:
        scene = self.scene_of[index]
        return self.scenes[scene].present(index) if scene is not None else []

    def frame(self, index: int) -> ReplayFrame:
        row = self.rows[index]
        scene = self.scenes[s] if (s := self.scene_of[index]) is not None else None
        return {
            "index": index,
            "time": iso(self.times[index]),
            "time_known": row.time is not None,
            "row": {"id": row.id, "line_no": row.line_no, "node_id": row.node_id},
            "active_canvas": self.active[index],
            "scene": scene.index if scene else None,
            "source": scene.source if scene else None,
            "revision": scene.revision if scene else None,
            "hash": scene.hash if scene else None,
            "nodes": scene.present(index) if scene else [],
        }


def _carry_times(rows: list[ReplayRow]) -> list[datetime | None]:
    """Unknown times take the previous known one (or the next, before the first)."""
    out: list[datetime | None] = []
    last: datetime | None = None
    for row in rows:
        last = row.time or last
        out.append(last)
    first = next((t for t in out if t is not None), None)
    return [t or first for t in out]


def _running_max(times: list[datetime | None]) -> list[datetime]:
    out: list[datetime] = []
    for moment in times:
        if moment is None:
            return []
        out.append(moment if not out or moment > out[-1] else out[-1])
    return out


def node_canvas_map(latest: dict[str, str]) -> dict[str, str]:
    """Row node id (every alias) → canvas file, from each canvas's newest text."""
    out: dict[str, str] = {}
    for file, text in sorted(latest.items()):
        for node_id in parse(text).nodes:
            for alias in node_aliases(node_id):
                out.setdefault(alias, file)
    return out


def _canvas_of(
    node_id: str | None, by_node: dict[str, str], by_number: dict[int, str]
) -> str | None:
    if not node_id or is_wait(node_id):
        return None
    if node_id in by_node:
        return by_node[node_id]
    match = NUMBER_PREFIX.match(row_spelling(node_id))
    return by_number.get(int(match.group(1))) if match else None


def canvases_by_number(files: Iterable[str]) -> dict[int, str]:
    """Each canvas number's file (the first by name when two share one): where a row whose node
    is drawn nowhere belongs, by its node id's ``NNN-``."""
    by_number: dict[int, str] = {}
    for name in sorted(files):
        match = NUMBER_PREFIX.match(name)
        if match:
            by_number.setdefault(int(match.group(1)), name)
    return by_number


def active_canvases(
    rows: list[ReplayRow], by_node: dict[str, str], by_number: dict[int, str], fallback: str | None
) -> list[str | None]:
    placed = [_canvas_of(r.node_id, by_node, by_number) for r in rows]
    first = next((c for c in placed if c), fallback)
    out: list[str | None] = []
    current = first
    for canvas in placed:
        current = canvas or current
        out.append(current)
    return out


def build_replay(
    rows: list[ReplayRow],
    versions: dict[str, list[CanvasVersion]],
    *,
    node_first_row: dict[str, datetime],
    fallback_active: str | None,
) -> Replay:
    """Frames for ``rows`` (in file order) over the canvases' ``versions`` (any order)."""
    ordered = {
        file: sorted(vs, key=lambda v: (v.recorded_at is None, v.recorded_at, v.revision or 0))
        for file, vs in versions.items()
        if vs
    }
    latest = {file: vs[-1].text for file, vs in ordered.items()}
    by_number = canvases_by_number(ordered)
    times = _carry_times(rows)
    sorted_times = _running_max(times)
    active = active_canvases(rows, node_canvas_map(latest), by_number, fallback_active)
    replay = Replay(rows, times, sorted_times, active, [], [])
    keys: dict[tuple[str, int, str], int] = {}
    for index, file in enumerate(active):
        if file is None or file not in ordered:
            replay.scene_of.append(None)
            continue
        position, source = _version_at(ordered[file], sorted_times[index] if sorted_times else None)
        key = (file, position, source)
        if key not in keys:
            keys[key] = len(replay.scenes)
            version = ordered[file][position]
            replay.scenes.append(_scene(keys[key], version, source, sorted_times, node_first_row))
        replay.scene_of.append(keys[key])
    return replay


def _version_at(versions: list[CanvasVersion], moment: datetime | None) -> tuple[int, str]:
    if moment is None:
        return len(versions) - 1, CURRENT
    recorded = [v.recorded_at for v in versions if v.recorded_at is not None]
    seen = bisect_right(recorded, moment)
    if seen:
        return seen - 1, REVISION
    return 0, RECONSTRUCTED


def _scene(
    index: int,
    version: CanvasVersion,
    source: str,
    sorted_times: list[datetime],
    node_first_row: dict[str, datetime],
) -> Scene:
    doc = parse(version.text)
    nodes = []
    for node in doc.nodes.values():
        fields = node.fields
        appears = None
        if source == RECONSTRUCTED:
            candidates = [parse_instant(fields.timestamp)]
            candidates += [node_first_row.get(alias) for alias in node_aliases(node.id)]
            known = [c for c in candidates if c is not None]
            appears = min(known) if known else None
        from_frame = 0 if appears is None else bisect_left(sorted_times, appears)
        nodes.append(
            SceneNode(
                id=node.id,
                appears=appears,
                from_frame=from_frame,
                title=fields.title or node.label,
                status=fields.status or "",
                summary=fields.summary or "",
            )
        )
    return Scene(
        index=index,
        file=version.file,
        source=source,
        revision=version.revision,
        author=version.author,
        recorded_at=version.recorded_at,
        text=version.text,
        hash=content_hash(version.text),
        nodes=nodes,
        doc=doc,
    )


def row_from_values(
    pk: int, line_no: int, timestamp: str, node_id: str | None, tool_call: str, summary: str
) -> ReplayRow:
    return ReplayRow(pk, line_no, parse_instant(timestamp), timestamp, node_id, tool_call, summary)
