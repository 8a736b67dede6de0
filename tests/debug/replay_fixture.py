"""Two agents with the same rows and a known canvas history.

`watched`: memviz ingested each canvas version as the agent wrote it (revisions r1-r3, their
recorded instants moved onto the fixture's timeline). `after`: ingested once, after the run, so
the replay must reconstruct from node Timestamps and row times.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from canvases.models import Revision
from intake.ingest import ingest_path
from tests.debug.memory_factory import at, canvas, node, stamp, write_agent

SESSION = "5e1f0000-aaaa-4bbb-8ccc-000000000001"
FILE = "001-build-cache.mmd"
# The session's rows, as write_agent takes them (minutes: when, on the fixture's timeline).
ROWS: list[dict[str, Any]] = [
    {"minutes": 0, "tool": "read: Makefile", "node": "001-N2"},
    {"minutes": 10, "tool": "exec: make -n", "node": "001-N2"},
    {"minutes": 20, "tool": "edit: cache.py", "node": "001-N3"},
    {"minutes": 30, "tool": "exec: pytest -q", "node": "001-N3"},
    {"minutes": 40, "tool": "write: docs/cache.md", "node": "001-N4"},
    {"minutes": 50, "tool": "exec: make release", "node": "001-N4"},
]
ROOT = node("001-N1", "build-cache", "doing", None)
V1 = canvas(
    "cache the build", [ROOT, node("001-N2", "read build", "done", 0)], [("001-N1", "001-N2")]
)
V2 = canvas(
    "cache the build",
    [ROOT, node("001-N2", "read build", "done", 0), node("001-N3", "add cache", "done", 20)],
    [("001-N1", "001-N2"), ("001-N2", "001-N3")],
)
# The map-builder's rewrite after minute 40 drops N2 and adds N4.
V3 = canvas(
    "cache the build",
    [ROOT, node("001-N3", "add cache", "done", 20), node("001-N4", "document", "doing", 40)],
    [("001-N1", "001-N3"), ("001-N3", "001-N4")],
)
# (instant in minutes, expected nodes) for each source; an instant shows the frame of the last
# row at or before it (rows at minutes 0, 10, ... 50), with the canvas as of that row.
FROM_REVISIONS = [
    (12, {"001-N1", "001-N2"}),
    (33, {"001-N1", "001-N2", "001-N3"}),
    (55, {"001-N1", "001-N3", "001-N4"}),
]
FROM_TIMESTAMPS = [
    (12, {"001-N1"}),
    (33, {"001-N1", "001-N3"}),
    (55, {"001-N1", "001-N3", "001-N4"}),
]
RECORDED_AT = {1: 1, 2: 21, 3: 41}  # revision number -> minute memviz saw it


def build(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for number, text in ((1, V1), (2, V2), (3, V3)):
        write_agent(root, "watched", {SESSION: ROWS}, {FILE: text})
        ingest_path(root)
        Revision.objects.filter(canvas__agent__slug="watched", number=number).update(
            created_at=at(RECORDED_AT[number])
        )
    write_agent(root, "after", {SESSION: ROWS}, {FILE: V3})
    ingest_path(root)


def iso_at(minutes: float) -> str:
    return stamp(at(minutes))
