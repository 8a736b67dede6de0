"""Issue 22 item 13: websocket input errors answer an error frame, never a traceback.

A non-JSON or deeply nested frame on ws/live closed the socket with a traceback; an unknown ws
path logged a 500; the origin check accepted an https Origin on an http server and userinfo in
the Origin; ws/stream messages were capped at 1 MiB while an HTTP push took 8 MiB events.
"""

from __future__ import annotations

import json

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Origin

pytestmark = [pytest.mark.slow]
MB = 1024 * 1024


def _ws(server, path: str, origin: str | None = None):
    return connect(
        f"ws://127.0.0.1:{server.port}{path}",
        origin=Origin(origin or server.url),
        max_size=None,
        open_timeout=10,
    )


def test_bad_frames_get_error_frames_and_the_socket_stays(served) -> None:
    server = served()
    with _ws(server, "/ws/live/main/") as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "live.ready"
        for bad in ("not json", "[" * 60000, '{"type": "ping"', b"\xff\xfe"):
            ws.send(bad)
            answer = json.loads(ws.recv(timeout=10))
            assert answer["type"] == "error", (bad[:20], answer)
        ws.send(json.dumps({"type": "ping"}))
        assert json.loads(ws.recv(timeout=10)) == {"type": "pong"}
    # an unknown path is closed cleanly (refused handshake), not a routing error
    with pytest.raises(InvalidStatus) as refused, _ws(server, "/ws/nothing/here/"):
        pass
    assert refused.value.response.status_code == 403
    log = server.log.read_text()
    assert "Traceback" not in log and " 500 " not in log, log[-3000:]


def test_origin_must_be_this_very_origin(served) -> None:
    server = served()
    port = server.port
    for origin in (
        f"https://127.0.0.1:{port}",  # an https page is another origin than this http server
        f"http://user@127.0.0.1:{port}",
        f"http://user:pw@127.0.0.1:{port}",
        f"http://127.0.0.1:{port}/path",
        f"http://evil.example@127.0.0.1:{port}",
    ):
        with pytest.raises(InvalidStatus), _ws(server, "/ws/live/main/", origin=origin):
            pass
    with _ws(server, "/ws/live/main/", origin=f"http://127.0.0.1:{port}") as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "live.ready"


def test_stream_socket_and_http_push_share_one_size_limit(
    served, manage, http_session
) -> None:
    server = served(MEMVIZ_STREAM_MAX_BODY_BYTES=str(4 * MB))
    token = manage(server.env, "stream_token", "remote").stdout.strip()

    def ref_event(size: int) -> str:
        name = f"refs/2026-06-12T10-00-0{size // MB}-000p08-00.md"
        return json.dumps({"type": "ref", "name": name, "text": "x" * size}) + "\n"

    with _ws(server, f"/ws/stream/remote/?token={token}") as ws:
        ws.send(ref_event(2 * MB))  # over daphne's default 1 MiB, within the push limit
        answer = json.loads(ws.recv(timeout=30))
        assert answer.get("applied") == 1, answer
    # over the one limit: the socket refuses it (1009, while the client still sends), as HTTP does
    with _ws(server, f"/ws/stream/remote/?token={token}") as ws, pytest.raises(
        (ConnectionClosed, OSError)
    ):
        ws.send(ref_event(5 * MB))
        ws.recv(timeout=30)
    refs = server.var / "pushed" / "remote" / "refs"
    assert sorted(p.name for p in refs.iterdir()) == ["2026-06-12T10-00-02-000p08-00.md"]
    client = http_session(server)
    headers = {"Authorization": f"Bearer {token}"}
    assert client.request("POST", "/api/stream/remote/", ref_event(2 * MB), headers).status == 200
    assert client.request("POST", "/api/stream/remote/", ref_event(5 * MB), headers).status == 413
