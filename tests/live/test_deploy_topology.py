"""docs/deploy.md as written: PostgreSQL, Redis, two `make web` and two `make worker` processes on
loopback, as two "machines" (each its own var/, sharing only the data root and MEMVIZ_SHARED_DIR),
on an agent of 20,000 rows. Checks what a team relies on: a login and an edit made through one web
process hold on the other; uploads through either are indexed and readable through both; an
agent pushed through one and then the other is one agent with every row; a worker
killed with kill -9 mid-job has its job finished by the other; a web process killed with kill -9
in the middle of a merge (its canvas renamed into place, the rows not yet) has the merge finished
from the shared journal by the others, recorded as the person's, with a clean history and undo.
Then the outages of docs/deploy.md, in this same topology: Redis restarted (a job asked for
meanwhile answers 503 through either web process, pages still read, websockets are refused; back,
uploads through either process are done by the workers, which reconnect by themselves, and the
refused jobs too) and PostgreSQL restarted (every page 503 at once; rows appended meanwhile are
indexed once it is back, edits and jobs work again).
PostgreSQL pass only (CI's second); the test runs a cluster of its own (it stops and starts it).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import pytest

from tests.live.conftest import REPO, free_port, wait_port
from tests.live.test_outages import OwnPostgres, live_ready
from tests.live.test_topology import append_rows, big_agent, small_agent, until

sys.path.insert(0, str(REPO / "bench"))
from load import Answer, Browser  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.database]
ROWS = 20_000


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[dict]:
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        pytest.skip("the deploy guide's topology runs on PostgreSQL (CI's second pass)")
    if shutil.which("make") is None or not (REPO / ".venv" / "bin" / "celery").exists():
        pytest.skip("needs make and the .venv of `make setup`")
    if shutil.which("redis-server") is None:
        pytest.skip("no redis-server")
    postgres = OwnPostgres(tmp_path)  # skips unless root with Debian's postgresql
    redis = RedisServer()
    root = tmp_path / "root"
    try:
        big_agent(root)
        redis.start()
        base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "MEMVIZ_"))}
        base.update(
            DATABASE_URL=postgres.url,
            REDIS_URL=f"redis://127.0.0.1:{redis.port}/0",
            MEMVIZ_DATA_ROOT=str(root),
            MEMVIZ_SHARED_DIR=str(tmp_path / "shared"),
            MEMVIZ_SECRET_KEY="a-test-key-shared-by-every-process-of-this-deployment",
            MEMVIZ_COOKIE_PORT="8000",  # the test plays a plain-HTTP proxy on one port
            MEMVIZ_LOG_LEVEL="WARNING",
            MEMVIZ_JOB_HEARTBEAT_SECONDS="0.5",
            MEMVIZ_JOB_STALE_SECONDS="4",
            PYTHONUNBUFFERED="1",
        )
        procs: list[subprocess.Popen] = []
        hold = tmp_path / "hold"

        def machine(n: int) -> dict[str, str]:
            return {**base, "MEMVIZ_VAR_DIR": str(tmp_path / f"var{n}")}

        def make(name: str, env: dict[str, str], *args: str) -> subprocess.Popen:
            proc = subprocess.Popen(
                ["make", "--no-print-directory", *args],
                cwd=REPO,
                env=env,
                stdout=(tmp_path / f"{name}.log").open("w"),
                stderr=subprocess.STDOUT,
                start_new_session=True,  # the whole group is stopped at the end
            )
            procs.append(proc)
            return proc

        subprocess.run(["make", "migrate"], cwd=REPO, env=machine(1), check=True, capture_output=True)
        code = "from django.contrib.auth.models import User; User.objects.create_user('ana', password='pw-123456')"
        subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", code], cwd=REPO, env=machine(1), check=True
        )
        ports = [free_port(), free_port()]
        for n, port in enumerate(ports, 1):
            make(f"web{n}", machine(n), "web", f"PORT={port}")
        for n in (1, 2):  # the workers hold a claimed job while the hold file exists
            make(f"worker{n}", {**machine(n), "MEMVIZ_TEST_HOLD_FILE": str(hold)}, "worker", f"NAME=w{n}")
        logs = sorted(tmp_path.glob("*.log"))

        def third_web(**extra: str) -> tuple[subprocess.Popen, int, Path]:
            """A third machine's `make web`, with extra settings (e.g. a crash-test point)."""
            port = free_port()
            proc = make("web3", {**machine(3), **extra}, "web", f"PORT={port}")
            wait_port(port, timeout=90)
            return proc, port, tmp_path / "web3.log"

        try:
            for port in ports:
                wait_port(port, timeout=90)
            yield {
                "ports": ports, "root": root, "hold": hold, "logs": logs, "env": machine(1),
                "third_web": third_web, "tmp": tmp_path, "redis": redis, "postgres": postgres,
            }
        finally:
            for proc in procs:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
            for proc in procs:
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
    finally:
        redis.stop()
        stop = f"{postgres.bin}/pg_ctl -D {postgres.dir} -m immediate stop"
        subprocess.run(["su", "postgres", "-s", "/bin/sh", "-c", stop], capture_output=True, timeout=60)
        shutil.rmtree(postgres.dir, ignore_errors=True)


