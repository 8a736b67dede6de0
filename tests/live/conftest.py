"""Helpers for the live tests: free ports, a real daphne (``manage.py run``) and redis-server."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 30.0, proc: subprocess.Popen | None = None) -> None:
    """Wait until ``port`` listens; for a ``manage.py run``, also until its first ingest (a
    background job since issue 20) has ended, as the tests expect the data root indexed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.1)
    else:
        raise TimeoutError(f"nothing listens on {port}")
    if proc is not None and isinstance(proc.args, (list, tuple)) and "run" in proc.args[2:3]:
        wait_first_ingest(port, deadline)


def wait_first_ingest(port: int, deadline: float, grace: float = 3.0) -> None:
    """Until the home page lists jobs and none is unfinished (or it lists none for ``grace`` s:
    no data root; or it is not readable anonymously)."""
    started = time.monotonic()
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/?format=json", timeout=5) as r:
                jobs = json.load(r).get("jobs", [])
        except (OSError, ValueError):
            return  # not open to anonymous viewers (403) or not JSON: nothing to wait for
        if jobs and all(job["finished"] for job in jobs):
            return
        if not jobs and time.monotonic() - started > grace:
            return
        time.sleep(0.1)


def server_env(var_dir: Path, data_root: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        # the servers keep the product's own pool wait (the suite's own process waits longer)
        if not k.startswith(("DJANGO_", "REDIS_URL", "MEMVIZ_DB_POOL_WAIT"))
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "memviz.settings",
            "MEMVIZ_VAR_DIR": str(var_dir),
            "MEMVIZ_DATA_ROOT": str(data_root),
            "MEMVIZ_UPLOAD_ROOT": str(var_dir / "uploads"),
            "MEMVIZ_PUSH_ROOT": str(var_dir / "pushed"),
            "MEMVIZ_ANONYMOUS_VIEW": "1",
            "MEMVIZ_LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.pop("DATABASE_URL", None)
    env.update(extra)
    return env


def run_manage(env: dict[str, str], *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


class Server:
    def __init__(self, env: dict[str, str], port: int, log: Path, args: list[str]) -> None:
        self.port = port
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", *args],
            cwd=REPO,
            env=env,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def live_root(tmp_path: Path, fixtures_root: Path) -> Path:
    """A data root holding one copy of fixture C's agent ``main`` (for servers in subprocesses)."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.copytree(fixtures_root / "fixture-c-enhanced" / "main", root / "main")
    return root


@pytest.fixture
def run_server(tmp_path: Path) -> Iterator:
    """Start ``manage.py run`` (migrate, ingest, in-process watcher, daphne) on a free port."""
    servers: list[Server] = []

    def start(
        data_root: Path, *, extra_env: dict[str, str] | None = None, watch: bool = True
    ) -> Server:
        var_dir = tmp_path / f"var{len(servers)}"
        var_dir.mkdir()
        env = server_env(var_dir, data_root, **(extra_env or {}))
        port = free_port()
        args = ["run", "--no-worker", "--port", str(port)] + ([] if watch else ["--no-watch"])
        server = Server(env, port, tmp_path / f"server{len(servers)}.log", args)
        server.env = env  # type: ignore[attr-defined]
        servers.append(server)
        try:
            wait_port(port, timeout=60, proc=server.proc)
        except Exception:
            print(server.log.read_text())
            raise
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    url = os.environ.get("MEMVIZ_TEST_REDIS_URL")
    if url:
        yield url
        return
    if os.environ.get("CI"):
        pytest.skip("MEMVIZ_TEST_REDIS_URL is not set (scripts/run_tests.sh starts redis-server)")
    if shutil.which("redis-server") is None:
        pytest.skip("MEMVIZ_TEST_REDIS_URL is unset and no redis-server is installed")
    port = free_port()
    proc = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, proc=proc)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def manage():
    """``manage(env, *args)``: run a management command in a subprocess with that environment."""
    return run_manage
