"""Issue 22 item 1: a FIFO where memviz expects a regular file never stalls it.

A FIFO as `state.json`, as a canvas, as an offload file and as a ref: ingest completes (and the
agent sorted after it is indexed), every page answers at once, and a signed-in resume is refused
at once instead of hanging inside the write transaction, so the next write still works. No
request leaves a thread behind (a plain open of a FIFO waits for a writer forever).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from intake.ingest import ingest_path
from sessions.models import Agent, Canvas, Ref, Row

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "debug"))
from memory_factory import canvas, node, write_agent  # noqa: E402

pytestmark = pytest.mark.django_db(transaction=True)
PROMPT = 15.0  # seconds; each answer takes well under one


def _agent(root: Path, name: str) -> Path:
    rows = [{"minutes": k, "tool": f"exec: step {k}", "node": "001-N1"} for k in range(3)]
    texts = {
        "001-first.mmd": canvas("first", [node("001-N1", "one", "done", 1)]),
        "002-second.mmd": canvas("second", [node("002-N1", "two", "doing", 2)]),
    }
    folder = write_agent(root, name, {"s-1": rows}, texts, active="001-first.mmd")
    past = time.time() - 3600  # nothing looks live
    for path in folder.rglob("*"):
        os.utime(path, (past, past))
    return folder


def _promptly(work: Callable[[], Any]) -> Any:
    """Run ``work`` in a thread; fail if it has not finished within PROMPT seconds."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as error:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = error
        finally:  # back to PostgreSQL's pool: a thread that ends keeps its connection otherwise
            connection.close()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(PROMPT)
    assert not worker.is_alive(), "blocked on a FIFO"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _threads() -> set[str]:
    # A broadcast's first send starts asgiref's executor thread: a bounded, idle pool.
    return {t.name for t in threading.enumerate() if not t.name.startswith("ThreadPoolExecutor")}


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _pages_answer(ref: str) -> None:
    anonymous = Client()
    for url in [
        "/a/alpha/",
        "/a/alpha/?format=json",
        "/a/alpha/c/001-first.mmd/",
        "/a/alpha/c/001-first.mmd/preview/",
        "/a/alpha/c/002-second.mmd/",
        "/a/alpha/c/002-second.mmd/preview/",
        "/a/alpha/c/001-first.mmd/live/",
        f"/a/alpha/refs/{ref}",
        "/a/alpha/s/s-1/",
        "/a/alpha/ledger/",
        "/a/alpha/diagnostics/",
    ]:
        response = _promptly(partial(anonymous.get, url))
        assert response.status_code < 500, (url, response.status_code)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    _agent(root, "alpha")
    ingest_path(root)
    return root


def test_fifos_do_not_stall_ingest_pages_or_resume(root: Path) -> None:
    alpha = root / "alpha"
    ref = next((alpha / "refs").iterdir()).name
    _fifo(alpha / "state.json")
    _fifo(alpha / "mmds" / "002-second.mmd")
    _fifo(alpha / "refs" / ref)
    os.mkfifo(alpha / "offload-s-2.jsonl")
    _agent(root, "beta")  # sorted after the hostile agent
    threads = _threads()

    _pages_answer(ref)  # the index still names the files that are FIFOs now
    _promptly(lambda: ingest_path(root))
    assert Row.objects.filter(agent__slug="beta").count() == 3
    assert Canvas.objects.filter(agent__slug="beta").count() == 2
    assert Ref.objects.filter(agent__slug="beta").count() == 3
    alpha_agent = Agent.objects.get(slug="alpha")
    assert alpha_agent.state_error  # a problem of this agent, shown on its page
    assert Row.objects.filter(agent=alpha_agent).count() == 3  # its regular files still count
    _pages_answer(ref)

    client = Client()
    client.force_login(User.objects.create_user("dave", password="pw"))
    response = _promptly(
        lambda: client.post(
            "/a/alpha/c/001-first.mmd/resume/",
            json.dumps({"confirm_live": True}),
            content_type="application/json",
        )
    )
    assert response.status_code in (400, 409, 422), response.status_code
    assert "not a regular file" in response.json()["error"]
    assert (alpha / "state.json").is_fifo()  # nothing was written over it

    # No lock or transaction was left behind: the next write works at once.
    response = _promptly(
        lambda: client.post(
            "/a/beta/c/002-second.mmd/resume/",
            json.dumps({"confirm_live": True}),
            content_type="application/json",
        )
    )
    assert response.status_code == 200, response.content
    assert json.loads((root / "beta" / "state.json").read_text())["activeMmdFile"] == (
        "002-second.mmd"
    )
    assert _threads() <= threads  # every request's thread finished


def test_a_file_over_the_read_limit_is_a_problem_of_that_file(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentfs import paths

    alpha = root / "alpha"
    monkeypatch.setattr(paths, "READ_LIMIT", 4096)
    big = canvas("big", [node(f"001-N{k}", "x" * 40, "done", 1) for k in range(200)])
    (alpha / "mmds" / "002-second.mmd").write_text(big, "utf-8")
    _agent(root, "beta")
    _promptly(lambda: ingest_path(root))
    assert Canvas.objects.filter(agent__slug="beta").count() == 2
    assert Canvas.objects.filter(agent__slug="alpha", filename="001-first.mmd").exists()
    refused = Agent.objects.get(slug="alpha").refused_links
    assert [(r["code"], r["reason"]) for r in refused] == [
        ("too_large", "mmds/002-second.mmd: 002-second.mmd is larger than 4096 bytes")
    ]
    page = Client().get("/a/alpha/")
    assert "002-second.mmd is larger than 4096 bytes" in page.content.decode()


def test_devices_and_sockets_are_refused_like_fifos(tmp_path: Path) -> None:
    import socket
    import stat

    from agentfs.paths import LinkRefused, open_append, read_regular

    agent = tmp_path / "agent"
    agent.mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(agent / "offload-sock.jsonl"))
    names = ["offload-sock.jsonl"]
    try:  # /dev/zero's numbers: read whole, it would never end
        os.mknod(agent / "state.json", stat.S_IFCHR | 0o600, os.makedev(1, 5))
        names.append("state.json")
    except PermissionError:
        pass  # not root: the socket still stands for every kind that is not a regular file
    os.mkfifo(agent / "offload-fifo.jsonl")
    names.append("offload-fifo.jsonl")

    def append_and_close(path: Path) -> None:
        os.close(open_append(path))

    for name in names:
        with pytest.raises(LinkRefused, match="not a regular file"):
            _promptly(partial(read_regular, agent / name, folders=1))
        with pytest.raises(OSError):
            _promptly(partial(append_and_close, agent / name))
    server.close()
