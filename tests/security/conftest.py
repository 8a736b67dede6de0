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


def _wait_for(predicate, timeout: float = 60.0, what: str = "condition"):
    """Poll ``predicate`` until it returns something true (returned), or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what} not met within {timeout} s")


@pytest.fixture
def wait_for():
    return _wait_for


@pytest.fixture
def live_helpers():
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


# --- issue 22: a real server with users, and a cookie-keeping HTTP client --------------------
class HttpSession:
    """A tiny browserless client of a live server: keeps cookies (whatever their names are)."""

    def __init__(self, base_url: str) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(base_url)
        self.base_url = base_url
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.cookies: dict[str, str] = {}
        self.set_cookie_headers: list[str] = []

    def request(
        self, method: str, path: str, body: bytes | str | None = None, headers=None, timeout=30
    ):
        import http.client
        from http.cookies import SimpleCookie

        all_headers = dict(headers or {})
        if self.cookies:
            all_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            connection.request(method, path, body=body, headers=all_headers)
            response = connection.getresponse()
            response.body = response.read()  # type: ignore[attr-defined]
        finally:
            connection.close()
        for header in response.headers.get_all("Set-Cookie") or []:
            self.set_cookie_headers.append(header)
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        return response

    def cookie(self, suffix: str) -> tuple[str, str]:
        """(name, value) of the cookie whose name ends with ``suffix`` (names carry the port)."""
        return next((k, v) for k, v in self.cookies.items() if k.endswith(suffix))

    def post_form(self, path: str, fields: dict[str, str]):
        import re
        from urllib.parse import urlencode

        page = self.request("GET", path)
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.body)
        csrf = token.group(1).decode() if token else self.cookie("csrftoken")[1]
        return self.request(
            "POST",
            path,
            body=urlencode({"csrfmiddlewaretoken": csrf, **fields}),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Origin": self.base_url,
                "Referer": self.base_url + path,
            },
        )

    def login(self, username: str, password: str) -> int:
        return self.post_form("/login/", {"username": username, "password": password}).status


@pytest.fixture
def served(tmp_path: Path, fixtures_root: Path):
    """``served(users=[(name, password, staff)], data_root=…, **env)``: `manage.py run` on a free
    port, with those users created first; returns the live Server (``.env``, ``.var``)."""
    servers: list = []

    def start(users=(), data_root: Path | None = None, watch: bool = False, **env: str):
        var = tmp_path / f"var-served{len(servers)}"
        if data_root is None:
            data_root = tmp_path / f"root-served{len(servers)}"
            data_root.mkdir()
            shutil.copytree(fixtures_root / "fixture-a-upstream" / "main", data_root / "main")
        full_env = live.server_env(var, data_root, **env)
        if users:
            live.run_manage(full_env, "migrate", "-v", "0")
            script = "from django.contrib.auth.models import User\n" + "".join(
                f"User.objects.create_user({n!r}, password={p!r}, is_staff={s!r})\n"
                for n, p, s in users
            )
            live.run_manage(full_env, "shell", "-c", script)
        port = live.free_port()
        args = ["run", "--no-worker", "--port", str(port)] + ([] if watch else ["--no-watch"])
        server = live.Server(full_env, port, tmp_path / f"served{len(servers)}.log", args)
        server.env, server.var = full_env, var
        servers.append(server)
        try:
            live.wait_port(port, timeout=90, proc=server.proc)
        except Exception:
            print(server.log.read_text())
            raise
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def http_session():
    """``http_session(server)``: a cookie-keeping client of that live server."""
    return lambda server: HttpSession(server.url)
