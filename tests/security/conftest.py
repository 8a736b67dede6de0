"""Fixtures of the security tests: a hostile data root, and the live-server helpers of tests/live."""

from __future__ import annotations

import importlib.util
import json
import shutil
import time
from pathlib import Path

import pytest

_LIVE = Path(__file__).resolve().parents[1] / "live" / "conftest.py"
_spec = importlib.util.spec_from_file_location("memviz_live_helpers", _LIVE)
assert _spec is not None and _spec.loader is not None
live = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(live)

# The same fixtures as tests/live (a real `manage.py run` on a free port, commands in processes).
run_server = live.run_server
manage = live.manage


def _wait_for(predicate, timeout: float = 60.0, what: str = "condition"):  # type: ignore[no-untyped-def]
    """Poll ``predicate`` until it returns something true (returned), or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what} not met within {timeout} s")


@pytest.fixture
def wait_for():  # type: ignore[no-untyped-def]
    return _wait_for


@pytest.fixture
def live_helpers():  # type: ignore[no-untyped-def]
    """tests/live/conftest.py as a module: free_port, wait_port, server_env, Server, run_manage."""
    return live


EVIL = "evil.example"
SESSION = "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90"
HOSTILE_CANVAS = "003-hostile.mmd"
HOSTILE_REF = "2026-06-12T10-00-00-000p08-00.md"
# Each payload names its own URL, so a request that leaks tells which one got through.
HOSTILE_MMD = f"""%%{{ "taskGoal": "<img src=http://{EVIL}/goal.png>", "progress": 40 }}%%
---
config:
  securityLevel: loose
---
flowchart TD
    %%{{init: {{"securityLevel": "loose", "flowchart": {{"htmlLabels": true}}}}}}%%
    003-N1["<img src='http://{EVIL}/n1.png'> hostile one<br/>status: done<br/>summary: <b>bold</b>"]
    003-N2[<a href="http://{EVIL}/n2">click me</a>]
    003-N3("<svg><image href='http://{EVIL}/n3.svg'/></svg>")
    003-N4{{"<details open><summary>open</summary><img src=http://{EVIL}/n4.png></details>"}}
    003-N5["#lt;img src=http://{EVIL}/n5.png#gt; and &lt;img src=http://{EVIL}/n5b.png&gt;"]
    003-N6@{{ shape: image, img: "http://{EVIL}/n6.png", label: "image shape" }}
    003-N7["%%{{init: {{'securityLevel':'loose'}}}}%% plain"]
    subgraph s1 ["<img src=http://{EVIL}/sub.png> group"]
        003-N8["inside<br/>status: doing"]
    end
    003-N1 -->|"<img src=http://{EVIL}/edge.png>"| 003-N2
    003-N2 -- <a href=http://{EVIL}/edge2>x</a> --> 003-N3
    003-N3 --> 003-N4 --> 003-N5 --> 003-N6 --> 003-N7 --> 003-N8
    click 003-N1 href "http://{EVIL}/click"
    click 003-N2 call alert(1)
    style 003-N3 fill:url(http://{EVIL}/style.png)
    classDef evil background:url(http://{EVIL}/classdef.png)
    class 003-N4 evil
    linkStyle 0 stroke:url(http://{EVIL}/linkstyle.png)
"""
HOSTILE_TEXT = f"<img src=http://{EVIL}/row.png><script>alert(1)</script>"


def hostile_rows() -> list[dict]:
    return [
        {
            "tool_call_id": f"call_hostile_{k}",
            "tool_call": f"exec: {HOSTILE_TEXT}",
            "summary": f"summary {k} {HOSTILE_TEXT} [x](javascript:alert(1))",
            "timestamp": "2026-06-12T10:00:00.000+08:00",
            "score": 5,
            "node_id": f"003-N{k}",
            "result_ref": f"refs/{HOSTILE_REF}",
            f"<img src=http://{EVIL}/key.png>": HOSTILE_TEXT,
        }
        for k in range(1, 4)
    ]


HOSTILE_REF_TEXT = f"""# Tool Result: <img src=http://{EVIL}/title.png>

**Timestamp:** 2026-06-12T10:00:00.000+08:00

---

**Tool:** exec ![x](http://{EVIL}/md.png)
**Call ID:** call_hostile_1 <iframe src="http://{EVIL}/frame"></iframe>

**Result:**
```
<img src=http://{EVIL}/result.png>
<style>@import url(http://{EVIL}/css);</style>
<script src=http://{EVIL}/s.js></script>
```"""


def build_hostile_root(base: Path, fixtures_root: Path) -> Path:
    """Fixture A's agent `main`, plus a canvas, rows and a ref full of hostile markup."""
    root = base / "hostile-root"
    root.mkdir()
    agent = root / "main"
    shutil.copytree(fixtures_root / "fixture-a-upstream" / "main", agent)
    (agent / "mmds" / HOSTILE_CANVAS).write_text(HOSTILE_MMD, encoding="utf-8")
    with open(agent / f"offload-{SESSION}.jsonl", "a", encoding="utf-8") as handle:
        for row in hostile_rows():
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    (agent / "refs" / HOSTILE_REF).write_text(HOSTILE_REF_TEXT, encoding="utf-8")
    return root


@pytest.fixture
def hostile_root(tmp_path: Path, fixtures_root: Path) -> Path:
    return build_hostile_root(tmp_path, fixtures_root)


class Hostile:
    """The names the tests look for (conftest modules are not importable under importlib)."""

    evil = EVIL
    session = SESSION
    canvas = HOSTILE_CANVAS
    ref = HOSTILE_REF
    mmd = HOSTILE_MMD
    rows = staticmethod(hostile_rows)


@pytest.fixture
def hostile() -> type[Hostile]:
    return Hostile
