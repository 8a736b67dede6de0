"""Ingest through the job path on PostgreSQL, against the benchmark's own ingest of the same data.

    python bench/bench_job_path.py [--quick] [--rows 1000000]

Issue 20: an ingest on PostgreSQL once waited on itself (its progress updated the job row on the
connection holding the bulk COPY) and froze for good from ~10,000 rows. Users meet ingest through
a job (`manage.py ingest`, `run`'s first pass, a worker's task, an upload), not through
`ingest_path`, which `bench_scale.py` times. This benchmark generates one agent of ``--rows`` rows
(8 sessions, a ref every 500 rows: `tests/debug/memory_factory.write_big_agent`), then, each on a
fresh database of the same server:

- the floor: reading every offload file and `json.loads` of every row, in this process;
- `ingest_path(root)` in a child process (what bench_scale reports as "ingest");
- `manage.py ingest ROOT` (an IngestJob, the Celery task run in-process with its progress bar and
  heartbeats);
- `manage.py run` on the data root, with Redis (its own redis-server): the server listens at once
  and the watcher process's first pass ingests the root as a job;
- an upload: the same agent zipped and uploaded through `/upload/` of a `run` whose data root is
  empty (signed in, CSRF), unpacked by the web process and ingested by the Celery worker `run`
  started, over Redis;

while this process reads the newest job row every 0.5 s on its own connection.

Printed per path: the job's time (from its row: created to finished; start-up apart) as a ratio of
`ingest_path` (target ≤ 1.25× + 1 s for picking the job up; the upload's job starts once the
archive is unpacked: the time from the POST is printed beside it) and of the floor, the
job's end state and row count, and while it ran the longest its progress stood still (target
≤ 30 s: a frozen ingest shows here, its heartbeat thread beats on regardless) and the longest with
no heartbeat either (target ≤ 10 s); for `run`, how long until it answered its home page (target
≤ 15 s, whatever the size). A path still running after its timeout fails the benchmark.
``--quick`` (CI): 2,000 rows. PostgreSQL: ``MEMVIZ_TEST_POSTGRES_URL`` when set, otherwise a
throw-away cluster (bench_scale.Postgres); each database is made fresh and dropped afterwards.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_scale import Postgres  # noqa: E402
from load import PASSWORD, USER, Browser, free_port, postgres_database, wait_port  # noqa: E402
from targets import MISSED, missed  # noqa: E402

JOB_OVER_INGEST = 1.25  # the job path's time as a ratio of ingest_path's on the same data
JOB_FIXED_S = 1.0  # plus a fixed allowance: a worker picking the job up, an archive's set-up
LONGEST_STILL_S = 10.0  # the longest the running job's row may show no progress and no heartbeat
PROGRESS_STILL_S = 30.0  # the longest its progress may stand still (the final commit included)
SERVING_S = 15.0  # `run` answers pages this soon after it starts, however large its first ingest


def _env(database_url: str, var: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        DATABASE_URL=database_url,
        MEMVIZ_VAR_DIR=str(var),
        MEMVIZ_LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="memviz.settings",
    )
    return env


def _manage(env: dict[str, str], *args: str, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    """`manage.py …`; a run past `timeout` (a frozen ingest) fails the benchmark, never hangs it."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)}: {done.stderr[-2000:]}")
    return done


