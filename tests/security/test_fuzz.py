"""Item 2 of issue 10: 10,000 seeded, mutated inputs (JSONL lines, canvases, state files, push
bodies) through the readers and the renderer. No exception escapes, nothing is accepted silently
that is not valid, and what reaches mermaid is always safe. MEMVIZ_FUZZ_COUNT scales it up."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest
from django.test import Client

from agentfs.jsonl import LineProblem, Row, parse_line
from agentfs.state import read_state
from canvases.mermaid import parse, render_body
from intake.push_tokens import token_create
from intake.stream import events_parse, split_events

_spec = importlib.util.spec_from_file_location("memviz_fuzz", Path(__file__).with_name("fuzz.py"))
assert _spec is not None and _spec.loader is not None
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)

TOTAL = int(os.environ.get("MEMVIZ_FUZZ_COUNT", 10_000))
PER_KIND = TOTAL // 4
SEED = 10
# What mermaid may see: `<` only as a line break, and none of the statements that fetch or link.
UNSAFE_RENDER = re.compile(
    r"<(?!br>)|%%|^\s*(?:click|accTitle|accDescr)\s|^\s*(?:style|classDef|linkStyle)\b.*(?:url|\\)"
    r"|@\{[^}\n]*\b(?:img|icon)\b",
    re.IGNORECASE | re.MULTILINE,
)


def test_jsonl_lines_are_rows_or_reported_problems() -> None:
    problems = 0
    for number, text in enumerate(fuzz.corpus("jsonl", PER_KIND, SEED), start=1):
        result = parse_line(fuzz.encode(text), number, 0)
        assert result is None or isinstance(result, Row | LineProblem)
        if isinstance(result, Row):
            assert result.tool_call_id and result.line_no == number
        elif result is not None:
            problems += 1
            assert result.reason and result.kind in ("corrupt", "invalid")
    assert problems > PER_KIND // 4  # most mutations break a line, and each one says so


def test_canvases_always_render_safely() -> None:
    for text in fuzz.corpus("mmd", PER_KIND, SEED):
        doc = parse(text)
        bodies = [render_body(text, doc=doc)]
        if doc.subgraphs:
            bodies.append(render_body(text, collapse=[doc.subgraphs[-1].id], doc=doc))
        for body in bodies:
            assert "memviz_render_error" not in body, text  # rendered, not the fallback
            found = UNSAFE_RENDER.search(body)
            assert found is None, (found, text, body)
            assert not any("internal parser error" in p.message for p in parse(body).problems)
        for node in doc.nodes.values():
            assert node.fields is not None


def test_state_files_are_read_or_reported(tmp_path: Path) -> None:
    agent = tmp_path / "main"
    agent.mkdir()
    path = agent / "state.json"
    errors = 0
    for text in fuzz.corpus("state", PER_KIND, SEED):
        path.write_bytes(fuzz.encode(text))
        state = read_state(path)
        if state.error is None:
            assert isinstance(state.data, dict) and fuzz.is_json_object(text)
        else:
            errors += 1
            assert state.data == {}
    assert errors > PER_KIND // 4


def test_push_bodies_fail_event_by_event() -> None:
    for text in fuzz.corpus("push", PER_KIND, SEED):
        lines = split_events(fuzz.encode(text))
        parsed = events_parse(lines)
        accounted = sum(len(v) for v in parsed.rows.values()) + len(parsed.files)
        assert accounted + len(parsed.errors) == len(lines)
        assert all(error["reason"] for error in parsed.errors)


@pytest.mark.django_db
def test_push_api_never_answers_500(tmp_path: Path, settings) -> None:
    settings.MEMVIZ_PUSH_ROOT = tmp_path / "pushed"
    token = token_create("fuzzed")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    for text in fuzz.corpus("push", 60, SEED + 1):
        response = client.post(
            "/api/stream/fuzzed/", fuzz.encode(text), content_type="application/x-ndjson"
        )
        assert response.status_code in (200, 400), (response.status_code, text)
        assert "errors" in response.json()
