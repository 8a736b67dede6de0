"""Issue 20: several memviz processes on one database (docs/deploy.md), as real processes.

- `run` listens at once; the first ingest of a 20,000-row agent runs as a job meanwhile and its
  progress shows on the home page, to anonymous viewers too.
- Any number of watchers: one is elected; kill -9 it and another takes over and indexes appends.
- A `run` killed with kill -9 leaves no watcher behind.
- Two `run`s on an empty database both migrate (under a lock) and serve.

SQLite (a file lock beside the database) here; on PostgreSQL (an advisory lock) in CI's second
pass, where DATABASE_URL is set: each test then makes a database of its own on that server.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.debug.memory_factory import canvas, write_agent, write_big_agent
from tests.live.conftest import REPO, free_port, server_env

pytestmark = [pytest.mark.slow, pytest.mark.database]
ROWS = 20_000


@pytest.fixture
def database_url() -> Iterator[str | None]:
    """None (SQLite in the test's var folder), or a fresh PostgreSQL database in the PG pass."""
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        yield None
        return
    sys.path.insert(0, str(REPO / "bench"))
    from load import postgres_database

    from tests.concurrency.postgres_server import postgres_server_url

    with postgres_database(postgres_server_url()) as url:
        yield url


def big_agent(root: Path, rows: int = ROWS) -> Path:
    return write_big_agent(root, "big", rows)


def small_agent(root: Path) -> Path:
    sessions = {"s1": [{"minutes": i, "tool": "exec:ls", "ref": False} for i in range(5)]}
    write_agent(root, "small", sessions, {"001-task.mmd": canvas("small", [])})
    return root / "small"


class Procs:
    """Child processes of one test, all stopped at its end (kill -9 after a grace period)."""

    def __init__(self, tmp: Path, env: dict[str, str]) -> None:
        self.tmp = tmp
        self.env = env
        self.all: list[subprocess.Popen] = []

    def start(self, name: str, *args: str, **env: str) -> subprocess.Popen:
        log = (self.tmp / f"{name}.log").open("w")
        proc = subprocess.Popen(
            [sys.executable, "manage.py", *args],
            cwd=REPO,
            env={**self.env, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        proc.log = self.tmp / f"{name}.log"  # type: ignore[attr-defined]
        self.all.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.all:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.all:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def procs(tmp_path: Path, database_url: str | None) -> Iterator[Callable[..., Procs]]:
    made: list[Procs] = []

    def make(root: Path, **extra: str) -> Procs:
        var = tmp_path / "var"
        var.mkdir(exist_ok=True)
        env = server_env(var, root, MEMVIZ_WATCH_NICE="0", **extra)
        if database_url:
            env["DATABASE_URL"] = database_url
        made.append(Procs(tmp_path, env))
        return made[-1]

    yield make
    for group in made:
        group.stop()


def get_json(url: str, timeout: float = 5) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as answer:
        return json.load(answer)


def until(what: str, check: Callable[[], Any], timeout: float, *logs: Path) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError, ValueError, KeyError):
            value = check()
            if value:
                return value
        if time.monotonic() > deadline:
            tails = "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in logs)
            pytest.fail(f"{what}: not within {timeout} s\n{tails}")
        time.sleep(0.2)


def rows_of(port: int, agent: str) -> int:
    agents = get_json(f"http://127.0.0.1:{port}/?format=json")["agents"]
    return next((a["rows"] for a in agents if a["slug"] == agent), 0)


def test_run_serves_at_once_while_its_first_ingest_shows_progress(
    tmp_path: Path, procs: Callable[..., Procs]
) -> None:
    root = tmp_path / "root"
    big_agent(root)
    hold = tmp_path / "hold"  # the ingest job waits while this exists (intake/tasks.py)
    hold.touch()
    group = procs(root, MEMVIZ_TEST_HOLD_FILE=str(hold))
    port = free_port()
    started = time.monotonic()
    server = group.start("run", "run", "--no-worker", "--port", str(port))
    home = f"http://127.0.0.1:{port}/"
    until("the first page", lambda: get_json(home + "?format=json"), 60, server.log)  # type: ignore[attr-defined]
    served_after = time.monotonic() - started
    running = until(
        "a running ingest job on the home page",
        lambda: [j for j in get_json(home + "?format=json")["jobs"] if j["status"] == "running"],
        30,
        server.log,  # type: ignore[attr-defined]
    )
    assert running[0]["path"] in (str(root), "<data root>")  # named, not shown, to anonymous readers
    page = urllib.request.urlopen(home, timeout=5).read().decode()  # anonymous, as HTML
    assert f'id="job-{running[0]["id"]}"' in page and "<progress" in page
    hold.unlink()
    until("all 20,000 rows indexed", lambda: rows_of(port, "big") == ROWS, 180, server.log)  # type: ignore[attr-defined]
    job = until(
        "the job done",
        lambda: [j for j in get_json(home + "?format=json")["jobs"] if j["status"] == "done"],
        30,
        server.log,  # type: ignore[attr-defined]
    )
    assert job[0]["percent"] == 100
    # The console: the URL, not a line per request or per step.
    lines = [line for line in server.log.read_text().splitlines() if line.strip()]  # type: ignore[attr-defined]
    assert any(f":{port}/" in line for line in lines) and len(lines) <= 4, lines
    print(f"served {served_after:.1f} s after start, while the ingest ran")


def holder(proc_of: dict[int, subprocess.Popen], group: Procs) -> int:
    """The pid of the process that holds the watch lock (asked of memviz itself)."""
    code = "from memviz.process_lock import lock_holder; print(lock_holder('watcher') or '')"
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=REPO,
        env=group.env,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    pid = int(out.rpartition(":")[2]) if out else 0
    return pid if pid in proc_of else 0


def append_rows(agent_dir: Path, prefix: str, count: int) -> None:
    session = next(agent_dir.glob("offload-*.jsonl"))
    with session.open("a") as handle:
        for i in range(count):
            row = {"tool_call_id": f"{prefix}_{i}", "tool_call": "exec", "summary": prefix}
            handle.write(json.dumps(row) + "\n")


def test_one_watcher_is_elected_and_another_takes_over_when_it_dies(
    tmp_path: Path, procs: Callable[..., Procs]
) -> None:
    root = tmp_path / "root"
    agent = small_agent(root)
    group = procs(root)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO, env=group.env, check=True
    )
    port = free_port()
    web = group.start("web", "run", "--no-worker", "--no-watch", "--port", str(port))
    watchers = {p.pid: p for p in (group.start(f"watch{i}", "watch") for i in range(3))}
    logs = [p.log for p in watchers.values()] + [web.log]  # type: ignore[attr-defined]
    until("the first rows", lambda: rows_of(port, "small") == 5, 60, *logs)
    first = until("an elected watcher", lambda: holder(watchers, group), 30, *logs)
    time.sleep(2)  # every other watcher has asked for the lock by now
    watching = [p for p in watchers.values() if "watching " in p.log.read_text()]  # type: ignore[attr-defined]
    assert [p.pid for p in watching] == [first], "exactly one process watches"

    append_rows(agent, "before", 3)
    until("appends indexed by the elected watcher", lambda: rows_of(port, "small") == 8, 30, *logs)

    watchers[first].send_signal(signal.SIGKILL)
    watchers[first].wait()
    killed_at = time.monotonic()
    append_rows(agent, "after", 4)
    second = until("a new watcher", lambda: holder(watchers, group) not in (0, first), 30, *logs)
    until("appends indexed by the new watcher", lambda: rows_of(port, "small") == 12, 30, *logs)
    took_over = time.monotonic() - killed_at
    assert second != first
    assert took_over < 15, f"the appends waited {took_over:.1f} s for a new watcher"
    print(f"a new watcher indexed the appends {took_over:.1f} s after kill -9")


def test_a_killed_run_leaves_no_watcher_behind(
    tmp_path: Path, procs: Callable[..., Procs], redis_url: str
) -> None:
    """With Redis the watcher is a child process of `run`; kill -9 of `run` must end it."""
    root = tmp_path / "root"
    small_agent(root)
    group = procs(root, REDIS_URL=redis_url)
    port = free_port()
    web = group.start("run", "run", "--no-worker", "--port", str(port))
    until("the first rows", lambda: rows_of(port, "small") == 5, 60, web.log)  # type: ignore[attr-defined]
    children = [
        int(pid)
        for pid in Path(f"/proc/{web.pid}/task/{web.pid}/children").read_text().split()
    ]
    assert children, "run started no watcher process"
    web.send_signal(signal.SIGKILL)
    web.wait()

    def gone() -> bool:
        return not any(Path(f"/proc/{pid}").exists() for pid in children)

    until("the watcher to end with its run", gone, 10, web.log)  # type: ignore[attr-defined]


def test_two_runs_started_together_on_an_empty_database_both_serve(
    tmp_path: Path, procs: Callable[..., Procs]
) -> None:
    root = tmp_path / "root"
    small_agent(root)
    group = procs(root)
    ports = [free_port(), free_port()]
    runs = [
        group.start(f"run{i}", "run", "--no-worker", "--port", str(port))
        for i, port in enumerate(ports)
    ]
    logs = [r.log for r in runs]  # type: ignore[attr-defined]
    for port in ports:

        def serving(p: int = port) -> bool:
            return rows_of(p, "small") == 5

        until(f"run on {port} serving the agent", serving, 90, *logs)
    assert all(r.poll() is None for r in runs), [log.read_text() for log in logs]