class RedisServer:
    """redis-server on loopback, stopped and started again on the same port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.command = [
            "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no",
        ]
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(self.command, stdout=subprocess.DEVNULL)
        wait_port(self.port, proc=self.proc)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def agent_rows(browser: Browser, slug: str) -> int:
    agents = browser.get("/?format=json").json()["agents"]
    return next((a["rows"] for a in agents if a["slug"] == slug), 0)


def upload(browser: Browser, name: str, source: Path) -> int:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(source.rglob("*")):
            if path.is_file():
                archive.write(path, f"{name}/{path.relative_to(source).as_posix()}")
    answer = browser.upload(buffer.getvalue(), f"{name}.zip")
    assert answer.status == 202, answer.body[:300]
    return answer.json()["id"]


def post_ingest(browser: Browser) -> Answer:
    """The home page's Re-ingest button (signed in, with the CSRF token)."""
    headers = {"X-CSRFToken": browser.csrf(), "Referer": browser.base + "/"}
    return browser.request("POST", "/ingest/?format=json", b"", headers)


def workers_answering(env: dict[str, str]) -> list[str]:
    """The workers that answer a ping through the broker (`make worker NAME=w1` and `w2`)."""
    host = socket.gethostname()
    ping = [
        str(REPO / ".venv" / "bin" / "celery"), "-A", "memviz", "inspect", "ping",
        "-d", f"w1@{host},w2@{host}", "--timeout", "3", "--json",
    ]
    out = subprocess.run(ping, cwd=REPO, env=env, capture_output=True, text=True, timeout=60).stdout
    return sorted(json.loads(out.strip().splitlines()[-1])) if out.strip() else []


def job_of(browser: Browser, job_id: int) -> dict:
    return browser.get(f"/jobs/{job_id}/?format=json").json()["job"]


def job_done(browser: Browser, job_id: int) -> bool:
    return job_of(browser, job_id)["status"] == "done"


def has_rows(browser: Browser, slug: str, rows: int) -> bool:
    return agent_rows(browser, slug) == rows


def job_worker_pid(database_url: str, job_id: int) -> int:
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute("SELECT worker FROM agent_sessions_ingestjob WHERE id = %s", [job_id])
        found = row.fetchone()
        assert found is not None, f"no job {job_id}"
        return int(found[0].rpartition(":")[2])