def floor_seconds(agent: Path) -> float:
    started = time.perf_counter()
    for path in sorted(agent.glob("offload-*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                json.loads(line)
    return time.perf_counter() - started


def ingest_path_seconds(env: dict[str, str], root: Path) -> float:
    code = (
        "import time; from pathlib import Path; from intake.ingest import ingest_path; "
        "t = time.perf_counter(); "
        f"ingest_path(Path({str(root)!r})); print(time.perf_counter() - t)"
    )
    return float(_manage(env, "shell", "-c", code).stdout.strip().splitlines()[-1])


class JobWatch(threading.Thread):
    """Reads the newest IngestJob row every 0.5 s on its own connection while it runs: the
    longest time its progress (`done`) stood still, and the longest with no heartbeat either
    (the heartbeat thread beats every 2 s whatever the ingest does, so only `done` shows a
    frozen ingest)."""

    def __init__(self, database_url: str) -> None:
        super().__init__(daemon=True)
        self.url = database_url
        self.stop = threading.Event()
        self.progress_still = 0.0
        self.beat_still = 0.0
        self.updates = 0

    def run(self) -> None:
        import psycopg

        last: tuple | None = None
        progressed = beat = time.monotonic()
        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self.stop.wait(0.5):
                try:
                    row = conn.execute(
                        "SELECT status, done, heartbeat_at FROM agent_sessions_ingestjob "
                        "ORDER BY id DESC LIMIT 1"
                    ).fetchone()
                except psycopg.Error:
                    continue
                now = time.monotonic()
                if row is None or row[0] != "running":
                    progressed = beat = now
                    last = row
                    continue
                if last is None or row[1] != last[1]:
                    progressed = now
                if last is None or row != last:
                    self.updates += 1
                    beat = now
                last = row
                self.progress_still = max(self.progress_still, now - progressed)
                self.beat_still = max(self.beat_still, now - beat)


def job_row(database_url: str, job_id: int | None = None) -> tuple | None:
    """(id, status, done, seconds created → finished or None) of a job, or of the newest one."""
    import psycopg

    query = (
        "SELECT id, status, done, EXTRACT(EPOCH FROM finished_at - created_at) "
        "FROM agent_sessions_ingestjob "
    )
    with psycopg.connect(database_url, autocommit=True) as conn:
        if job_id is None:
            return conn.execute(query + "ORDER BY id DESC LIMIT 1").fetchone()
        return conn.execute(query + "WHERE id = %s", [job_id]).fetchone()


def rows_indexed(database_url: str) -> int:
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        count = conn.execute("SELECT count(*) FROM agent_sessions_row").fetchone()
    assert count is not None
    return int(count[0])


def figures(watch: JobWatch, job: tuple | None, seconds: float, rows: int) -> dict:
    """One path's figures from its job row (a job never finished is reported as incomplete)."""
    if job is None:
        job = (0, "never created", 0, None)
    _, status, done, job_seconds = job
    if job_seconds is None:
        job_seconds, status = seconds, f"{status} (not finished)"
    return {
        "seconds": float(job_seconds),  # the job's own time, created to finished
        "process": seconds,  # with the start-up
        "status": status,
        "done": done,
        "rows": rows,
        "updates": watch.updates,
        "progress_still": watch.progress_still,
        "beat_still": watch.beat_still,
    }


def job_path(env: dict[str, str], root: Path, database_url: str, timeout: float) -> dict:
    watch = JobWatch(database_url)
    watch.start()
    started = time.perf_counter()
    try:
        _manage(env, "ingest", str(root), timeout=timeout)
    finally:
        watch.stop.set()
    seconds = time.perf_counter() - started
    watch.join(5)
    return figures(watch, job_row(database_url), seconds, rows_indexed(database_url))


def wait_over(database_url: str, timeout: float, job_id: int | None = None) -> tuple | None:
    """The job (or the newest) once it is done or failed; raises TimeoutExpired past `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = job_row(database_url, job_id)
        if row is not None and row[1] in ("done", "failed"):
            return row
        time.sleep(0.25)
    raise subprocess.TimeoutExpired(["wait", "job", str(job_id or "newest")], timeout)


def zipped(agent: Path, name: str, into: Path) -> Path:
    """The agent folder as a user uploads it: a zip holding `name/…`."""
    archive = into / f"{name}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as out:
        for path in sorted(agent.rglob("*")):
            if path.is_file():
                out.write(path, f"{name}/{path.relative_to(agent).as_posix()}")
    return archive


def post_upload(browser: Browser, archive: Path) -> int:
    answer = browser.upload(archive.read_bytes(), archive.name)
    if answer.status != 202:
        raise RuntimeError(f"upload answered {answer.status}: {answer.body[:300]!r}")
    return int(answer.json()["id"])


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    if shutil.which("redis-server") is None:
        raise RuntimeError("no redis-server: `make test` installs it (README)")
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_port(port, proc, timeout=30)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def served(env: dict[str, str], data_root: Path, log: Path, timeout: float) -> Iterator[tuple[Browser, float]]:
    """`manage.py run` on a fresh database with a user; yields its browser and how long it took
    to answer its home page. Stopped (its whole process group) at the end."""
    env = {**env, "MEMVIZ_DATA_ROOT": str(data_root)}
    _manage(env, "migrate", "--verbosity", "0")
    create = f"from django.contrib.auth.models import User; User.objects.create_user({USER!r}, password={PASSWORD!r})"
    _manage(env, "shell", "-c", create)
    port = free_port()
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "run", "--port", str(port)], cwd=REPO, env=env,
        stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        browser = Browser(f"http://127.0.0.1:{port}")
        serving = float("inf")
        while time.perf_counter() - started < timeout and server.poll() is None:
            if browser.get("/?format=json").status == 200:
                serving = time.perf_counter() - started
                break
            time.sleep(0.1)
        yield browser, serving
    except BaseException:
        print(log.read_text(errors="replace")[-3000:])
        raise
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def run_path(env: dict[str, str], root: Path, database_url: str, timeout: float, log: Path) -> tuple[dict, float]:
    """`manage.py run` on the data root: it serves at once; its watcher's first pass is a job."""
    watch = JobWatch(database_url)
    watch.start()
    started = time.perf_counter()
    try:
        with served(env, root, log, timeout) as (_, serving):
            first = wait_over(database_url, timeout)
    finally:
        watch.stop.set()
    seconds = time.perf_counter() - started
    watch.join(5)
    return figures(watch, first, seconds, rows_indexed(database_url)), serving


def upload_path(env: dict[str, str], agent: Path, database_url: str, timeout: float, work: Path) -> dict:
    """The agent zipped, uploaded through `run` (a data root with no agent) and ingested by the
    Celery worker `run` started. A small upload first, so the big one meets a worker that is up,
    as in a deployment that is running (its start-up is not the ingest's)."""
    from tests.debug.memory_factory import write_big_agent

    archive = zipped(agent, agent.name, work)
    warm = zipped(write_big_agent(work / "warm-up", "warm", 8), "warm", work)
    empty = work / "empty-root"
    empty.mkdir()
    with served(env, empty, work / "upload.log", timeout) as (browser, _):
        browser.login()
        wait_over(database_url, timeout, post_upload(browser, warm))
        before = rows_indexed(database_url)
        watch = JobWatch(database_url)
        watch.start()
        started = time.perf_counter()
        try:
            uploaded = wait_over(database_url, timeout, post_upload(browser, archive))
        finally:
            watch.stop.set()
        seconds = time.perf_counter() - started
        watch.join(5)
    return figures(watch, uploaded, seconds, rows_indexed(database_url) - before)


def report(name: str, job: dict, direct: float, floor: float, rows: int, note: str) -> bool:
    """Print one path's lines; True when its job finished with every row."""
    ratio = job["seconds"] / direct
    in_time = job["seconds"] <= JOB_OVER_INGEST * direct + JOB_FIXED_S
    complete = job["status"] == "done" and job["rows"] == rows
    still_ok = job["progress_still"] <= PROGRESS_STILL_S and job["beat_still"] <= LONGEST_STILL_S
    print(
        f"  {name:<38}{job['seconds']:8.2f} s   {job['seconds'] / floor:6.1f}x floor"
        f"   ({job['process']:.2f} s {note})"
        f"   {ratio:.2f}x ingest_path (target <= {JOB_OVER_INGEST}x + {JOB_FIXED_S:.0f} s){missed(in_time)}"
    )
    print(
        f"    job {job['status']}, {job['rows']:,} rows indexed, {job['updates']} changes of the job row seen; "
        f"running, longest with no progress {job['progress_still']:.1f} s (target <= {PROGRESS_STILL_S:.0f} s), "
        f"with no heartbeat either {job['beat_still']:.1f} s (target <= {LONGEST_STILL_S:.0f} s)"
        f"{missed(complete and still_ok)}"
    )
    return complete


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="2,000 rows (CI)")
    parser.add_argument("--rows", type=int, default=0)
    args = parser.parse_args()
    rows = args.rows or (2_000 if args.quick else 1_000_000)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memviz.settings")
    from tests.debug.memory_factory import write_big_agent

    work = Path(tempfile.mkdtemp(prefix="memviz-jobpath-"))
    pg = Postgres(work)
    # a path may take this long before the benchmark calls the ingest frozen
    timeout = 120.0 if args.quick else max(600.0, rows / 2_000)
    try:
        started = time.perf_counter()
        agent = write_big_agent(work / "root", "big", rows)
        print(f"== {rows:,} rows in 8 sessions, a ref every 500 rows (generated in {time.perf_counter() - started:.1f} s)")
        floor = floor_seconds(agent)
        with (
            postgres_database(pg.base) as url_a,
            postgres_database(pg.base) as url_b,
            postgres_database(pg.base) as url_c,
            postgres_database(pg.base) as url_d,
            redis_server() as redis_url,
        ):
            env_a, env_b = _env(url_a, work / "var-a"), _env(url_b, work / "var-b")
            for env in (env_a, env_b):
                _manage(env, "migrate", "--verbosity", "0")
            direct = ingest_path_seconds(env_a, work / "root")
            job = job_path(env_b, work / "root", url_b, timeout)
            # `run` as the README's Scale-out section starts it: Redis, its watcher process and
            # its Celery worker (over Redis) beside the server.
            env_c = {**_env(url_c, work / "var-c"), "REDIS_URL": redis_url}
            run, serving = run_path(env_c, work / "root", url_c, timeout, work / "run.log")
            env_d = {**_env(url_d, work / "var-d"), "REDIS_URL": redis_url.replace("/0", "/1")}
            upload = upload_path(env_d, agent, url_d, timeout, work)
        print(f"  floor (read + json.loads every row)   {floor:8.2f} s")
        print(f"  ingest_path (bench_scale's figure)    {direct:8.2f} s   {direct / floor:6.1f}x floor")
        complete = [
            report("manage.py ingest (a job, in-process)", job, direct, floor, rows, "with the command's start-up"),
            report("manage.py run, its first pass", run, direct, floor, rows, "from the command's start"),
            report("upload, by run's Celery worker", upload, direct, floor, rows, "from the POST: sent, unpacked, ingested"),
        ]
        print(
            f"  manage.py run answered its home page {serving:.2f} s after it started, while its first pass ran "
            f"(target <= {SERVING_S:.0f} s){missed(serving <= SERVING_S)}"
        )
        return 0 if all(complete) else 1
    except subprocess.TimeoutExpired as frozen:
        print(f"  {' '.join(map(str, frozen.cmd[1:3]))}: not done within {frozen.timeout:.0f} s  {MISSED}")
        return 1
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
