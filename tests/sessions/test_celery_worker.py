"""Ingest started from the web UI runs in a real Celery worker process (no broker server needed)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from intake.management.commands.run import celery_worker_command
from memviz.celery import app

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def job_over(client: Client, job_id: int, worker: subprocess.Popen) -> dict:
    """The job once done or failed (90 s at most), read as the job page's JSON."""
    deadline = time.monotonic() + 90
    job: dict = {}
    while time.monotonic() < deadline:
        job = client.get(f"/jobs/{job_id}/?format=json").json()["job"]
        if job["status"] in {"done", "failed"}:
            break
        assert worker.poll() is None, worker.stdout.read() if worker.stdout else ""
        time.sleep(0.3)
    return job


@pytest.fixture
def worker():
    app.conf.task_always_eager = False
    env = {**os.environ, "DATABASE_URL": database_url(), "MEMVIZ_VAR_DIR": str(settings.VAR_DIR)}
    proc = subprocess.Popen(
        # the worker `manage.py run` starts, made quieter for a test
        [*celery_worker_command(), "--without-heartbeat", "--without-gossip", "--without-mingle"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    yield proc
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_reingest_button_runs_in_the_worker_and_reports_progress(
    worker,
    fixtures_root: Path,
    settings,
) -> None:
    settings.MEMVIZ_DATA_ROOT = fixtures_root / "fixture-a-upstream"
    client = Client()
    User.objects.create_user("ana", password="pw-123456")
    client.login(username="ana", password="pw-123456")
    response = client.post("/ingest/?format=json")
    assert response.status_code == 202
    job = job_over(client, response.json()["id"], worker)
    assert job["status"] == "done", job
    assert job["percent"] == 100
    assert job["report"]["rows_added"] == 9
    agents = client.get("/?format=json").json()["agents"]
    assert [a["slug"] for a in agents] == ["main"]


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _one_child(proc: subprocess.Popen, other_than: int = 0, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        found = [c for c in _children(proc.pid) if c != other_than]
        if found:
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"no worker child of {proc.pid} within {timeout} s")


def test_make_worker_starts_its_celery_worker_again_when_it_dies(fixtures_root: Path, settings) -> None:
    """`make worker` (manage.py worker): Celery's worker can end for good on a broker outage
    (the deploy guide's trial saw kombu's "Unrecoverable error"); it is started again."""
    app.conf.task_always_eager = False
    env = {**os.environ, "DATABASE_URL": database_url(), "MEMVIZ_VAR_DIR": str(settings.VAR_DIR)}
    proc = subprocess.Popen(
        [str(REPO / ".venv" / "bin" / "python"), "manage.py", "worker", "--name", "kept", "--concurrency", "1"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    second = 0
    try:
        first = _one_child(proc)
        os.kill(first, signal.SIGKILL)  # as an unrecoverable error would end it
        second = _one_child(proc, other_than=first)
        assert second != first
        settings.MEMVIZ_DATA_ROOT = fixtures_root / "fixture-a-upstream"
        User.objects.create_user("ana", password="pw-123456")
        client = Client()
        client.login(username="ana", password="pw-123456")
        job = job_over(client, client.post("/ingest/?format=json").json()["id"], proc)
        assert job["status"] == "done", job
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    deadline = time.monotonic() + 15
    while Path(f"/proc/{second}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not Path(f"/proc/{second}").exists()  # its worker stopped with it, not orphaned
