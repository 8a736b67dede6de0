"""The canvas in a real browser (Debian's chromium) against bare mermaid.js on the same text.

Usage: python bench/bench_render.py [--quick] [--runs N] [--sizes 300,1000] [--shapes flat]
                                   [--only click,edit,zoom] [--no-floor]

For generated canvases (``samples.sample_canvas``: six-ish subgraphs of 50 nodes, labels with
status/summary/timestamp; "flat" is the same text without its subgraph lines) of 40 / 300 / 1000
nodes, against a real daphne serving the app on loopback:

- first render: navigation start → the canvas on screen (painted and rastered: the next frame has
  begun), in a fresh browser context (nothing cached), for the default view and for everything
  expanded (``?collapsed=``); the floor is a page that loads the vendored mermaid.min.js and
  renders the whole render-ready text until it is on screen, measured the same way;
- click → panel: a click on a drawn node until the frame showing its rows in the side panel is
  painted (median of 5 clicks, 400 ms apart as a person's are; the first comes as soon as the
  drawing is on screen, and is also printed on its own);
- edit re-render: a signed-in annotate through the page's own form until the new drawing is up
  (the server writes the file, records the revision, answers the editor partial); the floor is
  mermaid.render of the edited text in a page that already has mermaid loaded;
- zoom frame: frames while zooming from a readable scale out to the whole drawing and back, on
  the expanded canvas; the floor is the same zoom on mermaid's SVG.
Each figure is printed absolute and as a ratio to its floor. ``--quick`` (CI) runs 40 and 300
nodes once, with the mermaid floors of the nested canvases only (bare mermaid takes most of the
run: 82 s for the 1000-node flat canvas alone).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 1000}
USER, PASSWORD = "bench", "bench-render-1"
TARGETS = {"first": 1500.0, "click": 100.0, "edit300": 300.0, "frame": 1000 / 60}

BARE_PAGE = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<div id="h" style="width:1400px;height:900px;overflow:hidden"></div>
<script src="{mermaid}"></script>
<script>
window.benchBody = {body};
window.benchRender = async (text) => {{
  const t0 = performance.now();
  const {{ svg }} = await mermaid.render("m" + Math.random().toString(36).slice(2), text);
  const host = document.getElementById("h");
  host.innerHTML = svg;
  host.querySelector("svg").getBoundingClientRect();
  // on screen: the frame after the one that paints the SVG begins once that one is rastered
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
  return performance.now() - t0;
}};
mermaid.initialize({{ startOnLoad: false, securityLevel: "strict", maxTextSize: 5000000, maxEdges: 50000,
  flowchart: {{ htmlLabels: true, useMaxWidth: false }} }});
window.benchReady = benchRender(benchBody).then(() => {{ window.benchDone = performance.now(); }},
  (e) => {{ window.benchError = String(e); }});
</script></body></html>"""

