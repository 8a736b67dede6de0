"""Benchmark ingest, re-ingest, node-detail and canvas-page latency on a generated data root.

Every figure is printed as a ratio to a floor measured in the same run:
  * ingest floor: bare read + json.loads of every JSONL line and a bare read of every ref file;
  * page floor: the same Django test client hitting a minimal view (no queries, no template).
Usage: python bench/bench_ingest.py [--quick] [--rows N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from targets import missed  # noqa: E402


def setup_django(var_dir: Path) -> None:
    os.environ["MEMVIZ_VAR_DIR"] = str(var_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memviz.settings")
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.ALLOWED_HOSTS = ["*"]
    install_floor_urlconf()
    settings.ROOT_URLCONF = "bench_ingest_urls"
    call_command("migrate", verbosity=0)


def install_floor_urlconf() -> None:
    import types

    from django.http import HttpResponse
    from django.urls import include, path

    module = types.ModuleType("bench_ingest_urls")
    module.urlpatterns = [  # type: ignore[attr-defined]
        path("bench-floor/", lambda request: HttpResponse("ok")),
        path("", include("memviz.urls")),
    ]
    sys.modules["bench_ingest_urls"] = module


def floor_read(root: Path) -> tuple[float, int]:
    started = time.perf_counter()
    rows = 0
    for path in root.rglob("*"):
        if path.name.startswith("offload-") and path.suffix == ".jsonl":
            with open(path, "rb") as handle:
                for line in handle:
                    if line.strip():
                        json.loads(line)
                        rows += 1
        elif path.suffix == ".md" and path.parent.name == "refs":
            with open(path, "rb") as handle:
                handle.read()
    return time.perf_counter() - started, rows


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def timed_gets(client, urls: list[str]) -> list[float]:
    out = []
    for url in urls:
        started = time.perf_counter()
        response = client.get(url)
        out.append(time.perf_counter() - started)
        assert response.status_code == 200, (url, response.status_code)
    return out


def peak_ingest_memory(tmp: Path, rows: int, ref_bytes: int) -> float:
    from generate_root import generate_root

    from intake.ingest import ingest_path
    from sessions.models import Agent

    root = tmp / f"mem-{ref_bytes}"
    generate_root(root, rows, agents=1, sessions_per_agent=2, ref_bytes=ref_bytes, canvas_nodes=50)
    Agent.objects.filter(root=str(root.resolve())).delete()
    tracemalloc.start()
    ingest_path(root)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small data, for CI")
    parser.add_argument("--rows", type=int, default=None)
    args = parser.parse_args()
    rows = args.rows or (3_000 if args.quick else 100_000)
    requests = 30 if args.quick else 300

    tmp = Path(tempfile.mkdtemp(prefix="memviz-bench-ingest-"))
    setup_django(tmp / "var")
    from django.db.models import Count
    from django.test import Client
    from generate_root import generate_root

    from intake.ingest import ingest_path
    from sessions.models import Canvas, CanvasNode

    root = tmp / "root"
    t0 = time.perf_counter()
    counts = generate_root(root, rows)
    print(f"generated {counts} in {time.perf_counter() - t0:.1f} s")

    floor_s, floor_rows = floor_read(root)
    floor_s = min(floor_s, floor_read(root)[0])  # warm cache for both, like the ingest runs
    started = time.perf_counter()
    report = ingest_path(root)
    full_s = time.perf_counter() - started
    started = time.perf_counter()
    again = ingest_path(root)
    re_s = time.perf_counter() - started
    assert report.rows_added == floor_rows, (report.rows_added, floor_rows)
    assert again.rows_added == 0 and again.files_read == 0

    client = Client()
    floor_page = timed_gets(client, ["/bench-floor/"] * requests)
    big = Canvas.objects.annotate(n=Count("nodes")).order_by("-n").select_related("agent").first()
    assert big is not None
    nodes = list(CanvasNode.objects.filter(canvas=big).values_list("node_id", flat=True))
    rng = random.Random(1)
    node_urls = [
        f"/a/{big.agent.slug}/c/{big.filename}/n/{rng.choice(nodes)}/" for _ in range(requests)
    ]
    node_lat = timed_gets(client, node_urls)
    node_lat_json = timed_gets(client, [u + "?format=json" for u in node_urls])
    canvas_lat = timed_gets(
        client, [f"/a/{big.agent.slug}/c/{big.filename}/"] * max(10, requests // 5)
    )

    mem_small = peak_ingest_memory(tmp, 1_000 if args.quick else 10_000, 1_000)
    mem_large = peak_ingest_memory(tmp, 1_000 if args.quick else 10_000, 16_000)

    fp = p95(floor_page)
    print(f"\n== ingest of {floor_rows} rows, {counts['refs']} refs, {counts['canvases']} canvases")
    print(f"floor (read + json.loads rows, read refs): {floor_s * 1000:9.1f} ms")
    print(
        f"full ingest:                               {full_s * 1000:9.1f} ms  = {full_s / floor_s:5.2f}x floor  (target <= 3x){missed(full_s / floor_s <= 3)}"
    )
    print(
        f"re-ingest, unchanged:                      {re_s * 1000:9.1f} ms  = {100 * re_s / full_s:5.2f}% of full ingest (target <= 5%){missed(re_s / full_s <= 0.05)}"
    )
    print(f"\n== pages on the {len(nodes)}-node canvas {big.filename}, {requests} requests each")
    print(f"floor (minimal view) p95:                  {fp * 1000:9.2f} ms")
    print(
        f"node detail HTML  p50 {statistics.median(node_lat) * 1000:7.2f} ms  p95 {p95(node_lat) * 1000:7.2f} ms = {p95(node_lat) / fp:6.1f}x floor (target p95 <= 50 ms){missed(p95(node_lat) <= 0.05)}"
    )
    print(
        f"node detail JSON  p50 {statistics.median(node_lat_json) * 1000:7.2f} ms  p95 {p95(node_lat_json) * 1000:7.2f} ms = {p95(node_lat_json) / fp:6.1f}x floor"
    )
    print(
        f"canvas page       p50 {statistics.median(canvas_lat) * 1000:7.2f} ms  p95 {p95(canvas_lat) * 1000:7.2f} ms = {p95(canvas_lat) / fp:6.1f}x floor"
    )
    print("\n== peak Python memory of ingest (tracemalloc), same row count, refs 16x larger")
    print(
        f"refs ~1 KB: {mem_small:7.1f} MB   refs ~16 KB: {mem_large:7.1f} MB   ratio {mem_large / mem_small:4.2f} (independent of ref size when ~1)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
