"""A real memviz cluster under load, for the concurrency tests and `bench_concurrency.py`.

Two web servers (`manage.py run --no-worker --no-watch`) and a watcher (`manage.py watch`) share
one database — SQLite in a temp folder, or a fresh PostgreSQL database created on the server at
`MEMVIZ_TEST_POSTGRES_URL` — and one data root holding a copy of fixture A's agent `main`. An
agent thread appends rows (each with its ref, as the plugin writes them); HTTP clients read pages
and post edits with a signed-in session and the CSRF token, as a browser would.
"""

from __future__ import annotations

import contextlib
import http.client
import http.cookiejar
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "roots" / "fixture-a-upstream" / "main"
SESSION = "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90"
CANVAS = "002-migrate-orders-api.mmd"
USER, PASSWORD = "loadtester", "load-test-pw-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on {port}")


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


@contextlib.contextmanager
def postgres_database(server_url: str):
    """A fresh, empty database on the server of `server_url`; dropped afterwards."""
    import psycopg

    parts = urllib.parse.urlsplit(server_url)
    admin = urllib.parse.urlunsplit(parts._replace(path="/postgres"))
    name = f"memviz_load_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Cluster:
    """`servers` web processes + one watcher on one database and one data root."""

    def __init__(self, work: Path, *, database_url: str | None = None, servers: int = 2) -> None:
        self.work = work
        self.root = work / "root"
        self.agent_dir = self.root / "main"
        shutil.copytree(FIXTURE, self.agent_dir)
        old = time.time() - 86_400  # fixture files are old: the agent is not "live" at start
        for path in self.agent_dir.rglob("*"):
            os.utime(path, (old, old))
        var = work / "var"
        var.mkdir()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "REDIS_URL"))}
        self.env.pop("DATABASE_URL", None)
        self.env.update(
            DJANGO_SETTINGS_MODULE="memviz.settings",
            MEMVIZ_VAR_DIR=str(var),
            MEMVIZ_DATA_ROOT=str(self.root),
            MEMVIZ_PUSH_ROOT=str(work / "pushed"),
            MEMVIZ_ANONYMOUS_VIEW="1",
            MEMVIZ_LOG_LEVEL="WARNING",
            PYTHONUNBUFFERED="1",
        )
        if database_url:
            self.env["DATABASE_URL"] = database_url
        self.procs: list[subprocess.Popen] = []
        self.names: list[str] = []
        self.logs: list[Path] = []
        self.ports: list[int] = []
        self._manage("migrate", "--verbosity", "0")
        self._manage(
            "shell",
            "-c",
            f"from django.contrib.auth.models import User; User.objects.create_user({USER!r}, password={PASSWORD!r})",
        )
        for index in range(servers):
            port = free_port()
            proc = self._start(f"server{index}", "run", "--no-worker", "--no-watch", "--port", str(port))
            wait_port(port, proc)
            self.ports.append(port)
        self._start("watcher", "watch", str(self.root))

    def _manage(self, *args: str) -> None:
        subprocess.run(
            [sys.executable, "manage.py", *args], cwd=REPO, env=self.env, check=True,
            capture_output=True, timeout=300,
        )

    def _start(self, name: str, *args: str) -> subprocess.Popen:
        log = self.work / f"{name}.log"
        proc = subprocess.Popen(
            [sys.executable, "manage.py", *args], cwd=REPO, env=self.env,
            stdout=log.open("w"), stderr=subprocess.STDOUT,
        )
        self.procs.append(proc)
        self.names.append(name)
        self.logs.append(log)
        return proc

    def cpu_seconds(self) -> dict[str, float]:
        """CPU time (user + system) each process has used so far, and this client process's."""
        tick = os.sysconf("SC_CLK_TCK")
        used: dict[str, float] = {}
        for name, proc in zip(self.names, self.procs, strict=True):
            try:
                fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            used[name] = (int(fields[11]) + int(fields[12])) / tick
        times = os.times()
        used["client"] = times.user + times.system
        return used

    def urls(self) -> list[str]:
        return [f"http://127.0.0.1:{port}" for port in self.ports]

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(
            f"--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
            for log in self.logs
        )


@dataclass
class Answer:
    status: int
    seconds: float
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body)


