"""Two generated agents: `troubled` has one of every diagnosis, `healthy` has none."""

from __future__ import annotations

from pathlib import Path

from intake.ingest import ingest_path
from tests.debug.memory_factory import canvas, node, write_agent

BAD = "bad00000-0000-4000-8000-000000000001"
GOOD = "good0000-0000-4000-8000-000000000001"
LONG = "the summary goes on and on about what it saw " * 4


def _troubled_rows() -> list[dict]:
    return [
        {"minutes": 0, "tool": "read: setup.cfg", "node": None},  # null, far older than 300 s
        {
            "minutes": 1,
            "tool": "exec: npm test",
            "node": "001-N2",
            "result": "FAIL src/a.test.js\nProcess exited with code 1",
        },
        {"minutes": 2, "tool": "exec: npm test", "node": "001-N2"},
        {"minutes": 3, "tool": "exec:   npm test", "node": "001-N2"},  # same call, other spacing
        {"minutes": 4, "tool": "read: a.py", "node": "009-N9"},  # node on no canvas
        {"minutes": 5, "tool": "exec: ls", "node": "wait"},  # a map-builder pass that never ended
        {"minutes": 6, "tool": "read: gone.md", "node": "001-N2", "ref": "missing"},
        {"minutes": 7, "tool": "read: b.py", "node": "001-N2", "summary": "   "},
        {"minutes": 8, "tool": "exec: true", "node": "001-N2", "result": "ok", "summary": LONG},
        {"minutes": 90, "tool": "read: c.py", "node": "001-N2"},
    ]


def _healthy_rows() -> list[dict]:
    calls = ["read: a.py", "exec: pytest -q", "edit: a.py", "exec: pytest -q", "read: b.py"]
    return [
        {
            "minutes": i,
            "tool": call,
            "node": "001-N2",
            "result": "collected 12 items\n............\n12 passed in 0.5s",
        }
        for i, call in enumerate(calls)
    ]


def build(root: Path) -> None:
    filler = [node(f"001-N{k}", f"step {k} " + "x" * 120, "done", 1) for k in range(3, 40)]
    troubled = canvas(
        "fix the tests",
        [node("001-N1", "fix", "doing", 0), node("001-N2", "run tests", "blocked", 2), *filler],
    )
    healthy = canvas(
        "tidy", [node("001-N1", "tidy", "done", 0), node("001-N2", "tests", "done", 4)]
    )
    write_agent(root, "troubled", {BAD: _troubled_rows()}, {"001-fix-tests.mmd": troubled})
    write_agent(root, "healthy", {GOOD: _healthy_rows()}, {"001-tidy.mmd": healthy})
    ingest_path(root)
