"""Across processes: a watcher process reaching browsers of the web process through Redis, and the
push client mirroring a local agent folder into a running server."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import websockets
from websockets.typing import Origin

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
SESSION = "1a2b3c4d-5e6f-4a8b-9c0d-ef1234567890"


def _row(tcid: str, node: str | None = None) -> bytes:
    row = {"tool_call_id": tcid, "tool_call": "exec", "summary": tcid, "score": 5, "node_id": node}
    return (json.dumps(row, separators=(",", ":")) + "\n").encode()


async def _listen(
    url: str, origin: str, expected: set[str], act, timeout: float = 20
) -> list[dict]:
    """Connect, wait for live.ready, run ``act()``, collect messages until every id was seen."""
    messages: list[dict] = []
    async with websockets.connect(url, origin=Origin(origin)) as ws:
        hello = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert hello["type"] == "live.ready"
        await asyncio.get_running_loop().run_in_executor(None, act)
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while not expected <= set(seen) and time.monotonic() < deadline:
            try:
                msg = json.loads(await asyncio.wait_for(ws.recv(), 1))
            except TimeoutError:
                continue
            messages.append(msg)
            for rows in msg.get("rows", {}).values():
                seen += rows["tool_call_ids"]
    return messages


def _ids(messages: list[dict]) -> list[str]:
    return [i for m in messages for r in m.get("rows", {}).values() for i in r["tool_call_ids"]]


@pytest.mark.redis
def test_watcher_process_reaches_web_process_through_redis(
    run_server, live_root: Path, redis_url: str, tmp_path: Path
) -> None:
    server = run_server(live_root, extra_env={"REDIS_URL": redis_url}, watch=False)
    watch_log = (tmp_path / "watch.log").open("w")
    watcher = subprocess.Popen(
        [sys.executable, "manage.py", "watch", str(live_root)],
        cwd=REPO,
        env=server.env,
        stdout=watch_log,
        stderr=subprocess.STDOUT,
    )
    try:
        time.sleep(1.5)  # the watcher's catch-up pass and watch set-up
        path = live_root / "main" / f"offload-{SESSION}.jsonl"
        expected = {f"call_redis_{i}" for i in range(5)}

        def act() -> None:
            for i in range(5):
                with open(path, "ab") as handle:
                    handle.write(_row(f"call_redis_{i}"))
                time.sleep(0.1)

        messages = asyncio.run(
            _listen(f"ws://127.0.0.1:{server.port}/ws/live/main/", server.url, expected, act)
        )
        assert sorted(_ids(messages)) == sorted(expected), (
            messages,
            (tmp_path / "watch.log").read_text(),
        )
    finally:
        watcher.terminate()
        watcher.wait(10)


def test_push_client_mirrors_a_folder_and_pages_go_live(
    run_server, manage, tmp_path: Path, fixtures_root: Path
) -> None:
    empty_root = tmp_path / "empty"
    empty_root.mkdir()
    server = run_server(empty_root, watch=False)
    token = manage(server.env, "stream_token", "main").stdout.strip()
    local = tmp_path / "local" / "main"
    shutil.copytree(fixtures_root / "fixture-a-upstream" / "main", local)
    push = [sys.executable, "-m", "memviz.push", str(local), server.url, token, "--once"]
    subprocess.run(push, cwd=REPO, check=True, timeout=60, capture_output=True)
    agent = json.load(urllib.request.urlopen(f"{server.url}/a/main/?format=json"))
    pushed = Path(server.env["MEMVIZ_PUSH_ROOT"]) / "main"
    for rel in ("state.json", "sessions-registry.json", "mmds/001-fix-login-timeout.mmd"):
        assert (pushed / rel).read_bytes() == (local / rel).read_bytes(), rel
    for f in local.glob("offload-*.jsonl"):
        local_ids = [json.loads(x)["tool_call_id"] for x in f.read_text().splitlines() if x.strip()]
        pushed_ids = [
            json.loads(x)["tool_call_id"] for x in (pushed / f.name).read_text().splitlines()
        ]
        assert pushed_ids == local_ids
    assert sorted(p.name for p in (pushed / "refs").iterdir()) == sorted(
        p.name for p in (local / "refs").iterdir()
    )
    assert json.dumps(agent)  # the agent page answers

    session = next(local.glob("offload-*.jsonl"))
    expected = {"call_push_1", "call_push_2"}

    def act() -> None:
        with open(session, "ab") as handle:
            handle.write(_row("call_push_1") + _row("call_push_2"))
        subprocess.run(push, cwd=REPO, check=True, timeout=60, capture_output=True)
        subprocess.run(
            push, cwd=REPO, check=True, timeout=60, capture_output=True
        )  # a fresh client re-sends all: deduplicated

    messages = asyncio.run(
        _listen(f"ws://127.0.0.1:{server.port}/ws/live/main/", server.url, expected, act)
    )
    assert sorted(_ids(messages)) == sorted(expected)
    bad = subprocess.run(
        [*push[:-2], "wrong-token", "--once"], cwd=REPO, timeout=60, capture_output=True, text=True
    )
    assert bad.returncode == 2 and "401" in bad.stderr
