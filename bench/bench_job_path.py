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
  heartbeats), while this process reads the job row every 0.5 s on its own connection.

Printed: both times (the job's from its row: created to finished; the command's start-up apart),
the job path as a ratio of `ingest_path` (target ≤ 1.25×) and of the floor, the job's end state and
row count, and while it ran the longest its progress stood still (target ≤ 30 s: a frozen ingest
shows here, its heartbeat thread beats on regardless) and the longest with no heartbeat either
(target ≤ 10 s). A command still running after its timeout fails the benchmark. ``--quick`` (CI):
2,000 rows. PostgreSQL: ``MEMVIZ_TEST_POSTGRES_URL`` when set, otherwise a throw-away cluster
(bench_scale.Postgres); each database is made fresh and dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_scale import Postgres  # noqa: E402
from load import postgres_database  # noqa: E402
from targets import MISSED, missed  # noqa: E402

JOB_OVER_INGEST = 1.25  # the job path's time as a ratio of ingest_path's on the same data
LONGEST_STILL_S = 10.0  # the longest the running job's row may show no progress and no heartbeat
PROGRESS_STILL_S = 30.0  # the longest its progress may stand still (the final commit included)


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
        "import time; from pathlib import Path; from sessions.ingest import ingest_path; "
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
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        job_row = conn.execute(
            "SELECT status, done, EXTRACT(EPOCH FROM finished_at - created_at) "
            "FROM agent_sessions_ingestjob ORDER BY id DESC LIMIT 1"
        ).fetchone()
        count = conn.execute("SELECT count(*) FROM agent_sessions_row").fetchone()
    assert job_row is not None and count is not None
    status, done, job_seconds = job_row
    (rows,) = count
    if job_seconds is None:  # never finished: reported as incomplete below
        job_seconds, status = seconds, f"{status} (not finished)"
    return {
        "seconds": float(job_seconds),  # the job's own time, created to finished
        "process": seconds,  # with the command's start-up
        "status": status,
        "done": done,
        "rows": rows,
        "updates": watch.updates,
        "progress_still": watch.progress_still,
        "beat_still": watch.beat_still,
    }


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
    # the command may take this long before the benchmark calls the ingest frozen
    timeout = 120.0 if args.quick else max(600.0, rows / 2_000)
    try:
        started = time.perf_counter()
        agent = write_big_agent(work / "root", "big", rows)
        print(f"== {rows:,} rows in 8 sessions, a ref every 500 rows (generated in {time.perf_counter() - started:.1f} s)")
        floor = floor_seconds(agent)
        with postgres_database(pg.base) as url_a, postgres_database(pg.base) as url_b:
            env_a, env_b = _env(url_a, work / "var-a"), _env(url_b, work / "var-b")
            for env in (env_a, env_b):
                _manage(env, "migrate", "--verbosity", "0")
            direct = ingest_path_seconds(env_a, work / "root")
            job = job_path(env_b, work / "root", url_b, timeout)
        ratio = job["seconds"] / direct
        complete = job["status"] == "done" and job["rows"] == rows
        still_ok = job["progress_still"] <= PROGRESS_STILL_S and job["beat_still"] <= LONGEST_STILL_S
        print(f"  floor (read + json.loads every row)   {floor:8.2f} s")
        print(f"  ingest_path (bench_scale's figure)    {direct:8.2f} s   {direct / floor:6.1f}x floor")
        print(
            f"  manage.py ingest (the job path)       {job['seconds']:8.2f} s   {job['seconds'] / floor:6.1f}x floor"
            f"   ({job['process']:.2f} s with the command's start-up)"
            f"   {ratio:.2f}x ingest_path (target <= {JOB_OVER_INGEST}x){missed(ratio <= JOB_OVER_INGEST)}"
        )
        print(
            f"  job {job['status']}, {job['rows']:,} rows indexed, {job['updates']} changes of the job row seen; "
            f"running, longest with no progress {job['progress_still']:.1f} s (target <= {PROGRESS_STILL_S:.0f} s), "
            f"with no heartbeat either {job['beat_still']:.1f} s (target <= {LONGEST_STILL_S:.0f} s)"
            f"{missed(complete and still_ok)}"
        )
        return 0 if complete else 1
    except subprocess.TimeoutExpired as frozen:
        print(f"  {' '.join(map(str, frozen.cmd[1:3]))}: not done within {frozen.timeout:.0f} s  {MISSED}")
        return 1
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
