"""The push API: tokens, per-event errors, limits, confinement, idempotence, on-disk layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.core.management import call_command
from django.test import Client

from intake.page_types import PushAnswer
from intake.push_tokens import token_create
from sessions.models import Agent, AgentSession, Canvas, Row, StreamToken
from tests.shapes import shape_problems

pytestmark = pytest.mark.django_db

SID = "af31ea9c-b54e-41bd-bf50-d7aa2fee1689"
CANVAS = '%%{ "taskGoal": "push", "progress": "10" }%%\nflowchart TD\n    001-N1["push"]\n    001-N2["step<br/>status: doing"]\n    001-N1 --> 001-N2'
REF = "# Tool Result: exec\n\n**Timestamp:** 2026-06-14T07:00:10.949+08:00\n\n---\n\n**Tool:** exec\n**Call ID:** call_1\n\n**Result:**\n```\nok\n```"
STATE = {"activeMmdFile": "001-push.mmd", "activeMmdId": "push", "mmdCounter": 1}


@pytest.fixture
def push_root(tmp_path: Path, settings) -> Path:
    settings.MEMVIZ_PUSH_ROOT = tmp_path / "pushed"
    return settings.MEMVIZ_PUSH_ROOT


def row(i: int, **extra) -> dict:
    return {
        "tool_call_id": f"call_{i}",
        "tool_call": f"exec {i}",
        "summary": f"s{i}",
        "score": 5,
        "node_id": None,
        **extra,
    }


def ndjson(*events: dict | str) -> bytes:
    return "\n".join(
        e if isinstance(e, str) else json.dumps(e, ensure_ascii=False) for e in events
    ).encode()


def post(client: Client, body: bytes, token: str | None, agent: str = "remote"):
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return client.post(
        f"/api/stream/{agent}/", body, content_type="application/x-ndjson", headers=headers
    )


def test_token_command_prints_once_and_stores_only_a_hash(capsys) -> None:
    call_command("stream_token", "remote")
    token = capsys.readouterr().out.strip()
    stored = StreamToken.objects.get(agent_name="remote")
    assert len(token) >= 40 and token not in stored.token_hash and len(stored.token_hash) == 64


def test_no_token_starts_with_a_dash_which_the_push_command_would_read_as_an_option() -> None:
    # token_urlsafe starts with "-" once in 64 draws: the command printed on the tokens page
    # then failed with argparse's usage error (exit 2)
    tokens = [token_create(f"agent-{i}") for i in range(300)]
    assert all(t.startswith("mvz_") and len(t) > 40 for t in tokens)
    assert len(set(tokens)) == len(tokens)


def test_the_push_command_takes_an_older_token_that_starts_with_a_dash_after_a_double_dash(
    tmp_path: Path, monkeypatch
) -> None:
    from memviz import push

    seen = {}

    class Recorder:
        def __init__(self, path, url, token, agent=None):
            seen["token"] = token

        def run(self, interval, once):
            seen["once"] = once

    monkeypatch.setattr(push, "Pusher", Recorder)
    assert push.main([str(tmp_path), "http://127.0.0.1:1", "--once", "--", "-abc_def"]) == 0
    assert seen == {"token": "-abc_def", "once": True}
    with pytest.raises(SystemExit):
        push.main([str(tmp_path), "http://127.0.0.1:1", "-abc_def"])  # why `--` is needed


def test_bad_token_is_401_and_writes_nothing(push_root: Path) -> None:
    token_create("remote")
    client = Client()
    body = ndjson({"type": "row", "session": SID, "row": row(1)})
    for bad in (None, "wrong", token_create("other")):
        response = post(client, body, bad)
        assert response.status_code == 401
    assert not (push_root / "remote").exists()
    assert not Agent.objects.exists()


def test_full_push_writes_the_spec_layout_and_indexes_it(push_root: Path) -> None:
    token = token_create("remote")
    body = ndjson(
        {"type": "state", "state": STATE},
        {
            "type": "registry",
            "registry": {
                "agent:remote:main": {
                    "sessionId": SID,
                    "offloadFile": f"offload-{SID}.jsonl",
                    "updatedAt": "2026-06-14T00:00:00Z",
                }
            },
        },
        {"type": "canvas", "name": "001-push.mmd", "text": CANVAS},
        {"type": "ref", "name": "refs/2026-06-14T07-00-10-949p08-00.md", "text": REF},
        {
            "type": "row",
            "session": SID,
            "row": row(1, result_ref="refs/2026-06-14T07-00-10-949p08-00.md"),
        },
        {"type": "row", "session": SID, "row": row(2, summary="含 unicode\u200b")},
    )
    response = post(Client(), body, token)
    assert response.status_code == 200, response.content
    assert response.json()["errors"] == [] and response.json()["rows_added"] == 2
    folder = push_root / "remote"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "mmds/001-push.mmd",
        f"offload-{SID}.jsonl",
        "refs/2026-06-14T07-00-10-949p08-00.md",
        "sessions-registry.json",
        "state.json",
    ]
    assert (folder / "state.json").read_text() == json.dumps(STATE, indent=2)  # no trailing newline
    assert (folder / "mmds/001-push.mmd").read_text() == CANVAS
    lines = (folder / f"offload-{SID}.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3
    assert (
        json.loads(lines[1])["summary"] == "含 unicode"
    )  # unsafe characters stripped like the plugin
    agent = Agent.objects.get(name="remote")
    assert (
        agent.rows_count == 2 and agent.refs_count == 1 and agent.active_mmd_file == "001-push.mmd"
    )
    assert Canvas.objects.get(agent=agent).node_count == 2
    assert AgentSession.objects.get(agent=agent).session_key == "agent:remote:main"


def test_per_event_errors_keep_valid_events(push_root: Path) -> None:
    token = token_create("remote")
    body = ndjson(
        {"type": "row", "session": SID, "row": row(1)},
        "{not json",
        {"type": "row", "session": SID, "row": {"summary": "no id"}},
        {"type": "nope"},
        "",
        {"type": "canvas", "name": "../escape.mmd", "text": "x"},
        {"type": "ref", "name": "/etc/passwd.md", "text": "x"},
        {"type": "ref", "name": "refs/sub/x.md", "text": "x"},
        {"type": "canvas", "name": ".hidden.mmd", "text": "x"},
        {"type": "row", "session": "../../x", "row": row(9)},
        {"type": "state", "state": [1]},
        {"type": "row", "session": SID, "row": row(2)},
    )
    response = post(Client(), body, token)
    assert response.status_code == 200 and shape_problems(response.json(), PushAnswer) == []
    errors = response.json()["errors"]
    assert [e["line"] for e in errors] == [2, 3, 4, 6, 7, 8, 9, 10, 11]
    assert "not JSON" in errors[0]["reason"] and "tool_call_id" in errors[1]["reason"]
    assert "'..'" in errors[3]["reason"] and "absolute" in errors[4]["reason"]
    folder = push_root / "remote"
    assert not (push_root / "escape.mmd").exists() and not (folder / "mmds" / "sub").exists()
    assert [p.name for p in folder.iterdir() if p.is_file()] == [f"offload-{SID}.jsonl"]
    assert Row.objects.filter(agent__name="remote").count() == 2


def test_all_events_invalid_is_400(push_root: Path) -> None:
    token = token_create("remote")
    response = post(Client(), b"{bad\n[1]", token)
    assert response.status_code == 400 and len(response.json()["errors"]) == 2


def test_oversized_body_and_event_are_413(push_root: Path, settings) -> None:
    token = token_create("remote")
    settings.MEMVIZ_STREAM_MAX_EVENT_BYTES = 1000
    settings.MEMVIZ_STREAM_MAX_BODY_BYTES = 5000
    big_event = ndjson(
        {"type": "row", "session": SID, "row": row(1)},
        {"type": "ref", "name": "a.md", "text": "x" * 2000},
    )
    assert post(Client(), big_event, token).status_code == 413
    big_body = ndjson(*[{"type": "row", "session": SID, "row": row(i)} for i in range(100)])
    assert post(Client(), big_body, token).status_code == 413
    assert not (push_root / "remote").exists()


def test_bad_agent_name_is_refused(push_root: Path) -> None:
    response = Client().post(
        "/api/stream/..%2F..%2Fetc/", b"{}", content_type="application/x-ndjson"
    )
    assert response.status_code in {400, 404}
    assert post(Client(), b"{}", "x", agent=".hidden").status_code == 400


def test_idempotent_out_of_order_and_updates(push_root: Path) -> None:
    token = token_create("remote")
    client = Client()
    first = ndjson(
        *[{"type": "row", "session": SID, "row": row(i)} for i in (3, 1, 2)],
        {"type": "canvas", "name": "001-push.mmd", "text": CANVAS},
    )
    assert post(client, first, token).json()["rows_added"] == 3
    path = push_root / "remote" / f"offload-{SID}.jsonl"
    before = path.read_bytes()
    canvas_mtime = (push_root / "remote/mmds/001-push.mmd").stat().st_mtime_ns
    again = post(client, first, token).json()
    assert again["rows_added"] == 0 and again["duplicates"] == 4 and again["applied"] == 0
    assert path.read_bytes() == before
    assert (push_root / "remote/mmds/001-push.mmd").stat().st_mtime_ns == canvas_mtime
    # The plugin's backfill arrives as the same id with a node_id: the row is replaced in place.
    update = post(
        client, ndjson({"type": "row", "session": SID, "row": row(1, node_id="001-N2")}), token
    ).json()
    assert update["applied"] == 1 and update["rows_added"] == 0
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    assert [r["tool_call_id"] for r in rows] == ["call_3", "call_1", "call_2"]
    assert rows[1]["node_id"] == "001-N2"
    assert list(
        Row.objects.filter(agent__name="remote")
        .order_by("line_no")
        .values_list("tool_call_id", "node_id")
    ) == [("call_3", None), ("call_1", "001-N2"), ("call_2", None)]


def test_websocket_stream_with_token_in_first_message(push_root: Path, transactional_db) -> None:
    from memviz.asgi import application

    token = token_create("remote")
    origin = [(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000")]

    async def scenario() -> list[dict]:
        out = []
        bad = WebsocketCommunicator(application, "/ws/stream/remote/?token=nope", headers=origin)
        ok, _ = await bad.connect()
        out.append({"bad_connected": ok})
        ws = WebsocketCommunicator(application, "/ws/stream/remote/", headers=origin)
        ok, _ = await ws.connect()
        assert ok
        await ws.send_to(text_data=json.dumps({"token": token}))
        out.append(await ws.receive_json_from(timeout=5))
        await ws.send_to(
            text_data=ndjson({"type": "row", "session": SID, "row": row(1)}, "oops").decode()
        )
        out.append(await ws.receive_json_from(timeout=10))
        await ws.disconnect()
        return out

    bad, ready, result = async_to_sync(scenario)()
    assert bad == {"bad_connected": False}
    assert ready["type"] == "stream.ready"
    assert result["rows_added"] == 1 and result["errors"][0]["line"] == 2
    assert Row.objects.filter(agent__name="remote").count() == 1
