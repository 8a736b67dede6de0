"""Take the README's screenshots from the running app on the bundled demo data root.

Usage: .venv/bin/python scripts/screenshots.py  (needs /usr/bin/chromium and `make setup`)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "docs" / "screenshots"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> int:
    var = Path(tempfile.mkdtemp(prefix="memviz-shots-"))
    env = {
        **os.environ,
        "MEMVIZ_VAR_DIR": str(var),
        "MEMVIZ_DATA_ROOT": str(REPO / "demo" / "context-offload"),
    }
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "-v0"], cwd=REPO, env=env, check=True)
    subprocess.run(
        [python, "manage.py", "ingest"], cwd=REPO, env=env, check=True, stderr=subprocess.DEVNULL
    )
    port = free_port()
    server = subprocess.Popen(
        [python, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "memviz.asgi:application"],
        cwd=REPO,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        OUT.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(base + "/")
            page.screenshot(path=str(OUT / "home.png"))
            slugs = page.locator("table.agents tbody tr td:first-child > a").all_inner_texts()
            agent = "main" if "main" in slugs else slugs[0]
            page.goto(f"{base}/a/{agent}/")
            page.screenshot(path=str(OUT / "agent.png"))
            page.locator("table.grid").nth(1).locator("tbody tr a").first.click()
            page.wait_for_load_state()
            page.screenshot(path=str(OUT / "session.png"))
            page.goto(f"{base}/a/{agent}/")
            page.locator("tr.active a").first.click()
            page.wait_for_function("() => document.body.dataset.canvasRendered", timeout=20000)
            nodes = page.locator(".mermaid-host svg g.node")
            nodes.nth(min(1, nodes.count() - 1)).click()
            page.locator("#node-panel .node-detail").wait_for(timeout=10000)
            details = page.locator("#node-panel details.ref")
            if details.count():
                details.first.locator("summary").click()
                page.locator("#node-panel .ref-view").first.wait_for(timeout=10000)
            page.screenshot(path=str(OUT / "canvas-node-ref.png"))
            page.goto(f"{base}/search/?q=test")
            page.screenshot(path=str(OUT / "search.png"))
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"screenshots written to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
