"""Branch, then resume, read through the agent's own rules (spec §4.8.1, §4.8.2, §4.8.7, §5):
after the resume the agent's next session loads state.json, injects the branch canvas (not the
one it came from), and its map-builder's fallback places unmapped rows on the branch."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.test import Client

from intake.ingest import ingest_path
from tests.canvases.agent_doubles import FakeAgent
from tests.pages import attr, one

pytestmark = pytest.mark.django_db
_spec = importlib.util.spec_from_file_location(
    "reference", Path(__file__).with_name("reference.py")
)
assert _spec and _spec.loader
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)

SOURCE = "002-migrate-orders-api.mmd"
SESSION = "b7e4d2a0-1c9f-4e63-a8d5-2f0c7b9e6d14"


def test_after_branch_and_resume_the_agent_injects_the_branch(fixtures_root: Path) -> None:
    ingest_path(fixtures_root / "fixture-a-upstream")
    folder = fixtures_root / "fixture-a-upstream" / "main"
    source_text = (folder / "mmds" / SOURCE).read_text("utf-8")
    client = Client()
    client.force_login(User.objects.create_user("gus", password="pw"))

    answer = client.post("/a/main/branch/", {"file": SOURCE, "revision": "1"}, follow=True)
    branch = "003-migrate-orders-api-r1.mmd"
    assert answer.redirect_chain == [(f"/a/main/c/{branch}/preview/", 302)]
    page = BeautifulSoup(answer.content, "html.parser")
    text = (folder / "mmds" / branch).read_text("utf-8")
    # the resume preview memviz already has, for the branch: exactly what the agent will inject
    assert one(page, "pre.resume-block").get_text() == reference.block(branch, text)
    form = one(page, "form.resume-form")
    assert client.post(attr(form, "action"), {}).status_code == 302

    # §5 / §4.8.7: the next session manager reads state.json once: defaults merged with the file
    defaults = {"activeMmdFile": None, "activeMmdId": None, "mmdCounter": 0}
    loaded = defaults | json.loads((folder / "state.json").read_text("utf-8"))
    assert loaded == defaults | FakeAgent(folder, SESSION).state
    active = loaded["activeMmdFile"]
    assert (active, loaded["activeMmdId"], loaded["mmdCounter"]) == (
        branch,
        "migrate-orders-api-r1",
        2,
    )
    # §4.8.1: it reads mmds/<activeMmdFile> and injects it; the goal comes from the strict line 1
    injected = reference.block(active, (folder / "mmds" / active).read_text("utf-8"))
    assert injected is not None and f"**任务文件:** {branch}" in injected
    assert f"**任务目标:** {reference.goal(source_text)}" in injected
    assert "```mermaid\n" + text + "\n```" in injected and SOURCE not in injected
    assert reference.index_ids(text) and not [
        i for i in reference.map_ids(text) if i.startswith("002-")
    ]
    # §4.8.2: rows its map-builder leaves unmapped go to the branch, never to the source canvas
    assert reference.fallback(text, "003") == "003-N5"
    assert (folder / "mmds" / SOURCE).read_text("utf-8") == source_text
