"""Page latency while the agent writes, against the same readers with the agent quiet.

Usage: python bench/bench_concurrency.py [--quick]

Two real web servers and a watcher (bench/load.py) on SQLite, and on PostgreSQL when
`MEMVIZ_TEST_POSTGRES_URL` names a server. Phase 1: N readers alone (the floor). Phase 2: the same
readers while the agent appends 50 rows/s (each with its ref) and a person edits every 0.5 s.
Prints page p50/p95 of both phases and their ratio (target: p95 with the agent ≤ 2× the floor),
and the edit round-trip p50/p95 under that load. ``--quick``: 4 s phases, 8 readers.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from load import CANVAS, Appender, Browser, Cluster, Readings, pct, postgres_database, readers

OPS = f"/a/main/c/{CANVAS}/ops/?format=json"


def phase(cluster: Cluster, seconds: float, count: int, *, agent: bool) -> tuple[Readings, list[float]]:
    readings = Readings()
    edits: list[float] = []
    until = time.monotonic() + seconds
    appender = Appender(cluster.agent_dir, rate=50) if agent else None
    if appender:
        appender.start()
    threads = readers(cluster.urls(), count, until, readings)
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
    return readings, edits


def run(label: str, database_url: str | None, seconds: float, count: int) -> None:
    with tempfile.TemporaryDirectory() as work:
        cluster = Cluster(Path(work), database_url=database_url)
        try:
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
    print(f"  5xx answers                 {errors}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    seconds, count = (4.0, 8) if args.quick else (30.0, 20)
    run("SQLite", None, seconds, count)
    server = os.environ.get("MEMVIZ_TEST_POSTGRES_URL")
    if server:
        with postgres_database(server) as url:
            run("PostgreSQL", url, seconds, count)
    else:
        print("== PostgreSQL: skipped (set MEMVIZ_TEST_POSTGRES_URL to a server)")


if __name__ == "__main__":
    main()
