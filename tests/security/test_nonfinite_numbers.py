"""Issue 22 item 2: a number no double holds never stops indexing and is never written back.

`1e400` is valid JSON (JavaScript reads it as Infinity); Python turned it into `inf`, which
SQLite's JSON check refuses: the agent kept no rows and the agents after it were never indexed.
memviz keeps such a number as its original text. `NaN` / `Infinity` literals are not JSON at all
(the plugin's JSON.parse rejects the line): that line is a corrupt line of its session, with its
text kept, and nothing else is lost. Whatever memviz writes into an agent folder stays JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from intake.ingest import ingest_path
from intake.push_tokens import token_create
from sessions.models import Agent, AgentSession, Row

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "debug"))
from memory_factory import canvas, node, write_agent  # noqa: E402

pytestmark = pytest.mark.django_db(transaction=True)


def _strict(text: str | bytes) -> Any:
    """JSON.parse as the agent runs it: NaN / Infinity are errors."""

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} in JSON written by memviz")

    return json.loads(text, parse_constant=refuse)


def _row(call_id: str, extra: str) -> str:
    return f'{{"tool_call_id": "{call_id}", "tool_call": "exec: x", "summary": "s", {extra}}}'


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    texts = {"001-a.mmd": canvas("a", [node("001-N1", "one", "done", 1)])}
    rows = [{"minutes": 1, "tool": "exec: ok", "node": "001-N1"}]
    for name in ("alpha", "beta"):
        write_agent(root, name, {"s-1": rows}, texts)
    alpha = root / "alpha"
    deep = "[" * 5000 + "]" * 5000
    lines = [
        _row("big", '"score": 1e400, "took": -1e400'),
        _row("nan", '"score": NaN'),
        _row("neg", '"took": -Infinity'),
        _row("deep", f'"nested": {deep}'),
        deep,
        _row("after", '"score": 3'),
    ]
    (alpha / "offload-s-2.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    (alpha / "state.json").write_text(
        '{"activeMmdFile": "001-a.mmd", "mmdCounter": 1e400, "n": 2}', "utf-8"
    )
    (alpha / "sessions-registry.json").write_text(
        '{"agent:alpha:s-2": {"sessionId": "s-2", "updatedAt": 1e999}}', "utf-8"
    )
    return root


def test_out_of_range_numbers_are_kept_as_text_and_indexing_goes_on(tmp_path: Path) -> None:
    root = _root(tmp_path)
    ingest_path(root)

    assert Row.objects.filter(agent__slug="beta").count() == 1  # the agent after it
    alpha = Agent.objects.get(slug="alpha")
    session = AgentSession.objects.get(agent=alpha, session_id="s-2")
    big = Row.objects.get(session=session, tool_call_id="big")
    assert big.extra["took"] == "-1e400"  # the number, as the agent wrote it
    assert big.score is None
    assert Row.objects.filter(session=session, tool_call_id="after").exists()
    reasons = {p["line_no"]: p["reason"] for p in session.problems}
    assert {2, 3, 4, 5} <= set(reasons), session.problems  # NaN, -Infinity, too deep, too deep
    assert "NaN" in reasons[2] and "Infinity" in reasons[3]
    excerpts = {p["line_no"]: p["excerpt"] for p in session.problems}
    assert '"score": NaN' in excerpts[2] and '"took": -Infinity' in excerpts[3]  # text kept
    assert alpha.state_data["mmdCounter"] == "1e400" and alpha.state_data["n"] == 2
    assert alpha.active_mmd_file == "001-a.mmd"

    page = Client().get("/a/alpha/?format=json")
    assert page.status_code == 200
    _strict(page.content)  # the JSON twin stays JSON too


def test_a_pushed_state_out_of_range_never_reaches_state_json(settings, tmp_path: Path) -> None:
    settings.MEMVIZ_PUSH_ROOT = tmp_path / "pushed"
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token_create('remote')}")

    def push(*events: str) -> Any:
        body = "\n".join(events).encode()
        return client.post("/api/stream/remote/", body, content_type="application/x-ndjson")

    canvas_event = json.dumps({"type": "canvas", "name": "001-a.mmd", "text": "flowchart TD\n A"})
    good = push(canvas_event, '{"type": "state", "state": {"activeMmdFile": "001-a.mmd", "n": 1}}')
    assert good.status_code == 200, good.content
    state = tmp_path / "pushed" / "remote" / "state.json"
    before = state.read_bytes()

    for hostile in (
        '{"type": "state", "state": {"n": 1e400}}',
        '{"type": "state", "state": {"n": NaN}}',
        '{"type": "registry", "registry": {"k": {"sessionId": "s", "n": -1e400}}}',
        '{"type": "row", "session": "s-1", "row": {"tool_call_id": "c1", "score": 1e400}}',
    ):
        answer = push(hostile)
        assert answer.status_code == 400, (hostile, answer.content)
        assert answer.json()["errors"][0]["line"] == 1
    assert state.read_bytes() == before
    _strict(state.read_bytes())
    for written in (tmp_path / "pushed").rglob("*"):
        if written.is_file() and written.suffix in (".json", ".jsonl"):
            for line in written.read_bytes().splitlines() or [b"{}"]:
                if line.strip():
                    _strict(line if written.suffix == ".jsonl" else written.read_bytes())

    later = push('{"type": "state", "state": {"activeMmdFile": "001-a.mmd", "n": 2}}')
    assert later.status_code == 200, later.content
    assert _strict(state.read_bytes())["n"] == 2


def test_a_canvas_header_out_of_range_keeps_the_json_twin_json(tmp_path: Path) -> None:
    texts = {"001-a.mmd": '%%{ "taskGoal": "g", "progress": 1e400 }%%\nflowchart TD\n  A[one]\n'}
    write_agent(tmp_path / "root", "main", {"s-1": []}, texts)
    ingest_path(tmp_path / "root")
    answer = Client().get("/a/main/c/001-a.mmd/?format=json")
    assert answer.status_code == 200
    assert _strict(answer.content)["meta"]["values"]["progress"] == "inf"
