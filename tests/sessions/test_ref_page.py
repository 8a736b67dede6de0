"""The ref page is built whole by its selector (browse/ref_selectors.py): its JSON is the typed
context key for key, large refs page, and a ref that cannot be shown says why in the reader's
language with its status (a link swapped in after indexing, a file gone, a name not indexed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from browse.ref_selectors import RefPage
from intake.ingest import ingest_path
from tests.shapes import shape_problems

pytestmark = pytest.mark.django_db
REF = "2026-06-10T09-12-03-417p08-00.md"


@pytest.fixture
def upstream(fixtures_root: Path) -> Path:
    ingest_path(fixtures_root / "fixture-a-upstream")
    return fixtures_root / "fixture-a-upstream" / "main"


def test_a_whole_ref_and_a_page_of_a_large_one_answer_the_typed_context(
    client: Client, upstream: Path, settings
) -> None:
    whole = client.get(f"/a/main/refs/{REF}?format=json").json()
    assert shape_problems(whole, RefPage) == []
    assert whole["paged"] is False and whole["result_text"] and whole["next_offset"] is None
    assert whole["text"] == (upstream / "refs" / REF).read_text("utf-8")
    settings.MEMVIZ_REF_PAGE_BYTES = 100
    first = client.get(f"/a/main/refs/{REF}?format=json").json()
    assert shape_problems(first, RefPage) == []
    assert first["paged"] is True and first["next_offset"] and first["prev_offset"] is None
    second = client.get(f"/a/main/refs/{REF}?format=json&offset={first['next_offset']}").json()
    assert second["prev_offset"] == 0 and second["offset"] == first["next_offset"]
    assert first["text"] + second["text"] == (upstream / "refs" / REF).read_text("utf-8")[
        : len(first["text"] + second["text"])
    ]


def test_a_ref_swapped_for_a_link_after_indexing_is_refused_in_the_readers_language(
    client: Client, upstream: Path, tmp_path: Path
) -> None:
    secret = upstream / "secret.md"  # inside the folder: the name resolves, the open refuses
    secret.write_text("top secret")
    (upstream / "refs" / REF).unlink()
    (upstream / "refs" / REF).symlink_to(secret)
    for url in (f"/a/main/refs/{REF}?format=json", f"/a/main/refs/{REF}?raw=1&format=json"):
        answer = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans")
        assert answer.status_code == 400, url
        assert answer.json()["error"].startswith("已拒绝：") and "符号链接" in answer.json()["error"]
        assert "top secret" not in answer.content.decode()
    english = client.get(f"/a/main/refs/{REF}?format=json").json()["error"]
    assert english.startswith("refused: ") and "is a symbolic link" in english
    (upstream / "refs" / REF).unlink()
    (upstream / "refs" / REF).symlink_to(tmp_path)  # out of the folder: refused by its name
    outside = client.get(f"/a/main/refs/{REF}?format=json", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert outside.json()["error"] == f"已拒绝：路径通过链接离开了文件夹：'refs/{REF}'"


def test_a_ref_gone_or_never_indexed_is_a_404_that_says_which(
    client: Client, upstream: Path
) -> None:
    (upstream / "refs" / REF).unlink()
    gone = client.get(f"/a/main/refs/{REF}?format=json", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert gone.status_code == 404 and gone.json()["error"] == "缺失：文件已从磁盘上消失"
    unknown = client.get("/a/main/refs/nope.md?format=json")
    assert unknown.status_code == 404
    assert unknown.json()["error"] == "missing: ref 'nope.md' is not in this agent's folder"
    page = client.get("/a/main/refs/nope.md", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert page.status_code == 404 and "不在这个智能体的文件夹中" in page.content.decode()
