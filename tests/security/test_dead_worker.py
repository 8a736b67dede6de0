"""Item 7 of issue 10: background work survives a dead worker.

A real Celery worker is killed with SIGKILL in the middle of an ingest (held there by the test-only
MEMVIZ_TEST_HOLD_FILE). The filesystem broker has already dropped the message and Redis would
only redeliver it after an hour, so memviz recovers it: the next worker re-queues the job whose
worker is gone, it finishes, and uploads queued meanwhile run too. `manage.py run` restarts a
worker that dies. Runs on the filesystem broker here and on Redis in the PostgreSQL+Redis pass.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.utils import timezone

from intake.jobs import ingest_start, jobs_recover
from intake.management.commands.run import celery_worker_command
from memviz.celery import app
from sessions.models import Agent, IngestJob

REPO = Path(__file__).resolve().parents[2]
FAST_RECOVERY = {"MEMVIZ_JOB_HEARTBEAT_SECONDS": "0.3", "MEMVIZ_JOB_STALE_SECONDS": "3"}


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def job(pk: int) -> IngestJob:
    return IngestJob.objects.get(pk=pk)


@pytest.fixture
def workers(tmp_path: Path) -> Iterator:
    """``start()`` launches the worker `manage.py run` starts, sharing this test's database."""
    app.conf.task_always_eager = False
    hold = tmp_path / "hold"
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "MEMVIZ_VAR_DIR": str(settings.VAR_DIR),
        "MEMVIZ_TEST_HOLD_FILE": str(hold),
        **FAST_RECOVERY,
    }
    started: list[subprocess.Popen] = []
    logs: list[Path] = []

    def start() -> subprocess.Popen:
        log = tmp_path / f"worker{len(started) + 1}.log"
        proc = subprocess.Popen(
            [
                *celery_worker_command(),
                "--without-heartbeat",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=REPO,
            env=env,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
        )
        started.append(proc)
        logs.append(log)
        return proc

    def log_tails() -> str:
        """The workers' output, for a failure's message."""
        return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}" for log in logs)

    start.hold = hold  # type: ignore[attr-defined]
    start.log_tails = log_tails  # type: ignore[attr-defined]
    yield start
    for proc in started:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
    app.conf.task_always_eager = True


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_job_killed_mid_ingest_is_redone_and_queued_uploads_run(
    workers,
    wait_for,
    fixtures_root: Path,
) -> None:
    workers.hold.touch()
    first = workers()
    interrupted = ingest_start(fixtures_root / "fixture-a-upstream").pk
    wait_for(lambda: job(interrupted).status == IngestJob.RUNNING, what="the worker claims it")
    assert job(interrupted).worker.endswith(f":{first.pid}")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    # a new upload arrives while no worker runs
    queued = ingest_start(fixtures_root / "fixture-b-wild").pk
    assert job(interrupted).status == IngestJob.RUNNING and job(queued).status == IngestJob.PENDING
    workers.hold.unlink()
    second = workers()
    try:
        # a worker's start-up and the stale-job recovery take seconds each on a busy machine
        wait_for(
            lambda: job(interrupted).status == IngestJob.DONE and job(queued).status == IngestJob.DONE,
            timeout=120,
            what="both jobs done after the restart",
        )
    except AssertionError as failed:
        states = [(j.pk, j.status, j.attempts, j.worker, j.message[:200]) for j in IngestJob.objects.all()]
        raise AssertionError(f"{failed}\njobs: {states}\n{workers.log_tails()}") from None
    redone = job(interrupted)
    assert redone.attempts == 2 and redone.worker.endswith(f":{second.pid}")
    assert redone.report["rows_added"] == 9  # ingest is idempotent: nothing was indexed twice
    assert Agent.objects.get(name="main").rows_count == 9
    assert Agent.objects.get(name="coder").rows_count == 8


@pytest.mark.django_db
def test_a_silent_job_is_failed_after_its_attempts_and_can_be_retried(
    job_out_of_attempts: IngestJob, django_user_model, settings, django_capture_on_commit_callbacks
) -> None:
    stuck = job_out_of_attempts
    client = Client()
    shown = client.get(f"/jobs/{stuck.pk}/?format=json").json()["job"]
    assert shown["stale"] is True
    jobs_recover()
    stuck.refresh_from_db()
    assert stuck.status == IngestJob.FAILED and "interrupted" in stuck.message
    client.force_login(django_user_model.objects.create_user("ana"))
    page = client.get(f"/jobs/{stuck.pk}/").content.decode()
    assert f'action="/jobs/{stuck.pk}/retry/"' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/jobs/{stuck.pk}/retry/?format=json")
    assert response.status_code == 202
    stuck.refresh_from_db()
    assert stuck.status == IngestJob.DONE and stuck.attempts == 1  # eager Celery in tests


@pytest.mark.django_db
def test_a_lost_message_of_a_pending_job_is_sent_again(
    fixtures_root: Path, settings, django_capture_on_commit_callbacks
) -> None:
    """A worker that died after taking a message but before claiming its job lost the message."""
    orphan = IngestJob.objects.create(path=str(fixtures_root / "fixture-a-upstream"))
    IngestJob.objects.filter(pk=orphan.pk).update(
        created_at=timezone.now() - timedelta(seconds=settings.MEMVIZ_JOB_STALE_SECONDS + 5)
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_recover() == [orphan.pk]
    orphan.refresh_from_db()
    assert orphan.status == IngestJob.DONE


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def celery_child(pid: int) -> int | None:
    for child in children_of(pid):
        try:
            command = (Path("/proc") / str(child) / "cmdline").read_bytes()
        except OSError:
            continue
        if b"celery" in command and b"worker" in command:
            return child
    return None


@pytest.mark.slow
def test_run_restarts_a_worker_killed_with_sigkill(live_helpers, wait_for, tmp_path: Path) -> None:
    import json
    import urllib.request

    root = tmp_path / "root"
    root.mkdir()
    env = live_helpers.server_env(tmp_path / "var", root, **FAST_RECOVERY)
    port = live_helpers.free_port()
    server = live_helpers.Server(
        env, port, tmp_path / "run.log", ["run", "--no-watch", "--port", str(port)]
    )
    try:
        live_helpers.wait_port(port, timeout=60, proc=server.proc)
        first = wait_for(lambda: celery_child(server.proc.pid), what="the worker starts")
        os.kill(first, signal.SIGKILL)
        second = wait_for(
            lambda: (pid := celery_child(server.proc.pid)) not in (None, first) and pid,
            timeout=30,
            what="a new worker",
        )
        assert "exited with -9; restarting" in server.log.read_text()
        # the new worker takes work: an ingest queued now finishes
        queue = (
            "from pathlib import Path; from intake.jobs import ingest_start; "
            f"print(ingest_start(Path({str(root)!r})).pk)"
        )
        out = live_helpers.run_manage(env, "shell", "-c", queue).stdout.strip().splitlines()
        job_id = int(out[-1])

        def status() -> str:
            url = f"{server.url}/jobs/{job_id}/?format=json"
            with urllib.request.urlopen(url, timeout=10) as response:
                return json.loads(response.read())["job"]["status"]

        wait_for(lambda: status() == "done", what="the queued job runs in the new worker")
        assert celery_child(server.proc.pid) == second
    finally:
        server.stop()
