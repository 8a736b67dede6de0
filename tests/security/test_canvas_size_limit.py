"""Issue 22 item 8: a canvas over MEMVIZ_CANVAS_MAX_BYTES is not sent whole to anyone who may view
it (a 51 MB canvas gave a 206 MB JSON answer): its pages show a short summary and a link to the
file, which is streamed from disk with the same confinement as every canvas read."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from django.test import Client

from intake.ingest import ingest_path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "debug"))
from memory_factory import canvas, node, write_agent  # noqa: E402

from tests.pages import streamed

pytestmark = pytest.mark.django_db
BIG = "001-big.mmd"
SMALL = "002-small.mmd"
MARK = "UNIQUE-LABEL-TEXT"


@pytest.fixture
def folder(tmp_path: Path, settings) -> Path:
    settings.MEMVIZ_CANVAS_MAX_BYTES = 20_000
    lines = [node(f"001-N{k}", f"{MARK} step {k}", "done" if k % 2 else "doing", 1) for k in range(300)]
    texts = {BIG: canvas("big", lines), SMALL: canvas("small", [node("002-N1", "one", "todo", 2)])}
    folder = write_agent(tmp_path / "root", "main", {"s-1": []}, texts, active=BIG)
    past = time.time() - 3600
    for path in folder.rglob("*"):
        os.utime(path, (past, past))
    ingest_path(tmp_path / "root")
    return folder


def test_a_canvas_over_the_limit_answers_a_summary_and_a_raw_link(folder: Path) -> None:
    size = (folder / "mmds" / BIG).stat().st_size
    assert size > 20_000
    client = Client()
    base = f"/a/main/c/{BIG}/"
    for url in (base, f"{base}preview/", f"{base}lint/", f"{base}compare/", f"{base}history/1/"):
        page = client.get(url)
        assert page.status_code == 200, url
        body = page.content.decode()
        assert "too large" in body and f"{base}raw/" in body, url
        assert "300 nodes" in body, url
        assert MARK not in body and len(body) < 20_000, url
    answer = client.get(f"{base}?format=json").json()
    assert answer == {
        "agent": "main",
        "file": BIG,
        "too_large": True,
        "size": size,
        "limit": 20_000,
        "nodes": 300,
        "status_counts": {"doing": 150, "done": 150},
        "raw": f"{base}raw/",
    }
    small = client.get(f"/a/main/c/{SMALL}/?format=json").json()
    assert "too_large" not in small and small["nodes"][0]["id"] == "002-N1"


def test_the_raw_download_streams_the_file_and_follows_no_link(folder: Path, tmp_path: Path) -> None:
    client = Client()
    raw = client.get(f"/a/main/c/{BIG}/raw/")
    assert raw.status_code == 200 and raw.streaming
    assert streamed(raw) == (folder / "mmds" / BIG).read_bytes()
    assert raw["Content-Disposition"].startswith("attachment")
    assert raw["Content-Type"].startswith("text/plain")

    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-raw", "utf-8")
    (folder / "mmds" / SMALL).unlink()
    (folder / "mmds" / SMALL).symlink_to(secret)
    refused = client.get(f"/a/main/c/{SMALL}/raw/")
    assert refused.status_code == 404
    assert b"TOPSECRET" not in refused.content
    assert client.get("/a/main/c/..%2Fstate.json/raw/").status_code == 404
    assert client.get("/a/main/c/003-not-indexed.mmd/raw/").status_code == 404
