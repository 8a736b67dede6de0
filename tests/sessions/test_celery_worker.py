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

from memviz.celery import app
from sessions.management.commands.run import celery_worker_command

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


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
    job_id = response.json()["id"]
    deadline = time.monotonic() + 90
    job: dict = {}
    while time.monotonic() < deadline:
        job = client.get(f"/jobs/{job_id}/?format=json").json()["job"]
        if job["status"] in {"done", "failed"}:
            break
        assert worker.poll() is None, worker.stdout.read() if worker.stdout else ""
        time.sleep(0.3)
    assert job["status"] == "done", job
    assert job["percent"] == 100
    assert job["report"]["rows_added"] == 9
    agents = client.get("/?format=json").json()["agents"]
    assert [a["slug"] for a in agents] == ["main"]