ZOOM = """async ([viewKind, steps]) => {
  const frames = [];
  let apply;
  if (viewKind === "memviz") {
    const view = mv.canvas.view(), model = mv.canvas.model();
    const start = view.scale(), end = Math.min(start, 0.5 * Math.min(1400 / model.width, 900 / model.height));
    apply = (k, cx, cy) => view.gestureTo(k, cx, cy);
    var from = start, to = end, cx = model.width / 2, cy = model.height / 2;
  } else {
    const svg = document.querySelector("#h svg");
    const g = svg.querySelector("g");
    const box = g.getBBox();
    var from = 1, to = 0.5 * Math.min(1400 / box.width, 900 / box.height), cx = box.x + box.width / 2, cy = box.y + box.height / 2;
    svg.setAttribute("width", 1400); svg.setAttribute("height", 900); svg.removeAttribute("viewBox"); svg.removeAttribute("style");
    apply = (k, x, y) => g.setAttribute("transform", `matrix(${k},0,0,${k},${700 - x * k},${450 - y * k})`);
  }
  const scales = [];
  for (let i = 0; i <= steps; i++) scales.push(from * Math.pow(to / from, i / steps));
  const all = scales.concat(scales.slice().reverse());
  let last = await new Promise((r) => requestAnimationFrame(r));
  for (const k of all) {
    apply(k, cx, cy);
    const now = await new Promise((r) => requestAnimationFrame(r));
    frames.push(now - last);
    last = now;
  }
  return frames;
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def flat(text: str) -> str:
    return "\n".join(
        line
        for line in text.split("\n")
        if not line.strip().startswith("subgraph") and line.strip() != "end"
    )


def size_of(name: str) -> int:
    """Nodes of a generated canvas from its file name (the flat one is numbered one higher)."""
    number = int(name.split("-", 1)[0])
    return number - 1 if "flat" in name else number


def canvases(sizes: list[int]) -> dict[str, str]:
    from canvases.mermaid.samples import sample_canvas

    out = {}
    for n in sizes:
        nested = sample_canvas(n, prefix=f"{n:03d}")
        out[f"{n:03d}-nested.mmd"] = nested
        out[f"{n + 1:03d}-flat.mmd"] = flat(sample_canvas(n, prefix=f"{n + 1:03d}"))
    return out


class Server:
    def __init__(self, work: Path, texts: dict[str, str]) -> None:
        root = work / "root" / "bench"
        (root / "mmds").mkdir(parents=True)
        (root / "refs").mkdir()
        for name, text in texts.items():
            (root / "mmds" / name).write_text(text, encoding="utf-8")
        old = time.time() - 86_400  # an agent idle for a day: no "live" banner, no watcher races
        for path in [*root.rglob("*"), root]:
            os.utime(path, (old, old))
        self.env = {**os.environ, "MEMVIZ_VAR_DIR": str(work / "var"), "MEMVIZ_DATA_ROOT": str(work / "root")}
        for key in ("DATABASE_URL", "REDIS_URL", "MEMVIZ_DEBUG"):
            self.env.pop(key, None)
        py = sys.executable
        manage = [py, "manage.py"]
        subprocess.run([*manage, "migrate", "-v0"], cwd=REPO, env=self.env, check=True)
        subprocess.run([*manage, "ingest"], cwd=REPO, env=self.env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(
            [*manage, "shell", "-c", f"from django.contrib.auth.models import User; User.objects.create_user({USER!r}, password={PASSWORD!r})"],
            cwd=REPO, env=self.env, check=True, stdout=subprocess.DEVNULL,
        )
        self.port = free_port()
        self.proc = subprocess.Popen(
            [py, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port), "memviz.asgi:application"],
            cwd=REPO, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(self.url + "/", timeout=1)
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("daphne did not start")

    def static_url(self, name: str) -> str:
        """A static file's hashed URL, as the pages name it."""
        manifest = json.loads((REPO / "staticfiles" / "staticfiles.json").read_text())
        return "/static/" + manifest["paths"][name]

    def mermaid_url(self) -> str:
        return self.static_url("vendor/mermaid/mermaid.min.js")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def memviz_first(browser, url: str) -> tuple[float, int]:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.goto(url)
    page.wait_for_function("document.body.dataset.shownAt", timeout=120_000)
    at = float(page.evaluate("document.body.dataset.shownAt"))
    drawn = int(page.evaluate("document.body.dataset.drawnNodes"))
    context.close()
    return at, drawn


