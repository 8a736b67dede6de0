"""Issue 20, item 1: an ingest job of 20,000 rows finishes on every path a user takes.

On PostgreSQL, from about 10,000 rows, the progress report UPDATEd the job row on the ingest's
own connection while its row COPY was open: the process waited on itself for good (`manage.py
ingest`, `run`'s first ingest, a worker's job, an upload), and the job row stayed locked by the
ingest's transaction (recovery and Retry froze on it). Each path here runs under a time limit,
so a regression fails instead of hanging the suite. Also: a job whose progress stops is failed
by the watchdog, and Retry runs it again. Run on SQLite and in CI's PostgreSQL pass.
"""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, connections
from django.test import Client

from intake.jobs import ingest_start, job_retry, jobs_recover
from intake.management.commands.run import celery_worker_command
from memviz.celery import app
from sessions.job_board import job_live
from sessions.models import Agent, IngestJob
from tests.debug.memory_factory import write_agent, write_big_agent
from tests.sessions.test_celery_worker import database_url

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
ROWS = 20_000  # 8 sessions of 2,500 rows; 4 x 2,500 froze on PostgreSQL
LIMIT_S = 60  # a path that has not finished by then hangs


@pytest.fixture(scope="module")
def big_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root of one agent: 8 offload JSONLs x 2,500 rows, some refs, a small canvas."""
    root = tmp_path_factory.mktemp("big") / "root"
    write_big_agent(root, "big", ROWS)  # a few refs: the rows are what froze
    return root


def child_env(**extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url(),
        "MEMVIZ_VAR_DIR": str(settings.VAR_DIR),
        **extra,
    }


def stop(child: subprocess.Popen) -> None:
    child.terminate()
    try:
        child.wait(timeout=15)
    except subprocess.TimeoutExpired:
        child.kill()
    unstick()


def unstick() -> None:
    """End every other session on the test database (a frozen ingest holds locks the
    teardown's flush would wait for)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )


def within(seconds: float, call: Callable[[], Any], what: str) -> Any:
    """``call()`` in a thread; a failure (not a hang) if it has not returned in ``seconds``."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            outcome["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        unstick()
        pytest.fail(f"{what} hung for {seconds} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def recover_then_retry(job: IngestJob) -> bool:
    """What every worker's recovery thread runs, then the Retry button: the button's answer."""
    jobs_recover()
    return job_retry(job)


def assert_indexed(job_id: int) -> None:
    job = IngestJob.objects.get(pk=job_id)
    assert job.status == IngestJob.DONE, (job.status, job.message)
    assert job.percent == 100 and job.report["rows_added"] == ROWS
    assert Agent.objects.get().rows_count == ROWS


def test_ingest_command_finishes_a_20k_row_agent(big_root: Path) -> None:
    """`manage.py ingest` (and `run`'s first ingest, which calls it): the task run eagerly."""
    try:
        done = subprocess.run(
            [sys.executable, "manage.py", "ingest", str(big_root)],
            cwd=REPO,
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=LIMIT_S,
        )
    except subprocess.TimeoutExpired:
        unstick()
        pytest.fail(f"manage.py ingest hung for {LIMIT_S} s")
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{ROWS} rows added" in done.stdout
    assert_indexed(IngestJob.objects.get().pk)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_run_serves_and_finishes_its_first_ingest_of_a_20k_row_agent(big_root: Path) -> None:
    """`manage.py run` ingests the data root as a job in the background (it froze for good when
    it ran the `ingest` command before listening)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "run", "--no-worker", "--no-watch", "--port", str(port)],
        cwd=REPO,
        env=child_env(MEMVIZ_DATA_ROOT=str(big_root)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + LIMIT_S
        while True:
            assert server.poll() is None, server.stderr.read()[-2000:] if server.stderr else ""
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/?format=json", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"manage.py run did not serve within {LIMIT_S} s")
                time.sleep(0.3)
        while not IngestJob.objects.filter(status__in=("done", "failed")).exists():
            assert server.poll() is None, server.stderr.read()[-2000:] if server.stderr else ""
            if time.monotonic() > deadline:
                pytest.fail(f"manage.py run's first ingest did not end within {LIMIT_S} s")
            time.sleep(0.3)
    finally:
        stop(server)
    assert_indexed(IngestJob.objects.get().pk)


@pytest.fixture
def worker() -> Iterator[subprocess.Popen]:
    """The Celery worker `manage.py run` starts, sharing this test's database."""
    app.conf.task_always_eager = False
    proc = subprocess.Popen(
        [*celery_worker_command(), "--without-heartbeat", "--without-gossip", "--without-mingle"],
        cwd=REPO,
        env=child_env(MEMVIZ_JOB_HEARTBEAT_SECONDS="0.3"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    yield proc
    stop(proc)
    app.conf.task_always_eager = True


def test_worker_job_of_a_20k_row_agent_beats_and_never_blocks_recovery(
    worker: subprocess.Popen, big_root: Path, settings
) -> None:
    """The re-ingest button's job in a real worker: progress moves, the heartbeat keeps beating,
    and the recovery pass and Retry answer at once while the ingest runs."""
    settings.MEMVIZ_DATA_ROOT = big_root
    client = Client()
    client.force_login(User.objects.create_user("ana"))
    response = client.post("/ingest/?format=json")
    assert response.status_code == 202, response.content[:500]
    job_id = response.json()["id"]
    deadline = time.monotonic() + LIMIT_S
    seen: set[int] = set()
    beats: set[Any] = set()
    slowest = 0.0
    running_since: float | None = None
    # job_live: what the pages show (on SQLite the beat's progress file, newer than the row)
    while (job := job_live(IngestJob.objects.get(pk=job_id))).status not in {"done", "failed"}:
        assert worker.poll() is None, "the worker died"
        if time.monotonic() > deadline:
            pytest.fail(f"the worker's job hung for {LIMIT_S} s at {job.done}/{job.total}")
        if job.status == IngestJob.RUNNING:
            running_since = running_since or time.monotonic()
            seen.add(job.done)
            beats.add(job.heartbeat_at)
            started = time.monotonic()
            # what every worker's recovery thread runs, and the Retry button
            retried = within(10, partial(recover_then_retry, job), "retry")
            assert retried is False  # a running, beating job is not retried
            slowest = max(slowest, time.monotonic() - started)
        time.sleep(0.2)
    assert_indexed(job_id)
    assert slowest < 2.0, f"recovery or retry waited {slowest:.1f} s on the job row"
    ran = time.monotonic() - (running_since or time.monotonic())
    print(f"the job ran {ran:.2f} s after it was first seen running; beats {len(beats)}")
    if ran > 1.5:  # five heartbeats (0.3 s): a job that long must show more than one
        assert len(beats) >= 2, "the heartbeat did not move while the job ran"
        assert len(seen) >= 2, "the progress shown did not move while the job ran"


def test_upload_of_a_20k_row_agent_is_ingested(big_root: Path, tmp_path: Path, settings) -> None:
    """An upload, its task run eagerly in the request (as with MEMVIZ_CELERY_EAGER)."""
    settings.MEMVIZ_UPLOAD_ROOT = tmp_path / "uploads"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(big_root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(big_root).as_posix())
    User.objects.create_user("ana", password="pw-123456")

    def upload() -> int:
        client = Client()
        client.login(username="ana", password="pw-123456")
        archive = SimpleUploadedFile("big.zip", buffer.getvalue(), content_type="application/zip")
        response = client.post("/upload/?format=json", {"archive": archive})
        assert response.status_code == 202, response.content[:500]
        return response.json()["id"]

    assert_indexed(within(LIMIT_S, upload, "the upload's ingest"))


def test_a_job_whose_progress_stops_is_failed_and_retry_runs_it(
    big_root: Path, tmp_path: Path, settings
) -> None:
    """The watchdog: a job held before its first progress report (the test-only hold file) is
    failed after MEMVIZ_JOB_STALL_SECONDS with a clear message, instead of running on."""
    settings.MEMVIZ_JOB_STALL_SECONDS = 1.0
    hold = tmp_path / "hold"
    hold.touch()
    os.environ["MEMVIZ_TEST_HOLD_FILE"] = str(hold)
    try:
        threading.Timer(3.0, hold.unlink).start()
        with pytest.raises(Exception, match="no progress for"):
            within(LIMIT_S, lambda: ingest_start(big_root), "the stalled job")
    finally:
        del os.environ["MEMVIZ_TEST_HOLD_FILE"]
    job = IngestJob.objects.get()
    assert job.status == IngestJob.FAILED and re.match(r"no progress for \d+ s", job.message)
    assert not Agent.objects.exists()  # stopped before it indexed anything
    settings.MEMVIZ_JOB_STALL_SECONDS = 300
    user = User.objects.create_user("ana", password="pw-123456")
    client = Client()
    client.force_login(user)
    retried = within(
        LIMIT_S, lambda: client.post(f"/jobs/{job.pk}/retry/?format=json"), "the retried job"
    )
    assert retried.status_code == 202, retried.content[:500]
    assert_indexed(job.pk)


def test_recovery_and_retry_give_up_on_a_locked_job_row_at_once(tmp_path: Path) -> None:
    """Whatever holds a job row (the old ingest held it for a whole agent), the recovery pass
    and the Retry button answer within seconds and leave the row for the next pass."""
    from datetime import timedelta

    from django.db import transaction
    from django.utils import timezone

    silent = timezone.now() - timedelta(hours=1)
    stuck = IngestJob.objects.create(
        path=str(tmp_path), status=IngestJob.RUNNING, heartbeat_at=silent, worker="gone:1"
    )
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        with transaction.atomic():  # SQLite: the database's write lock; PostgreSQL: the row's
            IngestJob.objects.select_for_update().filter(pk=stuck.pk).update(message="busy")
            locked.set()
            release.wait(20)

    holder = threading.Thread(target=lambda: within(30, hold, "the lock holder"))
    holder.start()
    try:
        assert locked.wait(10)
        started = time.monotonic()
        assert jobs_recover() == []
        assert job_retry(stuck) is False
        waited = time.monotonic() - started
    finally:
        release.set()
        holder.join()
    assert waited < 5, f"recovery and retry waited {waited:.1f} s on a locked job row"
    assert jobs_recover() == [stuck.pk]  # the next pass, once the row is free, recovers it


def test_a_job_waiting_on_a_lock_forever_is_failed_and_its_wait_cancelled(
    tmp_path: Path, settings
) -> None:
    """PostgreSQL: an ingest stuck waiting for its agent's lock (held by a process that never
    lets go) is failed by the watchdog, which also cancels the wait, so the ingest ends."""
    from django.db import transaction

    if connection.vendor != "postgresql":
        pytest.skip("SQLite's wait for its write lock ends by its own busy timeout")
    root = tmp_path / "root"
    write_agent(root, "small", {"s1": [{"minutes": 1, "tool": "exec:ls"}]}, {})
    within(LIMIT_S, lambda: ingest_start(root), "the first ingest")
    agent = Agent.objects.get()
    settings.MEMVIZ_JOB_STALL_SECONDS = 1.0
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        with transaction.atomic():
            Agent.objects.select_for_update().get(pk=agent.pk)
            locked.set()
            release.wait(30)

    holder = threading.Thread(target=lambda: within(40, hold, "the lock holder"))
    holder.start()
    try:
        assert locked.wait(10)
        started = time.monotonic()
        with pytest.raises(Exception, match="cancel"):
            within(15, lambda: ingest_start(root), "the ingest waiting on the lock")
        waited = time.monotonic() - started
    finally:
        release.set()
        holder.join()
    job = IngestJob.objects.latest("pk")
    assert job.status == IngestJob.FAILED and re.match(r"no progress for \d+ s", job.message)
    assert waited < 10
