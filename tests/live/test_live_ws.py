"""The watcher end to end: a second process writes like the plugin; the DB and a websocket see
every change exactly once."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from canvases.models import Revision
from intake.ingest import ingest_path
from intake.watch import start_watch_thread
from memviz.live_types import AgentChanged, CanvasUpdated
from sessions.models import Agent, AgentSession, Canvas, Row
from tests.shapes import shape_problems

pytestmark = pytest.mark.django_db(transaction=True)

HERE = Path(__file__).resolve().parent
SESSION = "1a2b3c4d-5e6f-4a8b-9c0d-ef1234567890"
CANVAS = "002-etl-chunked-rewrite.mmd"
N_ROWS = 12
ORIGIN = [(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000")]


async def _collect(communicator: WebsocketCommunicator, until, timeout: float) -> list[dict]:
    messages: list[dict] = []
    deadline = time.monotonic() + timeout
    # A timed-out receive cancels the application, so poll with receive_nothing instead.
    while time.monotonic() < deadline:
        if await communicator.receive_nothing(timeout=0.3):
            if until(messages):
                break
        else:
            messages.append(await communicator.receive_json_from())
    return messages


def test_second_process_rows_and_canvas_seen_exactly_once(fixtures_root: Path) -> None:
    from memviz.asgi import application

    root = fixtures_root / "fixture-c-enhanced"
    ingest_path(root)
    agent = Agent.objects.get(slug="main")
    canvas = Canvas.objects.get(agent=agent, filename=CANVAS)
    revisions_before = Revision.objects.filter(canvas=canvas, author="agent").count()
    watcher, thread, stop = start_watch_thread(root)
    assert watcher.ready.wait(10)

    async def scenario() -> tuple[list[dict], str]:
        communicator = WebsocketCommunicator(
            application, f"/ws/live/main/?canvas={CANVAS}", headers=ORIGIN
        )
        connected, _ = await communicator.connect()
        assert connected
        hello = await communicator.receive_json_from(timeout=5)
        assert hello == {"type": "live.ready", "agent": "main", "groups": 2}
        go = root / "go-backfill"
        writer = await asyncio.create_subprocess_exec(
            sys.executable,
            str(HERE / "writer_agent.py"),
            str(root / "main"),
            SESSION,
            str(N_ROWS),
            CANVAS,
            str(go),
            stdout=asyncio.subprocess.PIPE,
        )

        def seen(msgs: list[dict]) -> int:
            return sum(
                len(m["rows"].get(SESSION, {}).get("tool_call_ids", []))
                for m in msgs
                if m["type"] == "agent.changed"
            )

        # The backfill waits until the appended rows are indexed: it then rewrites rows the
        # index holds, so the watcher must re-read the session (on a busy machine it could
        # otherwise see appends and backfill as one growth, with nothing to re-read).
        messages = await _collect(communicator, lambda msgs: seen(msgs) >= N_ROWS, timeout=20)
        go.touch()
        out, _ = await writer.communicate()
        assert writer.returncode == 0

        def complete(msgs: list[dict]) -> bool:
            return seen(msgs) >= N_ROWS + 1 and any(
                SESSION in m.get("sessions_reread", []) for m in msgs
            )

        messages += await _collect(communicator, lambda more: complete(messages + more), timeout=20)
        await asyncio.sleep(1.0)  # anything late (a duplicate) would arrive now
        while not await communicator.receive_nothing(timeout=0.3):
            messages.append(await communicator.receive_json_from())
        await communicator.disconnect()
        return messages, out.decode()

    try:
        messages, out = async_to_sync(scenario)()
    finally:
        stop.set()
        thread.join(10)
    assert out.split() == ["appended", "canvas", "backfilled", "done"]
    # what a page's script reads: every message has the keys live_types declares
    assert [m for m in messages if shape_problems(m, AgentChanged | CanvasUpdated)] == []

    ids = Counter(
        i
        for m in messages
        if m["type"] == "agent.changed"
        for i in m["rows"].get(SESSION, {}).get("tool_call_ids", [])
    )
    expected = {f"call_live_{i:04d}" for i in range(N_ROWS + 1)}
    assert set(ids) == expected, json.dumps(messages, indent=1)[:3000]
    assert max(ids.values()) == 1, ids.most_common(3)
    canvas_msgs = [m for m in messages if m["type"] == "canvas.updated"]
    assert [(m["canvas"], m["author"]) for m in canvas_msgs] == [(CANVAS, "agent")]
    assert any(SESSION in m.get("sessions_reread", []) for m in messages)

    # The database: every row once, backfilled node ids, one agent revision for the rewrite.
    session = AgentSession.objects.get(agent=agent, session_id=SESSION)
    rows = list(Row.objects.filter(session=session).values_list("tool_call_id", "node_id"))
    assert len(rows) == 3 + N_ROWS + 1
    live = {tcid: node for tcid, node in rows if tcid.startswith("call_live_")}
    assert set(live) == expected and set(live.values()) == {"002-N9"}
    assert session.rows_count == len(rows)
    assert not [p for p in session.problems if p["kind"] == "partial"]
    assert Revision.objects.filter(canvas=canvas, author="agent").count() == revisions_before + 1
    canvas.refresh_from_db()
    assert "002-N9" in set(canvas.nodes.values_list("node_id", flat=True))


def test_live_socket_refuses_unknown_agent_and_foreign_origin(db) -> None:
    from memviz.asgi import application

    async def scenario() -> tuple[bool, bool]:
        bad_origin = WebsocketCommunicator(
            application, "/ws/live/main/", headers=[(b"origin", b"http://evil.example")]
        )
        ok1, _ = await bad_origin.connect()
        unknown = WebsocketCommunicator(application, "/ws/live/nobody/", headers=ORIGIN)
        ok2, _ = await unknown.connect()
        return ok1, ok2

    assert async_to_sync(scenario)() == (False, False)


def test_live_socket_requires_login_when_not_anonymous(fixtures_root: Path, settings) -> None:
    from memviz.asgi import application

    ingest_path(fixtures_root / "fixture-c-enhanced")
    settings.MEMVIZ_ANONYMOUS_VIEW = False

    async def scenario() -> bool:
        communicator = WebsocketCommunicator(application, "/ws/live/main/", headers=ORIGIN)
        ok, _ = await communicator.connect()
        return ok

    assert async_to_sync(scenario)() is False
