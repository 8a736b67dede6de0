"""What an explicit re-ingest (`manage.py ingest`) costs as the data grows (issue 20).

    python bench/bench_reingest.py [--quick] [--sizes 10000,300000,1000000] [--db sqlite]
        [--roots DIR] [--samples N] [--job]

Data: ``bench/generate_root.py`` (4 agents, 5 sessions each, one ref per row, a canvas per
1,000 rows), generated once per size into ``--roots`` and reused. Each size runs in a fresh
process and database: a first ingest, then the figures (the best of ``--samples``: the
machine is shared, and load only ever adds time):

* unchanged: nothing changed since the last ingest;
* after the watcher: the watcher indexed rows and refs since (the refs folder moved);
* 1 row + ref: one row and its ref appended, no watcher;
* full pass (``--full``, what runs every MEMVIZ_FULL_CHECK_SECONDS): printed, not flat by design
  (it checksums the grown file and lists the changed refs folder).

Floor, measured at each size in the same process: a stat of every file an ingest checks and one
query per agent (the least an ingest that trusts nothing unseen can do). Target: each of the
first three grows <= 2x from the smallest to the largest size. ``--job`` (full mode, e.g. with
``--db postgres``) also times the first ingest through the job path (the task, its beat).
Default sizes 10k, 300k, 1M; ``--quick`` (CI): 500 and 5,000 rows, SQLite, < 15 s on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_scale import Postgres, root_for, working_copy  # noqa: E402
from targets import FLAT_GROWTH as GROWTH  # noqa: E402
from targets import missed  # noqa: E402

FLAT = ("unchanged", "after the watcher", "1 row + ref")


def _best_ms(fn, samples: int) -> float:
    out = []
    for i in range(samples):
        started = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - started) * 1000)
    return min(out)


def _floor(root: Path) -> float:
    """A stat of every file an ingest checks (session files, canvases, state, registry, refs
    folders) and one query per agent."""
    from django.db import connection

    started = time.perf_counter()
    for agent in sorted(p for p in root.iterdir() if p.is_dir()):
        for folder in (agent, agent / "mmds"):
            for entry in os.scandir(folder):
                entry.stat()  # the refs folder itself, not what it holds
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    return (time.perf_counter() - started) * 1000


def worker(root: Path, samples: int, job: bool) -> dict:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from intake.ingest import ingest_agent_dir, ingest_path

    out: dict = {}
    started = time.perf_counter()
    if job:
        from intake.jobs import job_run_here
        from sessions.models import IngestJob

        ran = job_run_here(root)
        ran.refresh_from_db()
        assert ran.status == IngestJob.DONE, (ran.status, ran.message)
        out["first ingest (job path)"] = (time.perf_counter() - started) * 1000
    else:
        ingest_path(root)
        out["first ingest"] = (time.perf_counter() - started) * 1000
    agent_dir = root / "agent-00"
    session_file = sorted(agent_dir.glob("offload-*.jsonl"))[-1]

    def write_pair(i: int) -> list[Path]:
        ref = agent_dir / "refs" / f"reingest-{i}.md"
        ref.write_text(
            "# Tool Result: exec\n\n**Timestamp:** 2027-01-01T00:00:00+08:00\n\n---\n\n"
            f"**Tool:** exec\n**Call ID:** re_{i}\n\n**Result:**\n```\nok {i}\n```",
            encoding="utf-8",
        )
        row = {
            "tool_call_id": f"re_{i}",
            "tool_call": f"exec: {i}",
            "summary": f"appended {i}",
            "timestamp": "2027-01-01T00:00:00+08:00",
            "score": 5,
            "node_id": "001-N2",
            "result_ref": f"refs/{ref.name}",
        }
        with open(session_file, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")
        return [ref, session_file]

    def unchanged(_i: int) -> None:
        report = ingest_path(root)
        assert report.files_read == 0 and report.refs_indexed == 0, report.as_dict()

    def after_watcher(i: int) -> None:
        ingest_agent_dir(agent_dir, root=root, changed=write_pair(1000 + i))
        started = time.perf_counter()
        unchanged(i)
        timings.append((time.perf_counter() - started) * 1000)

    def appended(i: int) -> None:
        write_pair(2000 + i)
        started = time.perf_counter()
        report = ingest_path(root)
        timings.append((time.perf_counter() - started) * 1000)
        assert report.rows_added == 1 and report.refs_indexed == 1, report.as_dict()

    def full(i: int) -> None:
        write_pair(3000 + i)
        started = time.perf_counter()
        report = ingest_path(root, full=True)
        timings.append((time.perf_counter() - started) * 1000)
        assert report.rows_added == 1 and report.refs_indexed == 1, report.as_dict()

    out["floor"] = _best_ms(lambda _i: _floor(root), samples)
    out["unchanged"] = _best_ms(unchanged, samples)
    timings: list[float] = []
    for name, fn in (
        ("after the watcher", after_watcher),
        ("1 row + ref", appended),
        ("full pass", full),
    ):
        timings.clear()
        for i in range(samples):
            fn(i)
        out[name] = min(timings)
    out["load_avg"] = os.getloadavg()
    return out


def run_one(db: str, rows: int, root: Path, work: Path, pg: Postgres | None, args) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    var = work / f"var-{db}-{rows}"
    shutil.rmtree(var, ignore_errors=True)
    env.update(
        MEMVIZ_VAR_DIR=str(var),
        MEMVIZ_LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="memviz.settings",
    )
    if db == "postgres":
        assert pg is not None
        env["DATABASE_URL"] = pg.database(f"memviz_reingest_{rows}")
    copy = working_copy(root, work)
    command = [sys.executable, __file__, "--worker", str(copy), str(args.samples)]
    done = subprocess.run(
        [*command, *(["--job"] if args.job else [])],
        env=env,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    if done.returncode:
        raise SystemExit(f"{db} {rows:,} rows: the worker failed\n{done.stderr[-4000:]}")
    shutil.rmtree(copy, ignore_errors=True)
    return json.loads(done.stdout.splitlines()[-1])


def summarise(db: str, by_size: dict[int, dict]) -> list[str]:
    sizes = sorted(by_size)
    head = "".join(f"{s:>12,}" for s in sizes)
    lines = [f"\n== {db}: explicit re-ingest by rows, best ms (x floor); growth = last / first"]
    lines.append(f"{'figure':26}{head}   growth  target")
    names = [n for n in by_size[sizes[0]] if n not in ("load_avg",)]
    for name in names:
        values = [by_size[s][name] for s in sizes]
        floors = [by_size[s]["floor"] for s in sizes]
        cells = "".join(f"{v:>12.1f}" for v in values)
        ratios = " ".join(f"{v / f:.0f}x" for v, f in zip(values, floors, strict=True))
        growth = values[-1] / values[0] if values[0] else float("inf")
        target = f"<= {GROWTH:.0f}x" if name in FLAT else ""
        good = name not in FLAT or growth <= GROWTH
        extra = "" if name == "floor" else f"  ({ratios} floor)"
        lines.append(f"{name:26}{cells}  {growth:6.2f}x  {target}{extra}{missed(good)}")
    loads = "; ".join(f"{s:,}: {by_size[s]['load_avg'][0]:.1f}" for s in sizes)
    lines.append(f"load average after each size: {loads}")
    return lines


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        print(json.dumps(worker(Path(sys.argv[2]), int(sys.argv[3]), "--job" in sys.argv)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", default="")
    parser.add_argument("--db", default="sqlite")
    parser.add_argument("--roots", type=Path, default=None)
    parser.add_argument("--samples", type=int, default=0)
    parser.add_argument("--job", action="store_true", help="first ingest through the job path")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s] or (
        [500, 5_000] if args.quick else [10_000, 300_000, 1_000_000]
    )
    args.samples = args.samples or (3 if args.quick else 7)
    work = Path(tempfile.mkdtemp(prefix="memviz-bench-reingest-"))
    roots = args.roots or work / "roots"
    roots.mkdir(parents=True, exist_ok=True)
    dbs = [d for d in args.db.split(",") if d]
    pg = Postgres(work) if "postgres" in dbs else None
    results: dict[str, dict[int, dict]] = {}
    try:
        for rows in sizes:
            root = root_for(roots, rows)
            for db in dbs:
                started = time.perf_counter()
                results.setdefault(db, {})[rows] = run_one(db, rows, root, work, pg, args)
                print(f"{db} {rows:,} rows: {time.perf_counter() - started:.0f} s", flush=True)
    finally:
        if pg is not None:
            pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    for db, by_size in results.items():
        print("\n".join(summarise(db, by_size)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