def test_the_deploy_guide_topology(deployment: dict) -> None:
    url1, url2 = (f"http://127.0.0.1:{port}" for port in deployment["ports"])
    logs = deployment["logs"]
    one, two = Browser(url1), Browser(url2)
    until("the first ingest, on both", lambda: agent_rows(one, "big") == ROWS, 180, *logs)
    assert agent_rows(two, "big") == ROWS

    # One person behind a proxy that sends each request to either process: signed in on one,
    # signed in on the other (one secret key); an edit through either is what the other shows.
    one.login("ana", "pw-123456")
    two.jar, two.opener = one.jar, one.opener
    canvas = "/a/big/c/001-task.mmd/"
    base = two.get(canvas + "?format=json").json()["content_hash"]
    for n, (through, other) in enumerate([(one, two), (two, one)]):
        edit = through.post_json(
            canvas + "ops/?format=json",
            {"op": "annotate", "node": "001-N1", "text": f"through web {n + 1}", "base": base},
        )
        assert edit.status == 200, edit.body[:300]
        base = edit.json()["hash"]
        assert other.get(canvas + "?format=json").json()["content_hash"] == base

    # Two people at once, one through each process, on the same node from the same base: one
    # edit lands, the other is refused with the reason (409), never both written or one lost.
    def annotate(through: Browser, text: str, out: list) -> None:
        payload = {"op": "annotate", "node": "001-N4", "text": text, "base": base}
        out.append((text, through.post_json(canvas + "ops/?format=json", payload)))

    answers: list = []
    racing = [
        threading.Thread(target=annotate, args=(b, f"race {i}", answers)) for i, b in enumerate((one, two))
    ]
    for thread in racing:
        thread.start()
    for thread in racing:
        thread.join(60)
    assert sorted(a.status for _, a in answers) == [200, 409], [(t, a.status, a.body[:200]) for t, a in answers]
    won = next(t for t, a in answers if a.status == 200)
    lost = next(a for _, a in answers if a.status == 409)
    assert lost.json()["conflict"] is True and lost.json()["error"]
    node = next(n for n in two.get(canvas + "?format=json").json()["nodes"] if n["id"] == "001-N4")
    assert node["extra"]["note"] == won, node
    base = one.get(canvas + "?format=json").json()["content_hash"]

    # Uploads through either process: stored in the shared folder, indexed by a worker on
    # either "machine", read through the other process.
    for n, (through, other) in enumerate([(one, two), (two, one)]):
        job = upload(through, f"up{n}", deployment["root"] / "big")
        until(f"upload {n}", partial(job_done, through, job), 120, *logs)
        (slug,) = job_of(through, job)["report"]["agents"]  # the name plus its path's hash
        assert agent_rows(other, slug) == ROWS
        session = other.get(f"/a/{slug}/?format=json").json()["sessions"][0]["id"]
        assert other.get(f"/a/{slug}/s/{session}/?format=json").status == 200

    # kill -9 of the worker process running a job: the job is run again and finishes.
    hold = deployment["hold"]
    hold.touch()
    job = upload(one, "killed", deployment["root"] / "big")
    until("the job claimed", lambda: job_of(one, job)["status"] == "running", 60, *logs)
    os.kill(job_worker_pid(deployment["env"]["DATABASE_URL"], job), signal.SIGKILL)
    hold.unlink()
    done = until(
        "the job recovered",
        lambda: (j := job_of(two, job))["status"] == "done" and j,
        120,
        *logs,
    )
    assert done["attempts"] >= 2
    assert agent_rows(two, done["report"]["agents"][0]) == ROWS

    # An agent pushed through one web process, then (one more row) through the other: one agent,
    # every row, in the shared folder (not one copy per machine, not `small--<hash>`).
    local = small_agent(deployment["tmp"] / "pushing")
    made = subprocess.run(
        [sys.executable, "manage.py", "stream_token", "small"], cwd=REPO, env=deployment["env"],
        capture_output=True, text=True,
    )
    assert made.returncode == 0, made.stderr[-2000:]
    token = made.stdout.strip().splitlines()[-1]
    (session,) = local.glob("offload-*.jsonl")
    sent = len(session.read_text("utf-8").splitlines())
    for n, url in enumerate((url1, url2)):
        if n:
            with session.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"tool_call_id": "pushed-late", "tool_call": "exec", "summary": "late"}) + "\n")
            sent += 1
        push = [sys.executable, "-m", "memviz.push", str(local), url, token, "--once"]
        pushed = subprocess.run(push, cwd=REPO, timeout=60, capture_output=True, text=True)
        assert pushed.returncode == 0, (n, pushed.stdout[-2000:], pushed.stderr[-2000:])
        until(f"push {n + 1} indexed", partial(has_rows, one, "small", sent), 60, *logs)
    slugs = [a["slug"] for a in two.get("/?format=json").json()["agents"]]
    assert [s for s in slugs if s.startswith("small")] == ["small"], slugs

    # kill -9 of a web process in the middle of a merge (the canvas renamed into place, the rows
    # not yet): the others finish it from the shared journal once its agent lock is gone with it.
    proc, port3, log3 = deployment["third_web"](MEMVIZ_CRASH_AT="canvas-renamed")
    three = Browser(f"http://127.0.0.1:{port3}")
    three.jar, three.opener = one.jar, one.opener
    base = one.get(canvas + "?format=json").json()["content_hash"]

    def merge_through_three() -> None:  # answered by no one: the process dies mid-merge
        with contextlib.suppress(OSError):
            payload = {"op": "merge", "nodes": ["001-N2", "001-N3"], "base": base}
            three.post_json(canvas + "ops/?format=json", payload)

    merging = threading.Thread(target=merge_through_three, daemon=True)
    merging.start()
    until("web3 stopped mid-merge", lambda: "crash-point canvas-renamed" in log3.read_text(), 60, log3)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=20)
    offload = sorted((deployment["root"] / "big").glob("offload-*.jsonl"))

    def merged() -> bool:
        nodes = {n["id"]: n["rows"] for n in one.get(canvas + "?format=json").json()["nodes"]}
        rows_on_gone = sum(f.read_text("utf-8").count('"001-N3"') for f in offload)
        # the rows re-pointed on disk and in the index: node 2 holds both nodes' 2,500 rows
        return "001-N3" not in nodes and rows_on_gone == 0 and nodes["001-N2"] == 2 * ROWS // 8

    until("the merge finished by the others", merged, 90, *logs)
    history = two.get(canvas + "history/?format=json").json()["revisions"]
    ops = [(r["author"], r["op"]) for r in sorted(history, key=lambda r: r["number"])]
    assert ops[0][1] == "imported" and ops[-1] == ("ana", "merge"), ops
    assert [a for a, _ in ops[1:]] == ["ana"] * (len(ops) - 1), ops  # no phantom agent revision
    undone = two.post_json(canvas + "ops/?format=json", {"op": "undo"})
    assert undone.status == 200, undone.body[:300]
    assert "001-N3" in {n["id"] for n in one.get(canvas + "?format=json").json()["nodes"]}

    # Redis stopped: a job asked for through either process answers 503 at once (its row waits:
    # a worker queues it once Redis is back); pages still read (Redis is not needed to read);
    # websockets are refused, so open pages say "reconnecting".
    redis, postgres = deployment["redis"], deployment["postgres"]
    last_job = max(j["id"] for j in one.get("/?format=json").json()["jobs"])
    redis.stop()
    for n, browser in enumerate((one, two), 1):
        asked = post_ingest(browser)
        assert asked.status == 503 and asked.seconds < 3, (n, asked.status, asked.seconds, asked.body)
        assert "task queue" in asked.json()["error"], asked.body[:300]
        page = browser.get("/?format=json")
        assert page.status == 200 and page.seconds < 3, (n, page.status, page.seconds, page.body)
    for port in deployment["ports"]:
        asked_at = time.monotonic()
        assert asyncio.run(live_ready(port, "big")) is False
        assert time.monotonic() - asked_at < 5
    # Redis back on the same port: the workers reconnect by themselves and do uploads through
    # either process, and the refused jobs too; websockets open again.
    redis.start()
    host = socket.gethostname()
    until(
        "both workers answering through the broker again",
        lambda: workers_answering(deployment["env"]) == [f"w1@{host}", f"w2@{host}"],
        30,
        *logs,
    )
    uploaded = small_agent(deployment["tmp"] / "uploaded")
    for n, (through, other) in enumerate([(one, two), (two, one)]):
        job = upload(through, f"after-redis{n}", uploaded)
        until(f"upload {n} after Redis", partial(job_done, through, job), 60, *logs)
        assert agent_rows(other, job_of(through, job)["report"]["agents"][0]) == 5

    def refused_jobs_done() -> list[dict]:
        jobs = [j for j in one.get("/?format=json").json()["jobs"] if j["id"] > last_job]
        return [] if any(j["status"] != "done" for j in jobs) else jobs

    assert len(until("the refused jobs done once Redis is back", refused_jobs_done, 60, *logs)) == 4
    until(
        "websockets again",
        lambda: all(asyncio.run(live_ready(port, "big")) for port in deployment["ports"]),
        20,
        *logs,
    )

    # PostgreSQL stopped: every page answers 503 at once through either process (JSON and HTML);
    # rows the agent appends meanwhile are indexed once it is back, and edits and jobs work again.
    pg_logs = [*logs, postgres.dir / "server.log"]
    rows = agent_rows(one, "big")
    postgres.stop()
    append_rows(deployment["root"] / "big", "outage", 7)

    def pages(browser: Browser) -> list[tuple[str, Answer]]:
        return [(browser.base + path, browser.get(path)) for path in ("/?format=json", "/a/big/")]

    with ThreadPoolExecutor(2) as pool:  # both processes at once: each answer waits ~2 s
        answered = [pair for pairs in pool.map(pages, (one, two)) for pair in pairs]
    for url, answer in answered:
        assert answer.status == 503 and answer.seconds < 3, (url, answer.status, answer.seconds)
        assert b"database is not answering" in answer.body, (url, answer.body[:300])
    postgres.start()
    until(
        "pages again through both",
        lambda: all(b.get("/?format=json").status == 200 for b in (one, two)),
        20,
        *pg_logs,
    )
    until(
        "the rows appended in the outage",
        lambda: agent_rows(one, "big") == rows + 7,
        30,
        *pg_logs,
    )
    assert agent_rows(two, "big") == rows + 7
    base = one.get(canvas + "?format=json").json()["content_hash"]
    edit = two.post_json(
        canvas + "ops/?format=json",
        {"op": "annotate", "node": "001-N1", "text": "after the restart", "base": base},
    )
    assert edit.status == 200, edit.body[:300]
    assert one.get(canvas + "?format=json").json()["content_hash"] == edit.json()["hash"]
    job = upload(one, "after-postgres", uploaded)
    until("an upload after PostgreSQL", lambda: job_of(two, job)["status"] == "done", 60, *pg_logs)
    assert agent_rows(two, job_of(one, job)["report"]["agents"][0]) == 5
