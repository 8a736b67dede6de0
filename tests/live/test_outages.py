"""Issue 20: outages fail fast and heal.

PostgreSQL stopped under a running `run`: every request (JSON, HTML, the login form) answers 503
with a clear message within 3 s (it hung 20 s, then a generic 500); restarted, requests work
again and rows appended during the outage are indexed (the watcher dropped them). Redis stopped:
`POST /ingest/` answers 503 within 3 s (500 after 19 s); back, it queues again.
Each test starts its own server (it is stopped mid-test), as scripts/run_tests.sh does.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live.conftest import REPO, free_port, server_env, wait_port
from tests.live.test_topology import Procs, append_rows, rows_of, small_agent, until

pytestmark = [pytest.mark.slow]
PG_BINS = sorted(Path("/usr/lib/postgresql").glob("*/bin"))


class OwnPostgres:
    """A throw-away cluster owned by the postgres user (it refuses to run as root)."""

    def __init__(self, tmp: Path) -> None:
        if os.geteuid() != 0 or not PG_BINS or shutil.which("su") is None:
            pytest.skip("needs root and Debian's postgresql to start a cluster of its own")
        self.bin = PG_BINS[-1]
        # pytest's own folders are 0700 (root's): the postgres user could not enter them.
        self.dir = Path(tempfile.mkdtemp(prefix="memviz-outage-pg-"))
        self.dir.chmod(0o700)
        self.port = free_port()
        shutil.chown(self.dir, "postgres")
        self._as_postgres(f"{self.bin}/initdb -D {self.dir} -A trust -U postgres >/dev/null")
        self.start()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/memviz_outage"
        admin = f"postgres://postgres@127.0.0.1:{self.port}/postgres"
        import psycopg

        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("CREATE DATABASE memviz_outage")

    def _as_postgres(self, command: str) -> None:
        subprocess.run(["su", "postgres", "-s", "/bin/sh", "-c", command], check=True, timeout=60)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = self.dir / "server.log"
        self._as_postgres(f"{self.bin}/pg_ctl -D {self.dir} -o '{options}' -l {log} -w start >/dev/null")

    def stop(self) -> None:
        self._as_postgres(f"{self.bin}/pg_ctl -D {self.dir} -m fast -w stop >/dev/null")


@pytest.fixture
def own_postgres(tmp_path: Path) -> Iterator[OwnPostgres]:
    server = OwnPostgres(tmp_path)
    yield server
    subprocess.run(
        ["su", "postgres", "-s", "/bin/sh", "-c", f"{server.bin}/pg_ctl -D {server.dir} -m immediate stop"],
        capture_output=True,
        timeout=60,
    )
    shutil.rmtree(server.dir, ignore_errors=True)


def timed(request: urllib.request.Request | str, opener=None) -> tuple[int, float, bytes]:
    started = time.monotonic()
    try:
        with (opener or urllib.request.build_opener()).open(request, timeout=30) as answer:
            status, body = answer.status, answer.read()
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read()
    return status, time.monotonic() - started, body


def login_form(opener, base: str, user: str, password: str) -> urllib.request.Request:
    """The login POST as a browser sends it (CSRF cookie and token from the form page)."""
    page = opener.open(f"{base}/login/", timeout=10).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    body = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": token, "username": user, "password": password}
    ).encode()
    return urllib.request.Request(f"{base}/login/", data=body, headers={"Referer": base + "/"})


def signed_in(base: str, user: str, password: str):
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    opener.open(login_form(opener, base, user, password), timeout=10).read()
    return opener


def csrf_post(opener, base: str, path: str) -> urllib.request.Request:
    jar = next(h for h in opener.handlers if isinstance(h, urllib.request.HTTPCookieProcessor))
    token = next(c.value for c in jar.cookiejar if c.name.endswith("csrftoken"))  # memviz<port>_csrftoken
    assert token is not None
    return urllib.request.Request(
        f"{base}{path}", data=b"", headers={"X-CSRFToken": token, "Referer": base + "/"}
    )


def make_user(env: dict[str, str]) -> None:
    code = "from django.contrib.auth.models import User; User.objects.create_user('ana', password='pw-123456')"
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code], cwd=REPO, env=env, check=True, timeout=120
    )


def started(tmp: Path, extra: dict[str, str], *args: str) -> tuple[Procs, subprocess.Popen, int]:
    """`run` on the data root ``tmp/root`` with a user ana, once it has indexed the agent."""
    var = tmp / "var"
    var.mkdir()
    group = Procs(tmp, server_env(var, tmp / "root", **extra))
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO, env=group.env, check=True
    )
    make_user(group.env)
    port = free_port()
    web = group.start("run", "run", "--no-worker", "--port", str(port), *args)
    until("the first rows", lambda: rows_of(port, "small") == 5, 60, web.log)  # type: ignore[attr-defined]
    return group, web, port


def test_postgres_outage_answers_503_at_once_and_heals(
    tmp_path: Path, own_postgres: OwnPostgres
) -> None:
    agent = small_agent(tmp_path / "root")
    group, web, port = started(tmp_path, {"DATABASE_URL": own_postgres.url})
    base = f"http://127.0.0.1:{port}"
    try:
        opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        login = login_form(opener, base, "ana", "pw-123456")
        own_postgres.stop()
        for what, request in [
            ("home JSON", f"{base}/?format=json"),
            ("home", f"{base}/"),
            ("agent JSON", f"{base}/a/small/?format=json"),
            ("session page", f"{base}/a/small/s/s1/"),
        ]:
            status, seconds, body = timed(request)
            assert status == 503 and seconds < 3, (what, status, seconds, body[:300])
            if "json" in what.lower():
                assert "database is not answering" in json.loads(body)["error"]
            else:
                assert b"database is not answering" in body
        status, seconds, body = timed(login, opener)
        assert status == 503 and seconds < 3, ("login", status, seconds, body[:300])
        append_rows(agent, "outage", 4)
        time.sleep(2)  # the watcher sees the appends while the database is down
        own_postgres.start()
        until("pages again", lambda: timed(f"{base}/?format=json")[0] == 200, 20, web.log)  # type: ignore[attr-defined]
        until("the rows appended in the outage", lambda: rows_of(port, "small") == 9, 30, web.log)  # type: ignore[attr-defined]
        status, _, _ = timed(login_form(opener, base, "ana", "pw-123456"), opener)
        assert status == 200  # signed in (the redirect followed to the home page)
    finally:
        group.stop()


@pytest.fixture
def own_redis() -> Iterator[list]:
    if shutil.which("redis-server") is None:
        pytest.skip("no redis-server")
    port = free_port()
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    procs = [subprocess.Popen(command, stdout=subprocess.DEVNULL)]
    wait_port(port, proc=procs[0])
    procs.append(command)  # type: ignore[arg-type]
    yield procs
    for proc in procs:
        if isinstance(proc, subprocess.Popen) and proc.poll() is None:
            proc.terminate()
            proc.wait(10)


async def live_ready(port: int, slug: str = "small") -> bool:
    """Does an agent page's websocket open and say live.ready (within 10 s)?"""
    import websockets
    from websockets.typing import Origin

    url, origin = f"ws://127.0.0.1:{port}/ws/live/{slug}/", f"http://127.0.0.1:{port}"
    try:
        async with websockets.connect(url, origin=Origin(origin), open_timeout=10) as ws:
            hello = json.loads(await asyncio.wait_for(ws.recv(), 10))
    except (OSError, TimeoutError, websockets.exceptions.WebSocketException):
        return False
    return hello.get("type") == "live.ready"