def bare_first(browser, server: Server, body: str, timeout_s: float):
    """(ms from navigation start to mermaid's SVG in the page, the open page for more floors)."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    html = BARE_PAGE.format(mermaid=server.mermaid_url(), body=json.dumps(body))
    page.route(server.url + "/__bench/mermaid", lambda route: route.fulfill(status=200, content_type="text/html", body=html))
    page.goto(server.url + "/__bench/mermaid", wait_until="commit")  # "load" waits for mermaid
    page.wait_for_function("window.benchDone || window.benchError", timeout=timeout_s * 1000, polling=200)
    error = page.evaluate("window.benchError || null")
    if error:
        raise RuntimeError(f"mermaid failed: {error[:200]}")
    return float(page.evaluate("window.benchDone")), page, context


def click_panel(page) -> list[float]:
    return page.evaluate(
        """async () => {
      const view = mv.canvas.view(), model = mv.canvas.model(), r = view.visibleRect();
      const ids = model.order.filter((id) => { const b = model.boxes.get(id);
        return !model.leaves.get(id).summary && b.x > r.x && b.x < r.x + r.w && b.y > r.y && b.y < r.y + r.h; }).slice(0, 5);
      const times = [];
      for (const id of ids) {
        const g = document.querySelector(`#diagram g.node[data-memviz-id="${CSS.escape(id)}"]`);
        const t0 = performance.now();
        const done = new Promise((resolve) => {
          const check = () => document.querySelector(`#node-panel .node-detail[data-node="${CSS.escape(id)}"]`);
          const obs = new MutationObserver(() => { if (check()) { obs.disconnect(); resolve(); } });
          obs.observe(document.getElementById("node-panel"), { childList: true, subtree: true });
        });
        g.dispatchEvent(new MouseEvent("click", { bubbles: true }));
        await done;
        // until the frame with the panel is painted (a task queued from rAF runs after paint)
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        times.push(performance.now() - t0);
        // a person's next click comes after they read the panel, not in the same frame: let
        // the page go idle so one click's time is not the tail of the previous one's work
        await new Promise((r) => setTimeout(r, 400));
      }
      return times;
    }"""
    )


def edit_rerender(page, count: int) -> list[float]:
    times = []
    for k in range(count):
        times.append(
            page.evaluate(
                """async (note) => {
          const model = mv.canvas.model(), r = mv.canvas.view().visibleRect();
          const id = model.order.find((i) => !model.leaves.get(i).summary);
          mv.canvas.select([id]);
          const before = Number(document.body.dataset.renderCount);
          const form = document.querySelector('.op-form[data-form="annotate"]');
          form.hidden = false;
          form.querySelector("textarea").value = note;
          const t0 = performance.now();
          const settled = new Promise((r) => document.addEventListener("htmx:afterSettle", r, { once: true }));
          form.querySelector("button[type=submit]").click();
          await new Promise((resolve) => { const tick = () => Number(document.body.dataset.renderCount) > before && document.body.dataset.canvasRendered === "ok" ? resolve() : requestAnimationFrame(tick); tick(); });
          await new Promise((r) => requestAnimationFrame(() => r()));
          const took = performance.now() - t0;
          await settled; // the next edit's form must be wired by htmx first
          return took;
        }""",
                f"bench note {k}",
            )
        )
    return times


def log_in(context, server: Server, next_url: str):
    page = context.new_page()
    page.goto(f"{server.url}/login/?next={next_url}")
    page.fill("input[name=username]", USER)
    page.fill("input[name=password]", PASSWORD)
    page.click("button.primary")
    page.wait_for_url(f"**{next_url}")
    page.wait_for_function("document.body.dataset.shownAt", timeout=120_000)
    # the page's canvas API (canvas.js exports it; memviz sets no globals), as window.mv.canvas
    page.evaluate("async (url) => { window.mv = { canvas: (await import(url)).canvas }; }", server.static_url("js/canvas.js"))
    return page


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(0.95 * (len(values) - 1)))] if values else float("nan")


def fmt_ms(ms: float) -> str:
    if ms != ms:
        return "—"
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.0f} ms" if ms >= 100 else f"{ms:.1f} ms"


def ratio(a: float, b: float) -> str:
    return "—" if a != a or b != b or not b else f"{a / b:.2f}x"


ALL_PARTS = ("first", "click", "edit", "zoom")


def measure(browser, server: Server, name: str, text: str, runs: int, bare: bool, quick: bool, parts: tuple[str, ...] = ALL_PARTS) -> dict:
    from canvases.mermaid import render_body

    body = render_body(text)
    zoom_steps = 20 if quick else 60
    base = f"{server.url}/a/bench/c/{name}/"
    nan = float("nan")
    row: dict = {"name": name, "default": nan, "drawn_default": 0, "expanded": nan, "drawn_expanded": 0}
    if "first" in parts:
        row["default"], row["drawn_default"] = min(memviz_first(browser, base) for _ in range(runs))
        row["expanded"], row["drawn_expanded"] = min(memviz_first(browser, base + "?collapsed=") for _ in range(runs))
    row["bare"] = row["bare_edit"] = row["bare_frame"] = nan
    row["click"] = row["first_click"] = row["edit"] = row["frame"] = row["frame_p95"] = nan
    if bare:
        times, page, context = [], None, None
        for _ in range(runs):
            if context:
                context.close()
            t, page, context = bare_first(browser, server, body, timeout_s=600)
            times.append(t)
        assert page is not None and context is not None  # runs >= 1
        row["bare"] = min(times)
        if len(text) < 100_000:  # the edit target is for 300 nodes; 1000 would take minutes more
            row["bare_edit"] = median([page.evaluate("benchRender(benchBody)") for _ in range(2)])
        frames = page.evaluate(ZOOM, ["bare", zoom_steps])
        row["bare_frame"] = statistics.mean(frames)
        context.close()
    if not {"click", "edit", "zoom"} & set(parts):
        return row
    context = browser.new_context(viewport=VIEWPORT)
    page = log_in(context, server, f"/a/bench/c/{name}/?collapsed=")
    if "click" in parts:
        row["clicks"] = click_panel(page)
        row["click"] = median(row["clicks"])
        row["first_click"] = row["clicks"][0] if row["clicks"] else nan
    if "edit" in parts:
        row["edits"] = edit_rerender(page, 2 if quick else 5)
        row["edit"] = median(row["edits"])
    if "zoom" in parts:
        page.evaluate("mv.canvas.setCollapsed([])")
        frames = page.evaluate(ZOOM, ["memviz", zoom_steps])
        row["frame"], row["frame_p95"] = statistics.mean(frames), p95(frames)
    context.close()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 and 300 nodes, one run (CI)")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--sizes", help="comma-separated node counts (default 40,300,1000)")
    parser.add_argument("--shapes", default="nested,flat", help="nested, flat or both")
    parser.add_argument("--only", default=",".join(ALL_PARTS), help="of " + ",".join(ALL_PARTS))
    parser.add_argument("--no-floor", action="store_true", help="skip bare mermaid (minutes on 1000 nodes)")
    args = parser.parse_args(argv)
    parts = tuple(p for p in args.only.split(",") if p in ALL_PARTS)
    if not (REPO / "staticfiles" / "staticfiles.json").is_file():
        print("no staticfiles/staticfiles.json: run `make setup` (collectstatic) first", file=sys.stderr)
        return 1
    sizes = [int(n) for n in args.sizes.split(",")] if args.sizes else [40, 300] if args.quick else [40, 300, 1000]
    load_before = os.getloadavg()[0]
    runs = args.runs or (1 if args.quick else 3)
    from playwright.sync_api import sync_playwright

    texts = canvases(sizes)
    if args.quick:  # CI keeps it working: one small nested canvas with its floor, one crowded flat one
        texts = {k: v for k, v in texts.items() if k in ("040-nested.mmd", "301-flat.mmd")}
    shapes = set(args.shapes.split(","))
    texts = {k: v for k, v in texts.items() if ("flat" if "flat" in k else "nested") in shapes}
    work = Path(tempfile.mkdtemp(prefix="memviz-render-"))
    server = Server(work, texts)
    rows = []
    started = time.perf_counter()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            for name, text in texts.items():
                n = size_of(name)
                # quick: the floors of the nested canvases only (bare mermaid is most of the time)
                bare = not args.no_floor and (not args.quick or "nested" in name)
                rows.append(measure(browser, server, name, text, runs, bare, args.quick, parts))
                print(f"  {n:>4} {'flat' if 'flat' in name else 'nested':<6} measured in {time.perf_counter() - started:.0f} s: {rows[-1]}", file=sys.stderr)
            browser.close()
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"canvas render in chromium ({'quick, ' if args.quick else ''}best of {runs} for first renders; floor = bare mermaid.js on the same text, same run;"
          f" load average {load_before:.1f} → {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, {time.perf_counter() - started:.0f} s)")
    head = f"{'canvas':<13}{'default view':>14}{'expanded':>11}{'mermaid':>10}{'ratio':>8}{'click→panel':>13}{'1st':>9}{'edit':>9}{'mermaid':>9}{'ratio':>8}{'zoom frame':>12}{'p95':>8}{'mermaid':>9}"
    print(head)
    failures = []
    for r in rows:
        n = size_of(r["name"])
        label = f"{n} {'flat' if 'flat' in r['name'] else 'nested'}"
        print(
            f"{label:<13}{fmt_ms(r['default']):>9} ({r['drawn_default']:>3}){fmt_ms(r['expanded']):>11}{fmt_ms(r['bare']):>10}{ratio(r['expanded'], r['bare']):>8}"
            f"{fmt_ms(r['click']):>13}{fmt_ms(r['first_click']):>9}{fmt_ms(r['edit']):>9}{fmt_ms(r['bare_edit']):>9}{ratio(r['edit'], r['bare_edit']):>8}"
            f"{fmt_ms(r['frame']):>12}{fmt_ms(r['frame_p95']):>8}{fmt_ms(r['bare_frame']):>9}"
        )
        if n >= 300 and max(r["default"], r["expanded"]) > TARGETS["first"]:
            failures.append(f"{label}: first render over {TARGETS['first']:.0f} ms")
        if r["click"] > TARGETS["click"]:
            failures.append(f"{label}: click → panel over {TARGETS['click']:.0f} ms")
        if r["first_click"] > TARGETS["click"]:
            failures.append(f"{label}: first click → panel over {TARGETS['click']:.0f} ms")
        if n == 300 and r["edit"] > TARGETS["edit300"]:
            failures.append(f"{label}: edit re-render over {TARGETS['edit300']:.0f} ms")
        if n >= 1000 and r["frame"] > TARGETS["frame"] * 1.1:
            failures.append(f"{label}: zoom below 60 fps")
    print("(default view: drawn nodes in brackets; expanded: every group open; 1st: the first click, as soon as the drawing is on screen)")
    print("targets: " + ("all met" if not failures else "MISSED: " + "; ".join(failures)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
