"""SIGKILL a memviz process at every point of a merge (and at random moments), 9 times over
(MEMVIZ_CRASH_RUNS=40 for a longer hunt):
after the start-up pass, canvas and rows agree, nothing points at a merged-away node, the merge
is recorded as the person's or not at all, and no temp file or intent is left."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from canvases.mermaid import content_hash, parse

pytestmark = pytest.mark.slow
# every named point once, then random moments; each run costs two Python start-ups
RUNS = int(os.environ.get("MEMVIZ_CRASH_RUNS", 9))
NODES = 2 * RUNS + 4  # each run merges a fresh pair
REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CANVAS = "001-crash.mmd"
ROWS_PER_FILE = 3000
POINTS = [
    "prepared",
    "journaled",
    "canvas-renamed",
    "one-file-renamed",
    "files-renamed",
    "recorded",
    "committed",
    "random",
]


def _make_agent(agent: Path) -> None:
    (agent / "mmds").mkdir(parents=True)
    (agent / "refs").mkdir()
    lines = ['%%{ "taskGoal": "crash test", "progress": "10" }%%', "flowchart TD"]
    lines += [
        f'    001-N{k}["step {k}<br/>status: done<br/>summary: s{k}"]' for k in range(1, NODES + 1)
    ]
    lines += [f"    001-N{k} --> 001-N{k + 1}" for k in range(1, NODES)]
    (agent / "mmds" / CANVAS).write_text("\n".join(lines), "utf-8")
    for f in range(3):
        rows = [
            json.dumps(
                {
                    "tool_call_id": f"call_{f}_{k}",
                    "tool_call": "exec",
                    "summary": "x" * 80,
                    "node_id": f"001-N{k % NODES + 1}",
                }
            )
            for k in range(ROWS_PER_FILE)
        ]
        (agent / f"offload-s{f}.jsonl").write_text("\n".join(rows) + "\n", "utf-8")
    old = time.time() - 86_400  # not "live"
    for path in agent.rglob("*"):
        os.utime(path, (old, old))


def _env(var: Path, root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "REDIS_URL"))}
    env.pop("DATABASE_URL", None)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "memviz.settings",
            "MEMVIZ_VAR_DIR": str(var),
            "MEMVIZ_DATA_ROOT": str(root),
            "MEMVIZ_JOURNAL_DIR": str(var / "intents"),
            "MEMVIZ_LOG_LEVEL": "ERROR",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _rows(agent: Path) -> dict[tuple[str, int], str | None]:
    out = {}
    for path in sorted(agent.glob("offload-*.jsonl")):
        for number, line in enumerate(path.read_text("utf-8").split("\n"), start=1):
            if line.strip():
                out[(path.name, number)] = json.loads(line).get("node_id")
    return out


def _check(agent: Path, var: Path, merged_so_far: dict[str, str]) -> None:
    text = (agent / "mmds" / CANVAS).read_text("utf-8")
    doc = parse(text)
    assert not doc.has_errors
    rows = _rows(agent)
    on_rows = set(rows.values())
    for gone, kept in merged_so_far.items():
        assert gone not in doc.nodes and kept in doc.nodes
        assert gone not in on_rows, f"rows still point at merged-away {gone}"
    for node in doc.nodes:
        assert node in on_rows  # every node present kept its rows
    db = sqlite3.connect(var / "memviz.sqlite3")
    try:
        (indexed_hash,) = db.execute(
            "select content_hash from canvases_canvas where filename = ?", (CANVAS,)
        ).fetchone()
        assert indexed_hash == content_hash(text)
        index = {
            (relpath, line): node
            for relpath, line, node in db.execute(
                "select s.relpath, r.line_no, r.node_id from agent_sessions_row r "
                "join agent_sessions_agentsession s on s.id = r.session_id"
            )
        }
        assert index == rows
        revisions = db.execute(
            "select author, op, params from canvases_revision order by number"
        ).fetchall()
    finally:
        db.close()
    assert [r[:2] for r in revisions] == [("agent", "imported")] + [("crash", "merge")] * len(
        merged_so_far
    )
    leftovers = [p.name for p in agent.rglob("*") if ".memviz-tmp-" in p.name]
    assert leftovers == []
    journal = var / "intents"
    assert not journal.exists() or sorted(p.name for p in journal.iterdir()) == []


def test_sigkill_anywhere_in_a_merge_leaves_canvas_and_rows_agreeing(tmp_path: Path) -> None:
    rng = random.Random(20261201)
    root, var = tmp_path / "root", tmp_path / "var"
    var.mkdir()
    agent = root / "crash"
    _make_agent(agent)
    env = _env(var, root)
    _manage(env, "migrate", "--verbosity", "0")
    _manage(env, "ingest", str(root))
    _manage(env, "shell", "-c", "from django.contrib.auth.models import User; User.objects.create_user('crash', password='pw')")
    merged: dict[str, str] = {}
    outcomes = []
    for run in range(RUNS):
        keep, gone = f"001-N{2 * run + 1}", f"001-N{2 * run + 2}"
        point = POINTS[run % len(POINTS)] if run < len(POINTS) else rng.choice(POINTS)
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "crash_merge_proc.py"), CANVAS, keep, gone],
            cwd=REPO,
            env={**env, "MEMVIZ_CRASH_AT": point},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().strip() == "started", proc.stderr.read()
        if point == "random":
            time.sleep(rng.uniform(0.0, 0.35))
        else:
            line = proc.stdout.readline().strip()
            assert line == f"crash-point {point}", proc.stderr.read()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        _manage(env, "ingest", str(root))  # the start-up pass (`manage.py run`, the watcher)
        doc = parse((agent / "mmds" / CANVAS).read_text("utf-8"))
        if gone not in doc.nodes:
            merged[gone] = keep
        outcomes.append((point, gone not in doc.nodes))
        _check(agent, var, merged)
    print("runs (crash point, merge kept):", outcomes)
    # the early points drop the merge, the late ones keep it: both kinds were exercised
    kept = {p for p, applied in outcomes if applied}
    dropped = {p for p, applied in outcomes if not applied}
    assert {"canvas-renamed", "files-renamed", "recorded", "committed"} <= kept
    assert {"prepared", "journaled"} <= dropped