def test_redis_outage_answers_503_at_once_for_an_ingest(tmp_path: Path, own_redis: list) -> None:
    redis, command = own_redis
    url = f"redis://127.0.0.1:{command[2]}/0"
    small_agent(tmp_path / "root")
    group, web, port = started(tmp_path, {"REDIS_URL": url}, "--no-watch")
    base = f"http://127.0.0.1:{port}"
    try:
        opener = signed_in(base, "ana", "pw-123456")
        redis.terminate()
        redis.wait(10)
        status, seconds, body = timed(csrf_post(opener, base, "/ingest/?format=json"), opener)
        assert status == 503 and seconds < 3, (status, seconds, body[:300])
        assert "task queue" in json.loads(body)["error"]
        asked = time.monotonic()
        assert asyncio.run(live_ready(port)) is False  # refused, so the page reconnects
        assert time.monotonic() - asked < 5
        own_redis.append(subprocess.Popen(command, stdout=subprocess.DEVNULL))
        wait_port(int(command[2]), proc=own_redis[-1])
        status, _, body = until(
            "an ingest queued again",
            lambda: (a := timed(csrf_post(opener, base, "/ingest/?format=json"), opener))[0] == 202
            and a,
            20,
            web.log,  # type: ignore[attr-defined]
        )
        assert json.loads(body)["status"] == "pending"
        assert asyncio.run(live_ready(port)) is True
        # the outage was told in a line, not a traceback per refused socket or request
        log = web.log.read_text()  # type: ignore[attr-defined]
        assert "Traceback" not in log and "unavailable" in log, log[-3000:]
    finally:
        group.stop()
