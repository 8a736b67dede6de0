"""Why a line of a session file is not a row, or why a file was refused, is a code with its
values (agentfs/wording.py): English for scripts and logs, the reader's language on the
session and agent pages, the code in their JSON."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from django.test import Client
from django.utils import translation

from agentfs import paths, wording
from agentfs.jsonl import LineProblem, parse_line
from agentfs.paths import LinkRefused, open_regular
from intake.ingest import ingest_path
from sessions.models import Agent
from sessions.reader_words import line_problem_item


def test_every_reason_reads_in_both_languages_with_its_values() -> None:
    for code, text in wording.TEXTS.items():
        names = re.findall(r"%\((\w+)\)[sr]", text)
        values = {name: f"<{name}>" for name in names}
        stored = {"line_no": 1, "kind": "invalid", "code": code, "values": values}
        with translation.override("en"):
            english = line_problem_item(stored)["reason"]
        with translation.override("zh-hans"):
            chinese = line_problem_item(stored)["reason"]
        assert english == wording.words(code, values)
        assert chinese != english, code
        assert all(f"<{name}>" in chinese for name in names), code


def test_a_bad_line_says_why_by_code_without_django() -> None:
    problem = parse_line(b'{"summary": "no id"}', 4, 120)
    assert isinstance(problem, LineProblem)
    assert (problem.code, problem.values, problem.kind) == ("no_tool_call_id", {}, "invalid")
    assert problem.reason == "missing tool_call_id"
    deep = parse_line(b"[" * 70 + b"]" * 70, 5, 0)
    assert isinstance(deep, LineProblem)
    assert (deep.code, deep.values) == ("too_deep", {"limit": 64})
    assert deep.reason == "nested more than 64 levels deep"


def test_a_refused_file_carries_its_code(tmp_path: Path) -> None:
    (tmp_path / "real.jsonl").write_text("{}\n")
    os.symlink(tmp_path / "real.jsonl", tmp_path / "link.jsonl")
    with pytest.raises(LinkRefused) as refused:
        open_regular(tmp_path / "link.jsonl")
    assert refused.value.code == "is_link"
    assert str(refused.value) == wording.words("is_link", refused.value.values)
    assert "symbolic link" in str(refused.value)


def test_a_problem_indexed_before_codes_keeps_its_reason() -> None:
    old = {"line_no": 2, "offset": 9, "kind": "corrupt", "reason": "invalid JSON: x", "excerpt": "{"}
    with translation.override("zh-hans"):
        item = line_problem_item(old)
    assert (item["reason"], item["code"], item["kind_words"]) == ("invalid JSON: x", "", "已损坏")


@pytest.fixture
def bad_session(tmp_path: Path) -> Path:
    agent = tmp_path / "root" / "main"
    (agent / "mmds").mkdir(parents=True)
    (agent / "mmds" / "001-t.mmd").write_text('flowchart TD\n  001-N1["a"]\n', "utf-8")
    good = {"tool_call_id": "c1", "tool_call": "ls", "summary": "ok", "node_id": "001-N1",
            "timestamp": "2026-06-10T09:00:00.000+08:00", "score": 5}
    lines = [json.dumps(good), '{"summary": "heartbeat"}', "{not json", '{"tool_call_id": "c2"']
    (agent / "offload-s1.jsonl").write_text("\n".join(lines), "utf-8")  # no final newline
    (agent / "state.json").write_text('{"activeMmdFile": "001-t.mmd"}')
    long_ago = 1_700_000_000
    for path in agent.rglob("*"):
        os.utime(path, (long_ago, long_ago))
    ingest_path(tmp_path / "root")
    return agent


@pytest.mark.django_db
def test_the_session_page_says_why_lines_are_not_rows_in_the_readers_language(
    client: Client, bad_session: Path
) -> None:
    english = client.get("/a/main/s/s1/?format=json").json()["session"]["problems"]
    by_line = {p["line_no"]: p for p in english}
    assert by_line[2]["code"] == "no_tool_call_id" and by_line[2]["reason"] == "missing tool_call_id"
    assert by_line[3]["code"] == "invalid_json" and by_line[3]["kind"] == "corrupt"
    assert by_line[4]["code"] == "incomplete_last_line" and by_line[4]["kind"] == "partial"
    chinese = client.get("/a/main/s/s1/?format=json", HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    by_line = {p["line_no"]: p for p in chinese["session"]["problems"]}
    assert by_line[2]["reason"] == "缺少 tool_call_id" and by_line[2]["kind_words"] == "无效"
    assert by_line[3]["reason"].startswith("无效的 JSON：")
    assert by_line[4]["kind_words"] == "未写完"
    for url in ("/a/main/s/s1/", "/a/main/"):
        html = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
        assert "缺少 tool_call_id" in html and "missing tool_call_id" not in html, url


@pytest.mark.django_db
def test_the_agent_page_names_refused_files_in_the_readers_language(
    client: Client, bad_session: Path
) -> None:
    """A linked canvas and a canvas too large to read are left out by code; the agent page
    names them in the reader's language and its JSON carries the code. A refusal indexed
    before refusals had codes (a sentence) still reads as it was."""
    (bad_session / "mmds" / "002-big.mmd").write_text("flowchart TD\n" + "x" * 64, "utf-8")
    os.symlink(bad_session / "mmds" / "001-t.mmd", bad_session / "mmds" / "003-link.mmd")
    saved, paths.READ_LIMIT = paths.READ_LIMIT, 40
    try:
        ingest_path(bad_session.parent)
    finally:
        paths.READ_LIMIT = saved
    shown = client.get("/a/main/?format=json").json()["refused_links"]
    assert {(r["code"], r["text"].split(" ")[0]) for r in shown} >= {
        ("is_link", "mmds/003-link.mmd"),
        ("too_large", "mmds/002-big.mmd:"),
    }
    chinese = client.get("/a/main/?format=json", HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    texts = {r["code"]: r["text"] for r in chinese["refused_links"]}
    assert texts["too_large"] == "mmds/002-big.mmd: 002-big.mmd 超过 40 字节"
    assert "symbolic link" not in texts["is_link"] and "mmds/003-link.mmd" in texts["is_link"]
    html = client.get("/a/main/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "未读取：mmds/002-big.mmd: 002-big.mmd 超过 40 字节" in html
    Agent.objects.filter(slug="main").update(refused_links=["mmds/x.mmd is a symbolic link"])
    old = client.get("/a/main/?format=json").json()["refused_links"]
    assert old == [{"code": "", "text": "mmds/x.mmd is a symbolic link"}]


@pytest.mark.django_db
def test_the_agent_page_says_why_state_and_registry_were_not_used(
    client: Client, bad_session: Path
) -> None:
    (bad_session / "state.json").write_text("\ufeff{}", "utf-8")
    (bad_session / "sessions-registry.json").write_text('{"k1": "garbage"}', "utf-8")
    ingest_path(bad_session.parent)
    agent = Agent.objects.get(slug="main")
    assert agent.state_error == "state.json starts with a BOM (the plugin treats it as corrupt)"
    assert agent.registry_error == (
        "sessions-registry.json: entries that are not objects were skipped: k1"
    )
    english = client.get("/a/main/?format=json").json()
    assert (english["state"]["error_code"], english["registry_error_code"]) == (
        "json_bom",
        "registry_skipped",
    )
    chinese = client.get("/a/main/?format=json", HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    assert chinese["state"]["error"] == "state.json 以 BOM 开头（插件会把它当作已损坏）"
    assert chinese["registry_error"] == "sessions-registry.json: 已跳过不是对象的条目：k1"
    html = client.get("/a/main/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "以 BOM 开头" in html and "were skipped" not in html
    # an agent indexed before these had codes keeps its English words
    Agent.objects.filter(slug="main").update(state_problem={}, state_error="state.json is odd")
    assert client.get("/a/main/?format=json").json()["state"]["error"] == "state.json is odd"
