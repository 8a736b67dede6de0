"""cl100k_base counts: equal to an independent implementation's on the fixture texts, offline."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from canvases.mermaid import tokens
from tests.conftest import FIXTURE_ROOTS, REPO

JS_TIKTOKEN = REPO / "node_modules" / "js-tiktoken"


def fixture_texts() -> list[str]:
    texts = []
    for path in sorted(FIXTURE_ROOTS.rglob("*")):
        if path.suffix in {".md", ".mmd", ".jsonl", ".json"} and path.is_file():
            text = path.read_text("utf-8", errors="replace")
            texts.append(text)
            if path.suffix == ".jsonl":  # the summaries one by one as well
                texts += [summary(line) for line in text.splitlines()]
    return texts


def summary(line: str) -> str:
    try:
        row = json.loads(line)
    except ValueError:
        return line  # the fixtures' corrupt lines are texts too
    return str(row.get("summary", "")) if isinstance(row, dict) else line


def js_counts(texts: list[str], tmp_path: Path) -> list[int]:
    """Counts by npm's js-tiktoken, which ships its own copy of the cl100k_base ranks."""
    if shutil.which("node") is None or not JS_TIKTOKEN.is_dir():
        pytest.fail("node and node_modules/js-tiktoken are needed: run `make setup`")
    source = tmp_path / "texts.json"
    source.write_text(json.dumps(texts), "utf-8")
    script = (
        "const {getEncoding} = require('js-tiktoken');"
        "const enc = getEncoding('cl100k_base');"
        "const texts = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));"
        "console.log(JSON.stringify(texts.map(t => enc.encode(t, [], []).length)));"
    )
    out = subprocess.run(
        ["node", "-e", script, str(source)], cwd=REPO, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def test_counts_equal_js_tiktoken_on_every_fixture_text(tmp_path: Path) -> None:
    texts = fixture_texts()
    assert len(texts) > 40 and any("\u4e00" <= ch <= "\u9fff" for ch in "".join(texts))
    texts.append("<|endoftext|> is text here, not a special token")
    expected = js_counts(texts, tmp_path)
    assert [tokens.token_count(t) for t in texts] == expected
    assert tokens.token_counts(texts) == expected


def test_known_token_ids() -> None:
    assert tokens.encoding().encode_ordinary("hello world") == [15339, 1917]
    assert tokens.token_count("") == 0


def test_the_ranks_load_without_any_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the token counter tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    tokens.encoding.cache_clear()
    assert tokens.token_count("缓存命中率 cache hit rate") > 0