class Browser:
    """One user agent: cookies, the CSRF token, a signed-in session if asked."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect()
        )

    def request(self, method: str, path: str, data: bytes | None = None, headers: dict | None = None) -> Answer:
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers or {})
        started = time.perf_counter()
        try:
            with self.opener.open(req, timeout=60) as response:
                body = response.read()
                return Answer(response.status, time.perf_counter() - started, body)
        except urllib.error.HTTPError as error:
            return Answer(error.code, time.perf_counter() - started, error.read())
        except (OSError, http.client.HTTPException):
            return Answer(599, time.perf_counter() - started)  # connection failure

    def get(self, path: str) -> Answer:
        return self.request("GET", path)

    def csrf(self) -> str:
        for _ in range(2):  # a page first sets the cookie
            for cookie in self.jar:
                if cookie.name.endswith("csrftoken") and cookie.value:  # memviz<port>_csrftoken
                    return cookie.value
            self.get("/login/")
        raise RuntimeError("no CSRF cookie after /login/")

    def login(self, user: str = USER, password: str = PASSWORD) -> None:
        token = self.csrf()
        body = urllib.parse.urlencode(
            {"username": user, "password": password, "csrfmiddlewaretoken": token}
        ).encode()
        answer = self.request(
            "POST", "/login/", body,
            {"Content-Type": "application/x-www-form-urlencoded", "Referer": self.base + "/login/"},
        )
        if answer.status != 302:
            raise RuntimeError(f"login failed: {answer.status} {answer.body[:200]!r}")

    def upload(self, archive: bytes, filename: str) -> Answer:
        """POST /upload/?format=json as the home page's form sends it (multipart, CSRF)."""
        boundary = "memvizuploadboundary"
        head = (
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"archive\"; filename=\"{filename}\"\r\n"
            "Content-Type: application/zip\r\n\r\n"
        )
        body = head.encode() + archive + f"\r\n--{boundary}--\r\n".encode()
        headers = {
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "X-CSRFToken": self.csrf(),
            "Referer": self.base + "/",
        }
        return self.request("POST", "/upload/?format=json", body, headers)

    def post_json(self, path: str, payload: dict) -> Answer:
        return self.request(
            "POST", path, json.dumps(payload).encode(),
            {"Content-Type": "application/json", "X-CSRFToken": self.csrf(), "Referer": self.base + "/"},
        )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Appender(threading.Thread):
    """The agent: each tool call writes its ref, then appends its row (`rate` per second)."""

    def __init__(self, agent_dir: Path, rate: float, first: int = 0) -> None:
        super().__init__(daemon=True)
        self.agent_dir, self.rate = agent_dir, rate
        self.stop_event = threading.Event()
        self.first = first  # number of the first call: rows of an earlier appender are kept apart
        self.written = 0
        self.times: list[float] = []  # when each row was appended (monotonic)

    def write_one(self) -> None:
        n = self.first + self.written
        stamp = f"2026-12-01T10-{n // 3600 % 60:02d}-{n // 60 % 60:02d}-{n % 1000:03d}p08-00-{n}"
        ref = self.agent_dir / "refs" / f"{stamp}.md"
        ref.write_text(f"# Tool Result: exec\n\n**Call ID:** load_{n}\n\n**Result:**\n```\nok {n}\n```")
        row = {
            "tool_call_id": f"load_{n}", "tool_call": "exec: load", "summary": f"row {n}",
            "timestamp": "2026-12-01T10:00:00.000+08:00", "score": 5, "node_id": None,
            "result_ref": f"refs/{stamp}.md",
        }
        with open(self.agent_dir / f"offload-{SESSION}.jsonl", "ab") as handle:
            handle.write((json.dumps(row) + "\n").encode())
        self.times.append(time.monotonic())
        self.written += 1

    def run(self) -> None:
        interval = 1 / self.rate
        next_at = time.monotonic()
        while not self.stop_event.is_set():
            self.write_one()
            next_at += interval
            self.stop_event.wait(max(0.0, next_at - time.monotonic()))

    def stop(self) -> None:
        self.stop_event.set()
        self.join(timeout=5)


READ_PATHS = [
    f"/a/main/c/{CANVAS}/",
    f"/a/main/c/{CANVAS}/?format=json",
    f"/a/main/c/{CANVAS}/n/002-N2/",
    "/a/main/",
    f"/a/main/s/{SESSION}/",
    "/",
]


@dataclass
class Readings:
    answers: list[tuple[str, Answer]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds per process in the phase
    wall: float = 0.0
    lags: list[float] = field(default_factory=list)  # index lag samples (bench_concurrency)

    def add(self, path: str, answer: Answer) -> None:
        with self.lock:
            self.answers.append((path, answer))

    def seconds(self) -> list[float]:
        return [a.seconds for _, a in self.answers]

    def errors(self) -> list[tuple[str, int]]:
        return [(p, a.status) for p, a in self.answers if a.status >= 500]


def readers(urls: list[str], count: int, until: float, readings: Readings) -> list[threading.Thread]:
    """`count` reader threads, round-robin over the servers and READ_PATHS until `until`."""

    def loop(index: int) -> None:
        browser = Browser(urls[index % len(urls)])
        k = index
        while time.monotonic() < until:
            path = READ_PATHS[k % len(READ_PATHS)]
            readings.add(path, browser.get(path))
            k += 1

    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    return threads
