"""The agent page of a long-lived agent: canvases a page at a time, newest first."""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.test import Client

from intake.ingest import ingest_path
from sessions.selectors import AGENT_CANVASES

pytestmark = pytest.mark.django_db


def test_canvases_are_listed_newest_first_a_page_at_a_time(client: Client, tmp_path: Path) -> None:
    agent_dir = tmp_path / "root" / "year"
    (agent_dir / "mmds").mkdir(parents=True)
    (agent_dir / "offload-s.jsonl").write_text('{"tool_call_id": "a"}\n', "utf-8")
    names = [f"{i:03d}-task.mmd" for i in range(1, 61)]
    for name in names:
        (agent_dir / "mmds" / name).write_text(f'flowchart TD\n    {name[:3]}-N1["x"]\n', "utf-8")
    ingest_path(tmp_path / "root")
    shown = AGENT_CANVASES
    first = client.get("/a/year/?format=json").json()
    assert [c["file"] for c in first["canvases"]] == names[::-1][:shown]
    assert first["canvases_more"] == names[60 - shown]
    page = BeautifulSoup(client.get("/a/year/").content, "html.parser")
    link = page.select_one("p.more a[href*=canvases_before]")
    assert link is not None
    listed = [c["file"] for c in first["canvases"]]
    while link is not None:
        page_json = client.get(f"/a/year/{link['href']}&format=json").json()
        listed += [c["file"] for c in page_json["canvases"]]
        page = BeautifulSoup(client.get(f"/a/year/{link['href']}").content, "html.parser")
        link = page.select_one("p.more a[href*=canvases_before]")
    assert listed == names[::-1]
