"""Page latency while the agent writes, against the same readers with the agent quiet.

Usage: python bench/bench_concurrency.py [--quick]

Two real web servers and a watcher (bench/load.py) on SQLite, and on PostgreSQL when
`MEMVIZ_TEST_POSTGRES_URL` names a server. Phase 1: N readers alone (the floor). Phase 2: the same
readers while the agent appends 50 rows/s (each with its ref) and a person edits every 0.5 s.
Prints page p50/p95 of both phases and their ratio (target: p95 with the agent ≤ 2× the floor),
and the edit round-trip p50/p95 under that load. ``--quick``: 2 s phases, 8 readers, one
database (PostgreSQL when a server is named, else SQLite).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

from load import (
    CANVAS,
    SESSION,
    Appender,
    Browser,
    Cluster,
    Readings,
    pct,
    postgres_database,
    readers,
)

OPS = f"/a/main/c/{CANVAS}/ops/?format=json"
SESSION_JSON = f"/a/main/s/{SESSION}/?format=json"
PREFILL = 200  # rows the agent has before the floor is measured: its pages are full


def index_lag(base: str, appender: Appender, until: float, lags: list[float]) -> None:
    """Every 0.5 s: how long the oldest row the agent wrote but the index lacks has waited."""
    probe = Browser(base)
    start = probe.get(SESSION_JSON).json()["session"]["rows"]
    while time.monotonic() < until:
        answer = probe.get(SESSION_JSON)
        if answer.status == 200:
            indexed = answer.json()["session"]["rows"] - start
            times = appender.times
            lags.append(time.monotonic() - times[indexed] if indexed < len(times) else 0.0)
        time.sleep(0.5)


def phase(cluster: Cluster, seconds: float, count: int, *, agent: bool) -> tuple[Readings, list[float]]:
    readings = Readings()
    cpu_before, wall = cluster.cpu_seconds(), time.monotonic()
    edits: list[float] = []
    until = time.monotonic() + seconds
    appender = Appender(cluster.agent_dir, rate=50, first=PREFILL) if agent else None
    threads = []
    if appender:
        threads.append(threading.Thread(
            target=index_lag, args=(cluster.urls()[1], appender, until, readings.lags), daemon=True
        ))
        threads[0].start()
        appender.start()
    threads += readers(cluster.urls(), count, until, readings)
    if agent:
        person = Browser(cluster.urls()[0])
        person.login()
        base = person.get(f"/a/main/c/{CANVAS}/?format=json").json()["content_hash"]
        step = 0
        while time.monotonic() < until:
            answer = person.post_json(
                OPS,
                {"op": "annotate", "node": "002-N5", "text": f"bench {step}", "base": base},
            )
            edits.append(answer.seconds)
            body = answer.json() if answer.body else {}
            base = body.get("hash") or body.get("current_hash") or base
            step += 1
            time.sleep(0.5)
    for thread in threads:
        thread.join(timeout=120)
    if appender:
        appender.stop()
    readings.cpu = {k: v - cpu_before.get(k, 0.0) for k, v in cluster.cpu_seconds().items()}
    readings.wall = time.monotonic() - wall
    return readings, edits


def prefill(cluster: Cluster, rows: int) -> None:
    """Give the agent `rows` more rows (and refs) and wait until the index has them.

    The fixture's session holds a dozen rows, less than a page: without this the floor would
    measure half-empty pages and the loaded phase full ones, mixing content with contention.
    """
    probe = Browser(cluster.urls()[0])
    start = probe.get(SESSION_JSON).json()["session"]["rows"]
    appender = Appender(cluster.agent_dir, rate=1)
    for _ in range(rows):
        appender.write_one()
    deadline = time.monotonic() + 120
    while probe.get(SESSION_JSON).json()["session"]["rows"] < start + rows:
        if time.monotonic() > deadline:
            raise TimeoutError("the watcher did not index the prefill rows")
        time.sleep(0.2)


def run(label: str, database_url: str | None, seconds: float, count: int) -> None:
    with tempfile.TemporaryDirectory() as work:
        cluster = Cluster(Path(work), database_url=database_url)
        try:
            prefill(cluster, PREFILL)
            phase(cluster, 2, 2, agent=False)  # warm the servers
            quiet, _ = phase(cluster, seconds, count, agent=False)
            busy, edits = phase(cluster, seconds, count, agent=True)
        finally:
            cluster.stop()
    q, b = quiet.seconds(), busy.seconds()
    errors = len(quiet.errors()) + len(busy.errors())
    print(f"== {label}: {count} readers over 2 servers, {seconds:.0f} s per phase")
    print(f"  readers only (floor)        {len(q):6d} views  p50 {pct(q, 50) * 1000:7.1f} ms  p95 {pct(q, 95) * 1000:7.1f} ms")
    print(f"  + agent 50 rows/s + edits   {len(b):6d} views  p50 {pct(b, 50) * 1000:7.1f} ms  p95 {pct(b, 95) * 1000:7.1f} ms")
    ratio = pct(b, 95) / pct(q, 95)
    print(f"  page p95 ratio              {ratio:.2f}x the floor  (target <= 2x: {'met' if ratio <= 2 else 'MISSED'})")
    print(f"  edit round-trip under load  {len(edits):6d} edits  p50 {pct(edits, 50) * 1000:7.1f} ms  p95 {pct(edits, 95) * 1000:7.1f} ms")
    lags = busy.lags
    print(f"  index behind the agent      {len(lags):6d} probes p50 {pct(lags, 50) * 1000:7.1f} ms  p95 {pct(lags, 95) * 1000:7.1f} ms  max {max(lags, default=0) * 1000:.0f} ms")
    print(f"  5xx answers                 {errors}")
    for path in dict.fromkeys(p for p, _ in quiet.answers):
        qs = [a.seconds for p, a in quiet.answers if p == path]
        bs = [a.seconds for p, a in busy.answers if p == path]
        print(f"    {path[:60]:<60} p95 {pct(qs, 95) * 1000:7.1f} -> {pct(bs, 95) * 1000:7.1f} ms")
    for name, readings in (("readers only", quiet), ("+ agent", busy)):
        cpu = ", ".join(f"{k} {v / readings.wall * 100:.0f}%" for k, v in readings.cpu.items())
        serving = sum(v for k, v in readings.cpu.items() if k.startswith("server"))
        print(f"  CPU, {name:<13} {cpu}  ({serving / max(1, len(readings.answers)) * 1000:.1f} ms server CPU a view)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    seconds, count = (2.0, 8) if args.quick else (30.0, 20)
    server = os.environ.get("MEMVIZ_TEST_POSTGRES_URL")
    # quick (CI, where the same paths run under load in tests/concurrency on both databases):
    # one database, PostgreSQL when there is a server, to keep `make test` within 10 minutes
    if not (args.quick and server):
        run("SQLite", None, seconds, count)
    if server:
        with postgres_database(server) as url:
            run("PostgreSQL", url, seconds, count)
    else:
        print("== PostgreSQL: skipped (set MEMVIZ_TEST_POSTGRES_URL to a server)")


if __name__ == "__main__":
    main()
