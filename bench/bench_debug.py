"""Benchmark the debugging pages: replay steps, and an agent's diagnostics and token ledger.

Figures are printed next to floors measured in the same run:
  * page floor: the same Django test client hitting a minimal view (no queries, no template);
  * load floor: one bare `values_list` read of the rows the page is about.
Targets (issue 13): a replay step of a 10,000-row session <= 100 ms; the diagnostics and ledger
of a 250,000-row agent <= 500 ms once computed for its content (memoized per content change).
The browser step is measured in Debian's chromium when it is there (skipped otherwise).

Usage: python bench/bench_debug.py [--quick] [--replay-rows N] [--agent-rows N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_ingest import p95, setup_django, timed_gets  # noqa: E402

STEP_TARGET_MS = 100.0
ROLLUP_TARGET_MS = 500.0
CHROMIUM = Path("/usr/bin/chromium")


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.1f} ms"


def load_floor(**filters: object) -> float:
    from sessions.models import Row

    started = time.perf_counter()
    list(
        Row.objects.filter(**filters).values_list(
            "pk", "line_no", "timestamp", "node_id", "summary"
        )
    )
    return time.perf_counter() - started


def bench_replay(tmp: Path, rows: int, requests: int, floor_page: float, missed: list[str]) -> None:
    from django.test import Client
    from generate_root import generate_root

    from debugging import debug_selectors as ds
    from debugging.debug_cache import memo_clear
    from intake.ingest import ingest_path
    from sessions.models import AgentSession

    root = tmp / "replay-root"
    generate_root(root, rows, agents=1, sessions_per_agent=1, canvas_nodes=300)
    ingest_path(root)
    session = AgentSession.objects.select_related("agent").get()
    agent = session.agent
    floor = min(load_floor(session=session) for _ in range(3))
    memo_clear()
    started = time.perf_counter()
    replay = ds.replay_for(agent, session)
    cold = time.perf_counter() - started
    print(f"\n== replay of a {len(replay)}-row session, {len(replay.scenes)} canvas scenes")
    print(f"  floor: load the session's rows   {ms(floor)}")
    print(f"  build the frames (cold)          {ms(cold)}  {cold / floor:6.1f}x the load")
    base = f"/a/{agent.slug}/s/{session.session_id}/replay/"
    step = max(1, len(replay) // requests)
    stamps = [t.isoformat() for t in replay.times[::step] if t is not None]
    client = Client()
    steps = timed_gets(
        client, [f"{base}?format=json&limit=1&at={s.replace('+', '%2B')}" for s in stamps]
    )
    print(
        f"  step by ?at= (JSON, warm)   p50 {ms(statistics.median(steps))} p95 {ms(p95(steps))}"
        f"  {p95(steps) / floor_page:6.1f}x a minimal view"
    )
    if p95(steps) * 1e3 > STEP_TARGET_MS:
        missed.append(f"replay ?at= step p95 {p95(steps) * 1e3:.0f} ms > {STEP_TARGET_MS} ms")
    page = timed_gets(client, [base] * 3)
    print(
        f"  replay page (HTML, warm)         {ms(min(page))}  ({len(client.get(base).content) / 1e6:.1f} MB)"
    )
    if CHROMIUM.exists():
        browser_steps(base, len(replay), missed)
    else:
        print("  browser step: skipped (no /usr/bin/chromium)")


STEP_SCRIPT = """async ([count]) => {
  const slider = document.getElementById('replay-slider');
  const times = [];
  const waitFrame = (i) => new Promise((done) => {
    const check = () => (document.body.dataset.frame === String(i) ? done() : requestAnimationFrame(check));
    check();
  });
  for (let k = 0; k < count; k++) {
    const target = Number(slider.value) + 1;
    const t0 = performance.now();
    document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    await waitFrame(target);
    times.push(performance.now() - t0);
  }
  return times;
}"""


def browser_steps(path: str, frames: int, missed: list[str]) -> None:
    """ArrowRight steps in chromium, from a frame in the middle of the session."""
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from django.core.wsgi import get_wsgi_application
    from playwright.sync_api import sync_playwright

    from tests.conftest import CHROMIUM_ARGS

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    class Threading(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    server = make_server(
        "127.0.0.1", 0, get_wsgi_application(), server_class=Threading, handler_class=Quiet
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}{path}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            tab = browser.new_page(viewport={"width": 1400, "height": 1000})
            tab.goto(url)
            tab.wait_for_function("document.body.dataset.replayReady === '1'", timeout=60000)
            tab.locator("#replay-slider").fill(str(frames // 2))
            tab.wait_for_function(f"document.body.dataset.frame === '{frames // 2}'", timeout=60000)
            times = tab.evaluate(STEP_SCRIPT, [min(60, frames // 2 - 1)])
            browser.close()
    finally:
        server.shutdown()
    times_s = [t / 1e3 for t in times]
    print(
        f"  browser step (ArrowRight, chromium)  p50 {ms(statistics.median(times_s))}"
        f" p95 {ms(p95(times_s))} max {ms(max(times_s))}"
    )
    if p95(times_s) * 1e3 > STEP_TARGET_MS:
        missed.append(f"browser step p95 {p95(times_s) * 1e3:.0f} ms > {STEP_TARGET_MS} ms")


def bench_agent(tmp: Path, rows: int, requests: int, floor_page: float, missed: list[str]) -> None:
    from django.test import Client
    from generate_root import generate_root

    from debugging import debug_selectors as ds
    from debugging import ledger_selectors as ls
    from debugging.debug_cache import memo_clear
    from intake.ingest import ingest_path
    from sessions.models import Agent

    root = tmp / "agent-root"
    generate_root(root, rows, agents=1, sessions_per_agent=5, canvas_nodes=300)
    ingest_path(root)
    agent = Agent.objects.get(root=str(root.resolve()))
    floor = min(load_floor(agent=agent) for _ in range(3))
    print(f"\n== diagnostics and token ledger of a {agent.rows_count}-row agent")
    print(f"  floor: load the agent's rows     {ms(floor)}")
    memo_clear()
    started = time.perf_counter()
    ds.agent_findings(agent)
    diag_cold = time.perf_counter() - started
    started = time.perf_counter()
    ls.agent_ledger(agent)
    ledger_cold = time.perf_counter() - started
    print(
        f"  diagnostics, first for this content  {ms(diag_cold)}  {diag_cold / floor:6.1f}x the load"
    )
    print(
        f"  ledger, first for this content       {ms(ledger_cold)}  {ledger_cold / floor:6.1f}x the load"
    )
    client = Client()
    for name in ("diagnostics", "ledger"):
        for kind, suffix in (("JSON", "?format=json"), ("HTML", "")):
            times = timed_gets(client, [f"/a/{agent.slug}/{name}/{suffix}"] * requests)
            print(
                f"  {name} page ({kind}, same content) p50 {ms(statistics.median(times))}"
                f" p95 {ms(p95(times))}  {p95(times) / floor_page:6.1f}x a minimal view"
            )
            if p95(times) * 1e3 > ROLLUP_TARGET_MS:
                missed.append(
                    f"{name} {kind} p95 {p95(times) * 1e3:.0f} ms > {ROLLUP_TARGET_MS} ms"
                )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small data, for CI")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--replay-rows", type=int, default=None)
    parser.add_argument("--agent-rows", type=int, default=None)
    args = parser.parse_args()
    replay_rows = args.replay_rows or (1_000 if args.quick else 10_000)
    agent_rows = args.agent_rows or (2_000 if args.quick else 250_000)
    requests = 10 if args.quick else 50
    tmp = Path(tempfile.mkdtemp(prefix="memviz-bench-debug-"))
    setup_django(tmp / "var")
    from django.test import Client

    floor_page = p95(timed_gets(Client(), ["/bench-floor/"] * 30))
    print(f"page floor (minimal view, p95) {ms(floor_page)}")
    missed: list[str] = []
    bench_replay(tmp, replay_rows, requests, floor_page, missed)
    bench_agent(tmp, agent_rows, requests, floor_page, missed)
    for line in missed:
        print(f"MISSED: {line}")
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    raise SystemExit(main())
