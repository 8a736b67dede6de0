"""Two runs of one agent that differ in every way the comparison names (built per test)."""

from __future__ import annotations

from pathlib import Path

from intake.ingest import ingest_path
from tests.debug.memory_factory import canvas, node, write_agent

AGENT, A, B = "runner", "run-1", "run-2"
HOSTILE = '<img src=x onerror="document.body.dataset.pwned=1">'


def _rows(start: float, calls: list[tuple[str, str, str, int]]) -> list[dict]:
    return [
        {"minutes": start + k, "tool": t, "node": n, "summary": s, "score": score}
        for k, (t, n, s, score) in enumerate(calls)
    ]


def build(root: Path) -> None:
    run_1 = _rows(
        0,
        [
            ("read: docs/spec.md", "001-N1", "spec read", 7),
            ("exec: pytest -q", "001-N2", "3 failed", 4),
            ("edit: src/app.py", "001-N2", "fixed the timeout", 6),
            ("exec: pytest -q", "001-N2", "1 failed", 5),
            (f"write: notes {HOSTILE}.md", "001-N3", f"notes {HOSTILE}", 5),
        ],
    )
    run_2 = _rows(
        60,
        [
            ("read: docs/spec.md", "001-N1", "spec read", 7),
            ("grep: TODO src/", "001-N1", "2 TODOs", 5),
            ("exec: pytest -q", "001-N2", "3 failed", 4),
            ("edit: src/session.py", "001-N2", "fixed the TTL", 6),
            ("exec: pytest -q", "001-N2", "all 42 passed", 9),
            ("exec: ./deploy.sh", "001-N4", "deployed", 8),
        ],
    )
    nodes = [
        node("001-N1", "Read the spec", "done", 0),
        node("001-N2", "Fix the tests", "doing", 1),
        node("001-N3", f"Write notes {HOSTILE}", "done", 4),
        node("001-N4", "Deploy", "todo", 65),
    ]
    write_agent(root, AGENT, {A: run_1, B: run_2}, {"001-fix-tests.mmd": canvas("fix", nodes)})
    ingest_path(root)
