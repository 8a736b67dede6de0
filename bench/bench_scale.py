"""How every hot figure grows with the data: 10k / 100k / 1M rows on SQLite and PostgreSQL.

    python bench/bench_scale.py [--quick] [--sizes 10000,100000,1000000] [--db sqlite,postgres]
        [--roots DIR] [--requests N] [--json OUT]

Data: ``bench/generate_root.py`` (4 agents, one ref per row), generated once per size into
``--roots`` and reused. Each (database, size) runs in a fresh process and database, so peak RSS
is that ingest's own: ingest, unchanged re-ingest, the watcher's unit of work (one row + its
ref appended, ``ingest_agent_dir`` with the changed paths), the explicit ingest after it (the
refs folder moved since its last full scan) and after one more row + ref, then requests through Django's
test client. Printed: every figure at every size, its growth (largest / smallest size) against
the target, and ratios to floors measured in the same run (reading and parsing the files;
a minimal view; writing the appended bytes).

PostgreSQL: ``MEMVIZ_TEST_POSTGRES_URL`` when set, otherwise a throw-away cluster started here
(as the ``postgres`` user when run as root). ``--quick`` (CI): 2,000 and 8,000 rows.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

# figure -> (kind, target). "request": p95 ≤ 50 ms and ≤ 2x its smallest-size value + 5 ms.
REQUEST_P95_MS = 50.0
GROWTH = 2.0
NOISE_MS = 5.0


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


# --------------------------------------------------------------------------------------------
# worker: one database, one size


def _timed(fn, n: int) -> list[float]:
    out = []
    for i in range(n):
        started = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - started) * 1000)
    return out


def _floor_read(root: Path) -> float:
    """Read and parse every row, read every ref (os.walk: rglob keeps every path it yields)."""
    started = time.perf_counter()
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if name.startswith("offload-") and name.endswith(".jsonl"):
                with open(path, "rb") as handle:
                    for line in handle:
                        if line.strip():
                            json.loads(line)
            elif name.endswith(".md") and os.path.basename(folder) == "refs":
                with open(path, "rb") as handle:
                    handle.read()
    return time.perf_counter() - started


def worker(root: Path, requests: int, appends: int) -> dict:
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    settings.ALLOWED_HOSTS = ["*"]
    # Connections are kept by the settings themselves (SQLite per thread, PostgreSQL's pool),
    # so requests here pay what a deployment's do.
    _floor_urls()
    call_command("migrate", verbosity=0)
    from django.test import Client

    from canvases.lint import canvas_lint
    from intake.ingest import ingest_agent_dir, ingest_path
    from sessions.models import Agent, AgentSession, Row

    out: dict = {"vendor": connection.vendor}
    out["floor_read_s"] = _floor_read(root)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    report = ingest_path(root)
    out["ingest_s"] = time.perf_counter() - started
    out["ingest_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["rss_before_ingest_mb"] = rss_before
    out["rows"] = report.rows_added
    out["database_mb"] = _database_mb()
    started = time.perf_counter()
    again = ingest_path(root)
    out["reingest_s"] = time.perf_counter() - started
    assert again.rows_added == 0 and again.files_read == 0, again.as_dict()

    # The watcher's unit of work on the biggest agent: a ref, then its row, then the ingest
    # the watcher runs with the two changed paths.
    agent_dir = root / "agent-00"
    session_file = sorted(agent_dir.glob("offload-*.jsonl"))[-1]

    def write_pair(i: int) -> tuple[Path, Path]:
        stamp = f"2027-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}+08:00"
        ref = agent_dir / "refs" / f"bench-{os.getpid()}-{i}.md"
        ref.write_text(
            f"# Tool Result: exec\n\n**Timestamp:** {stamp}\n\n---\n\n**Tool:** exec\n"
            f"**Call ID:** bench_{i}\n\n**Result:**\n```\nok {i}\n```",
            encoding="utf-8",
        )
        row = {
            "tool_call_id": f"bench_{os.getpid()}_{i}",
            "tool_call": f"exec: bench {i}",
            "summary": f"quetzal canary {i} 部署完成",
            "timestamp": stamp,
            "score": 5,
            "node_id": "001-N2",
            "result_ref": f"refs/{ref.name}",
        }
        with open(session_file, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        return ref, session_file

    floor_append = _timed(lambda i: write_pair(10_000 + i), appends)
    ingest_agent_dir(agent_dir, root=root, changed=[session_file])  # absorb the floor's rows

    def append_unit(i: int) -> None:
        ref, jsonl = write_pair(i)
        part = ingest_agent_dir(agent_dir, root=root, changed=[ref, jsonl])
        assert part.rows_added == 1 and part.refs_indexed == 1, part.as_dict()

    out["append_ms"] = _timed(append_unit, appends)
    out["append_floor_ms"] = floor_append

    # What `manage.py ingest` does once the watcher has been indexing: the refs folder changed
    # since the last full scan though the index holds everything; then one row and its ref
    # appended with no watcher (an explicit ingest finds them).
    started = time.perf_counter()
    after_watch = ingest_path(root)
    out["reingest_after_watch_ms"] = (time.perf_counter() - started) * 1000
    assert after_watch.rows_added == 0 and after_watch.refs_indexed == 0, after_watch.as_dict()

    def append_then_ingest(i: int) -> None:
        write_pair(20_000 + i)
        part = ingest_path(root)
        assert part.rows_added == 1 and part.refs_indexed == 1, part.as_dict()

    out["ingest_after_append_ms"] = _timed(append_then_ingest, max(3, appends // 10))

    agent = Agent.objects.get(slug="agent-00")
    other = Agent.objects.get(slug="agent-01")
    session = AgentSession.objects.filter(agent=other).earliest("session_id")
    big = agent.canvases.latest("node_count")
    own_session = AgentSession.objects.filter(agent=agent).earliest("session_id")
    node = "001-N5"
    client = Client()
    first = client.get("/search/?q=deploy&format=json").json()
    pages = {
        "floor: minimal view": "/bench-floor/",
        "search common": "/search/?q=deploy",
        "search common CJK-2": "/search/?q=部署",
        "search rare": "/search/?q=module_123.py",
        "search rare recent": "/search/?q=quetzal",
        "search no match": "/search/?q=zqxjv",
        "search no match CJK-2": "/search/?q=鲸鱼",
        "search common, agent": "/search/?q=deploy&agent=agent-02",
        "search rare, session": f"/search/?q=module_123.py&agent=agent-01&session={session.session_id}",
        "search common, status": "/search/?q=deploy&status=blocked",
        "search more (page 2)": f"/search/?q=deploy&rows_before={first['more']['rows']}",
        "home page": "/",
        "agent page": "/a/agent-00/",
        "agent page JSON": "/a/agent-00/?format=json",
        "lint page": f"/a/agent-00/c/{big.filename}/lint/",
        "session page": f"/a/agent-00/s/{own_session.session_id}/",
        "session page node=": f"/a/agent-00/s/{own_session.session_id}/?node={node}",
        "session page min_score=, deep": _deep_filtered(own_session),
        "node detail": f"/a/agent-00/c/{big.filename}/n/{node}/?format=json",
    }
    latencies = {}
    for name, url in pages.items():
        client.get(url)  # warm: templates, caches
        samples = []
        for _ in range(requests):
            started = time.perf_counter()
            response = client.get(url)
            samples.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, (url, response.status_code)
        latencies[name] = samples
    latencies["lint (kept figures)"] = _timed(
        lambda _i: canvas_lint(agent, big), requests
    )
    out["requests_ms"] = latencies
    out["rows_indexed"] = Row.objects.count()
    # The machine is shared: figures mean little without the load they were measured under.
    out["load_avg"] = os.getloadavg()
    return out


def _deep_filtered(session) -> str:
    """A page of a filtered session near its end (the one OFFSET paging paid most for)."""
    from sessions.models import Row

    matching = Row.objects.filter(session=session, score__gte=5).order_by("-line_no")
    # 100 matches before the end, or the first of a small session's (quick mode: 2,000 rows)
    near_end = list(matching.values_list("line_no", flat=True)[:101])
    cursor = near_end[-1] if near_end else 0
    return f"/a/agent-00/s/{session.session_id}/?min_score=5&after={cursor}"


def _floor_urls() -> None:
    from bench_ingest import install_floor_urlconf
    from django.conf import settings

    install_floor_urlconf()
    settings.ROOT_URLCONF = "bench_ingest_urls"


def _database_mb() -> float:
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_database_size(current_database())")
            return cursor.fetchone()[0] / 1e6
    name = connection.settings_dict["NAME"]
    return sum(os.path.getsize(f) for f in (name, f"{name}-wal") if os.path.exists(f)) / 1e6


# --------------------------------------------------------------------------------------------
# orchestration


def root_for(roots: Path, rows: int) -> Path:
    from generate_root import generate_root

    root = roots / f"rows-{rows}"
    if (roots / f"rows-{rows}.complete").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    started = time.perf_counter()
    counts = generate_root(root, rows)
    (roots / f"rows-{rows}.complete").write_text(json.dumps(counts))
    print(f"generated {counts} in {time.perf_counter() - started:.0f} s", flush=True)
    return root


def working_copy(root: Path, work: Path) -> Path:
    """The worker appends to the root: it gets hard links of the refs and copies of the rest."""
    target = work / "root"
    shutil.rmtree(target, ignore_errors=True)

    def copy(src: str, dst: str) -> None:
        if src.endswith(".md") and os.sep + "refs" + os.sep in src:
            os.link(src, dst)
        else:
            shutil.copy2(src, dst)

    shutil.copytree(root, target, copy_function=copy)
    return target


class Postgres:
    """A throw-away cluster, or the one named by MEMVIZ_TEST_POSTGRES_URL."""

    def __init__(self, work: Path) -> None:
        self.cluster: Path | None = None
        self.bin = ""
        url = os.environ.get("MEMVIZ_TEST_POSTGRES_URL")
        if url:
            self.base = url
            return
        bins = sorted(Path("/usr/lib/postgresql").glob("*/bin"))
        if not bins:
            raise RuntimeError("no PostgreSQL here: set MEMVIZ_TEST_POSTGRES_URL")
        self.bin = str(bins[-1])
        self.cluster = work / "pg"
        self.cluster.mkdir(parents=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self._as_postgres(f"{self.bin}/initdb -D {self.cluster} -A trust -U postgres -E UTF8")
        self._as_postgres(
            f"{self.bin}/pg_ctl -D {self.cluster} -o '-p {port} -k {self.cluster} "
            f"-c listen_addresses=127.0.0.1 -c shared_buffers=256MB' "
            f"-l {self.cluster}/log -w start"
        )
        self.base = f"postgres://postgres@127.0.0.1:{port}/postgres"

    def _as_postgres(self, command: str) -> None:
        assert self.cluster is not None
        if os.geteuid() == 0:
            shutil.chown(self.cluster, "postgres")
            os.chmod(self.cluster.parent, 0o755)
            command = f'su postgres -s /bin/sh -c "{command}"'
        subprocess.run(command, shell=True, check=True, capture_output=True)

    def database(self, name: str) -> str:
        import psycopg

        parts = urlsplit(self.base)
        admin = urlunsplit(parts._replace(path="/postgres"))
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return urlunsplit(parts._replace(path=f"/{name}"))

    def stop(self) -> None:
        if self.cluster is not None:
            with contextlib.suppress(subprocess.CalledProcessError):
                self._as_postgres(f"{self.bin}/pg_ctl -D {self.cluster} -m fast stop")


def run_one(db: str, rows: int, root: Path, work: Path, pg: Postgres | None, args) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    var = work / f"var-{db}-{rows}"
    shutil.rmtree(var, ignore_errors=True)
    env.update(
        MEMVIZ_VAR_DIR=str(var),
        MEMVIZ_ANONYMOUS_VIEW="1",
        MEMVIZ_LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="memviz.settings",
    )
    if db == "postgres":
        assert pg is not None
        env["DATABASE_URL"] = pg.database(f"memviz_scale_{rows}")
    copy = working_copy(root, work)
    done = subprocess.run(
        [sys.executable, __file__, "--worker", str(copy), str(args.requests), str(args.appends)],
        env=env,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    if done.returncode:
        raise SystemExit(f"{db} {rows:,} rows: the worker failed\n{done.stderr[-4000:]}")
    out = json.loads(done.stdout.splitlines()[-1])
    shutil.rmtree(copy, ignore_errors=True)
    return out


def summarise(results: dict[str, dict[int, dict]]) -> tuple[list[str], bool]:
    lines, ok = [], True
    for db, by_size in results.items():
        sizes = sorted(by_size)
        lo, hi = sizes[0], sizes[-1]
        head = "".join(f"{s:>13,}" for s in sizes)
        lines.append(f"\n== {db}: figure by rows ({head.strip()}), growth = largest / smallest")
        lines.append(f"{'figure':34}{head}   growth  target")

        def row(name: str, values: list[float], unit: str, target: str, good: bool) -> None:
            nonlocal ok
            ok = ok and good
            cells = "".join(f"{v:>11.1f}{unit:>2}" for v in values)
            growth = values[-1] / values[0] if values[0] else float("inf")
            lines.append(f"{name:34}{cells}  {growth:6.2f}x  {target}{'' if good else '  MISSED'}")

        floor = [by_size[s]["floor_read_s"] for s in sizes]
        ingest = [by_size[s]["ingest_s"] for s in sizes]
        row("floor: read + parse files", floor, "s", "", True)
        row("ingest", ingest, "s", f"= {ingest[-1] / floor[-1]:.1f}x floor at {hi:,}", True)
        size_mb = [by_size[s]["database_mb"] for s in sizes]
        row("database size after ingest", size_mb, "MB", "", True)
        rss = [by_size[s]["ingest_rss_mb"] for s in sizes]
        row("ingest peak RSS", rss, "MB", "<= 150 MB", rss[-1] <= 150)
        re_s = [by_size[s]["reingest_s"] for s in sizes]
        row("re-ingest, unchanged", re_s, "s", "<= 0.5 s", re_s[-1] <= 0.5)
        for key, label in (
            ("reingest_after_watch_ms", "re-ingest after watcher appends"),
            ("ingest_after_append_ms", "ingest after 1 row+ref, median"),
        ):
            if not all(key in by_size[s] for s in sizes):
                continue  # results of an older run
            values = [by_size[s][key] for s in sizes]
            values = [pct(v, 50) if isinstance(v, list) else v for v in values]
            unit = "ms" if key.endswith("_ms") else "s"
            row(label, values, unit, "<= 2x", values[-1] <= GROWTH * values[0])
        for key, label in (
            ("append_floor_ms", "floor: write row + ref"),
            ("append_ms", "append row+ref (watcher unit) p95"),
        ):
            values = [pct(by_size[s][key], 95) for s in sizes]
            good = key != "append_ms" or values[-1] <= GROWTH * values[0] + NOISE_MS
            row(label, values, "ms", "flat" if key == "append_ms" else "", good)
        names = list(by_size[lo]["requests_ms"])
        floor_p95 = pct(by_size[hi]["requests_ms"]["floor: minimal view"], 95)
        for name in names:
            values = [pct(by_size[s]["requests_ms"][name], 95) for s in sizes]
            if name.startswith("floor"):
                row(f"{name} p95", values, "ms", "", True)
                continue
            good = values[-1] <= REQUEST_P95_MS and values[-1] <= GROWTH * values[0] + NOISE_MS
            target = f"<= 50 ms, <= 2x; {values[-1] / floor_p95:.0f}x floor"
            row(f"{name} p95", values, "ms", target, good)
    if {"sqlite", "postgres"} <= set(results):
        for rows in sorted(set(results["sqlite"]) & set(results["postgres"])):
            ratio = results["postgres"][rows]["ingest_s"] / results["sqlite"][rows]["ingest_s"]
            ok = ok and (ratio <= 1.2 or rows < 100_000)
            lines.append(
                f"PostgreSQL / SQLite ingest at {rows:,} rows: {ratio:.2f}x (target <= 1.2x)"
            )
    return lines, ok


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        root, requests, appends = Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        print(json.dumps(worker(root, requests, appends)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", default="")
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--roots", type=Path, default=None)
    parser.add_argument("--requests", type=int, default=0)
    parser.add_argument("--appends", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s] or (
        [2_000, 8_000] if args.quick else [10_000, 100_000]
    )
    args.requests = args.requests or (10 if args.quick else 60)
    args.appends = args.appends or (10 if args.quick else 60)
    work = Path(tempfile.mkdtemp(prefix="memviz-bench-scale-"))
    roots = args.roots or work / "roots"
    roots.mkdir(parents=True, exist_ok=True)
    pg = None
    results: dict[str, dict[int, dict]] = {}
    try:
        dbs = [d for d in args.db.split(",") if d]
        if "postgres" in dbs:
            pg = Postgres(work)
        for rows in sizes:
            root = root_for(roots, rows)
            for db in dbs:
                started = time.perf_counter()
                results.setdefault(db, {})[rows] = run_one(db, rows, root, work, pg, args)
                load = " ".join(f"{x:.1f}" for x in results[db][rows]["load_avg"])
                print(
                    f"{db} {rows:,} rows: {time.perf_counter() - started:.0f} s "
                    f"(load average after: {load})",
                    flush=True,
                )
    finally:
        if pg is not None:
            pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    lines, ok = summarise(results)
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(results))
    print("OK" if ok else "SOME TARGETS MISSED (see above)")
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
