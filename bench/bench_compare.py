"""Benchmark the session comparison: two long runs of one agent aligned and paged.

Figures are printed next to floors measured in the same run:
  * load floor: one bare `values_list` read of both sessions' rows (what any view of them costs);
  * page floor: the same Django test client hitting a minimal view (no queries, no template).
Targets (issue 25): the first comparison of two 20,000-row sessions <= 10x the load floor;
after that (memoized per content) any page, deep or filtered, <= 150 ms.

Usage: python bench/bench_compare.py [--quick] [--rows N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_debug import ms  # noqa: E402
from bench_ingest import p95, setup_django, timed_gets  # noqa: E402
from targets import missed as missed_mark  # noqa: E402

if TYPE_CHECKING:
    from sessions.models import Agent, AgentSession

BUILD_TARGET_X = 10.0
PAGE_TARGET_MS = 150.0
TOOLS = ("read", "exec", "edit", "write", "grep", "web_fetch")
NODES = 200


def _run_a(rows: int, files: int, rng: random.Random) -> list[tuple[str, str, float, str]]:
    """(tool call, summary, score, node) of a run whose calls touch ``files`` files."""
    out = []
    for k in range(rows):
        tool = rng.choice(TOOLS)
        call = f"{tool}: src/module_{rng.randrange(files)}.py"
        out.append(
            (
                call,
                f"result of {call} #{k}",
                float(rng.randrange(1, 10)),
                f"001-N{k * NODES // rows + 1}",
            )
        )
    return out


def _run_b(
    a: list[tuple[str, str, float, str]], rng: random.Random
) -> list[tuple[str, str, float, str]]:
    """The same run with 1 % of its rows inserted, removed, changed or given another result."""
    b = list(a)
    for _ in range(len(a) // 100):
        k = rng.randrange(len(b))
        call, summary, score, node = b[k]
        kind = rng.randrange(4)
        if kind == 0:
            b.insert(k, (f"exec: retry {k}", "retried", 5.0, node))
        elif kind == 1:
            del b[k]
        elif kind == 2:
            b[k] = (call + " --verbose", summary, score, node)
        else:
            b[k] = (call, summary + " (failed)", score - 1, node)
    return b


def build(rows: int, files: int, slug: str) -> tuple[Agent, AgentSession, AgentSession]:
    from sessions.models import Agent, AgentSession, Canvas, CanvasNode, Ref, Row

    rng = random.Random(0)
    folder = Path(tempfile.mkdtemp(prefix="memviz-bench-compare-"))
    agent = Agent.objects.create(slug=slug, name=slug, path=str(folder), root=str(folder))
    canvas = Canvas.objects.create(agent=agent, filename="001-task.mmd", content_hash="x")
    CanvasNode.objects.bulk_create(
        CanvasNode(
            canvas=canvas,
            agent=agent,
            node_id=f"001-N{k}",
            position=k,
            title=f"step {k}",
            status="done",
        )
        for k in range(1, NODES + 1)
    )
    run_a = _run_a(rows, files, rng)
    sessions = []
    for name, run in (("run-a", run_a), ("run-b", _run_b(run_a, rng))):
        session = AgentSession.objects.create(
            agent=agent, session_id=name, relpath=f"offload-{name}.jsonl", rows_count=len(run)
        )
        Ref.objects.bulk_create(
            (
                # a result's size follows from its summary: the same call, the same size
                Ref(
                    agent=agent,
                    name=f"refs/{name}-{k}.md",
                    size=1000 + zlib.crc32(r[1].encode()) % 500,
                )
                for k, r in enumerate(run)
            ),
            batch_size=2000,
        )
        Row.objects.bulk_create(
            (
                Row(
                    agent=agent,
                    session=session,
                    line_no=k + 1,
                    offset=k * 200,
                    tool_call_id=f"call_{name}_{k}",
                    normalized_id=f"call{name}{k}",
                    tool_call=call,
                    summary=summary,
                    score=score,
                    node_id=node,
                    result_ref=f"refs/{name}-{k}.md",
                    placed=True,
                )
                for k, (call, summary, score, node) in enumerate(run)
            ),
            batch_size=2000,
        )
        sessions.append(session)
    Agent.objects.filter(pk=agent.pk).update(refs_count=Ref.objects.filter(agent=agent).count())
    agent.refresh_from_db()
    return agent, sessions[0], sessions[1]


def load_floor(a: AgentSession, b: AgentSession) -> float:
    from sessions.models import Row

    started = time.perf_counter()
    for session in (a, b):
        list(
            Row.objects.filter(session=session)
            .order_by("line_no")
            .values_list("pk", "line_no", "tool_call", "summary", "score", "node_id", "result_ref")
        )
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small data, for CI")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--rows", type=int, default=None, help="rows of each session")
    parser.add_argument("--profile", action="store_true", help="profile one warm page")
    args = parser.parse_args()
    rows = args.rows or (2_000 if args.quick else 20_000)
    requests = 10 if args.quick else 30
    tmp = Path(tempfile.mkdtemp(prefix="memviz-bench-compare-"))
    setup_django(tmp / "var")
    from django.test import Client

    from debugging import compare_selectors as cs
    from debugging.debug_cache import memo_clear

    floor_page = p95(timed_gets(Client(), ["/bench-floor/"] * 30))
    print(f"page floor (minimal view, p95) {ms(floor_page)}")
    missed: list[str] = []
    for title, files, slug in (
        ("calls mostly distinct", rows // 4, "bench-compare"),
        ("every call repeated (60 distinct)", 10, "bench-compare-repeats"),
    ):
        agent, a, b = build(rows, files, slug)
        floor = min(load_floor(a, b) for _ in range(3))
        print(f"\n== two {rows}-row sessions, B = A with 1 % of rows edited; {title}")
        print(f"  floor: load both sessions' rows        {ms(floor)}")
        memo_clear()
        started = time.perf_counter()
        built = cs.comparison_for(agent, a, b)
        cold = time.perf_counter() - started
        summary = built["result"].summary
        ok = cold / floor <= BUILD_TARGET_X
        print(
            f"  align + match, first for this content {ms(cold)}  {cold / floor:6.1f}x the load"
            f"{missed_mark(ok)}"
        )
        if not ok:
            missed.append(f"{title}: first build {cold / floor:.1f}x the load > {BUILD_TARGET_X}x")
        print(
            f"  found: {summary['same']} same, {summary['result']} other result, "
            f"{summary['changed']} other arguments, {summary['only_a']} only A, "
            f"{summary['only_b']} only B, {summary['moved']} moved"
        )
    # pages of the last pair of sessions, its comparison memoized
    client = Client()
    base = f"/a/{agent.slug}/compare/?a={a.session_id}&b={b.session_id}"
    pairs = len(built["result"].pairs)
    for label, urls in (
        ("first page (HTML)", [base] * requests),
        (
            "deep pages (JSON, ?after=)",
            [f"{base}&format=json&after={k}" for k in range(0, pairs, max(1, pairs // requests))],
        ),
        (
            "differences only (HTML, deep)",
            [f"{base}&show=diff&after={pairs // 2 + k}" for k in range(requests)],
        ),
    ):
        client.get(urls[0])  # the first HTML render compiles the templates
        times = timed_gets(client, urls)
        worst = p95(times)
        ok = worst * 1e3 <= PAGE_TARGET_MS
        print(
            f"  {label:34} p50 {ms(statistics.median(times))} p95 {ms(worst)}"
            f"  {worst / floor_page:6.1f}x a minimal view{missed_mark(ok)}"
        )
        if not ok:
            missed.append(f"{label} p95 {worst * 1e3:.0f} ms > {PAGE_TARGET_MS} ms")
    if args.profile:
        import cProfile
        import pstats

        url = f"{base}&show=diff&after={pairs // 2}"
        client.get(url)
        cProfile.runctx(
            "client.get(url)", globals(), {"client": client, "url": url}, "/tmp/bench-compare.prof"
        )
        pstats.Stats("/tmp/bench-compare.prof").sort_stats("tottime").print_stats(20)
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    raise SystemExit(main())
