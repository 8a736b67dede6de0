"""What the mermaid.js view and the exports fetch: the agent's own bytes, and the text mermaid draws."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.test import Client

from intake.ingest import ingest_path
from tests.debug.memory_factory import canvas, node, write_agent
from tests.pages import streamed

pytestmark = pytest.mark.django_db
FILE = "001-raw.mmd"
# a BOM, CRLF line ends, a line-end space: none of it may be "fixed" in the download
TEXT = "\ufeff" + canvas("发布", [node("A", "调研", "doing", 1), "    A --> B "]).replace("\n", "\r\n")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    agent = write_agent(tmp_path / "root", "rawish", {}, {FILE: TEXT})
    old = 1_000_000_000
    for path in agent.rglob("*"):
        os.utime(path, (old, old))
    ingest_path(tmp_path / "root")
    return agent


def test_the_agents_file_downloads_byte_for_byte(client: Client, folder: Path) -> None:
    response = client.get(f"/a/rawish/c/{FILE}/raw/")
    assert response.status_code == 200
    body = streamed(response)  # any size
    assert body == (folder / "mmds" / FILE).read_bytes() == TEXT.encode("utf-8")
    assert response["Content-Disposition"] == f'attachment; filename="{FILE}"'
    assert response["X-Content-Type-Options"] == "nosniff"


def test_a_canvas_swapped_for_a_link_is_not_followed(client: Client, folder: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the browser", "utf-8")
    (folder / "mmds" / FILE).unlink()
    (folder / "mmds" / FILE).symlink_to(secret)
    response = client.get(f"/a/rawish/c/{FILE}/raw/")
    assert response.status_code == 404
    assert b"not for the browser" not in response.content


def test_the_mermaid_text_is_the_file_minus_its_header_and_status_colours_apart(client: Client, folder: Path) -> None:
    data = client.get(f"/a/rawish/c/{FILE}/mermaid.json").json()
    lines = data["text"].split("\n")
    assert lines[0].startswith("%% ") and "taskGoal" not in data["text"]
    assert lines[1:] == [line.rstrip() for line in TEXT.split("\n")[1:]]  # every other line as written
    assert "mvz_" not in data["text"]
    assert "class A mvz_doing" in data["status"]
