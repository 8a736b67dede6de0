"""Every table of what memviz says below Django is one shape (`canvases/mermaid/code_words.py`):
a code's English words for scripts and logs, the same words translated on the pages
(`memviz/said.py`). What the index kept is read back without failing: a code a newer memviz
wrote, or values that no longer fit the words, read as the English kept beside them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client
from django.utils import translation

from agentfs import wording as reader_wording
from canvases.mermaid import wording as engine_wording
from canvases.mermaid.code_words import CodeWords
from canvases.messages import problem_text
from debugging import diagnostics
from intake import archive
from intake.ingest import ingest_path
from memviz.said import said, said_or
from sessions import job_words
from sessions.models import AgentSession
from sessions.reader_words import line_problem_item, refused_item

TABLES = [
    reader_wording.TEXTS,
    engine_wording.TEXTS,
    archive.TEXTS,
    job_words.TEXTS,
    diagnostics.DETAILS,
]


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.home)
def test_each_table_says_every_code_in_english_and_in_chinese(table: CodeWords) -> None:
    for code, text in table.items():
        names = re.findall(r"%\((\w+)\)[sr]", text)
        values = {name: f"<{name}>" for name in names}
        with translation.override("en"):
            assert said(table, code, values) == table.words(code, values)
        with translation.override("zh-hans"):
            chinese = said(table, code, values)
        assert chinese != table.words(code, values), (table.home, code)
        assert all(f"<{name}>" in chinese for name in names), (table.home, code)


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.home)
def test_an_unknown_code_names_the_table_it_is_missing_from(table: CodeWords) -> None:
    with pytest.raises(KeyError, match=re.escape(table.home)):
        table.words("no_such_code")
    with pytest.raises(KeyError, match=re.escape(table.home)):
        said(table, "no_such_code")
    assert said_or(table, "no_such_code", {}, "kept words") == "kept words"


def test_values_that_no_longer_fit_read_as_the_english_kept_beside_them() -> None:
    """A row written by another memviz version: the code is known, its values are not."""
    with translation.override("zh-hans"):
        line = {"line_no": 3, "kind": "invalid", "code": "too_deep", "values": {}, "reason": "deep"}
        assert line_problem_item(line)["reason"] == "deep"
        canvas = {"line": 2, "code": "subgraph_open", "values": {"x": 1}, "message": "open g1"}
        assert problem_text(canvas) == "open g1"
        refusal = {"code": "too_large", "values": ["not", "a", "mapping"], "reason": "too big"}
        assert refused_item(refusal) == {"code": "", "text": "too big"}
        assert said_or(archive.TEXTS, "unreadable", None, "kept") == "kept"


@pytest.mark.django_db
def test_the_session_page_reads_a_problem_whose_values_no_longer_fit(
    client: Client, tmp_path: Path
) -> None:
    agent = tmp_path / "root" / "main"
    agent.mkdir(parents=True)
    (agent / "offload-s1.jsonl").write_text('{"summary": "no id"}\n', "utf-8")
    ingest_path(tmp_path / "root")
    stored = {"line_no": 1, "offset": 0, "kind": "invalid", "code": "line_too_long",
              "values": {"length": 9}, "reason": "line too long (kept English)", "excerpt": "{"}
    AgentSession.objects.filter(session_id="s1").update(problems=[stored])
    answer = client.get("/a/main/s/s1/?format=json", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert answer.status_code == 200
    assert [p["reason"] for p in answer.json()["session"]["problems"]] == [
        "line too long (kept English)"
    ]
    page = client.get("/a/main/s/s1/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert page.status_code == 200 and "line too long (kept English)" in page.content.decode()
