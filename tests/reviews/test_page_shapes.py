"""The JSON the review pages answer has the shape their typed contexts declare
(reviews/page_types.py): the review page, a thread, and the answers of a note or mark written."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from reviews import selectors, services
from reviews.page_types import MarkItem, ReviewPage, Thread, ThreadPage
from sessions.models import Agent
from tests.debug import diagnosis_fixture as dfx
from tests.shapes import shape_problems

pytestmark = pytest.mark.django_db
NODE = {"kind": "node", "scope": "001-fix-tests.mmd", "item": "001-N2"}


def test_the_review_page_and_thread_json_are_their_typed_contexts(tmp_path: Path) -> None:
    dfx.build(tmp_path / "root")
    agent = Agent.objects.get(slug="troubled")
    ann = User.objects.create_user("ann")
    client = Client()
    client.force_login(ann)
    # a note, a reply, a reviewed mark and a decided queue item: every list has items
    node = selectors.target_get(agent, **NODE)
    row = selectors.target_get(agent, "row", dfx.BAD, "2")
    assert node is not None and row is not None
    first = services.note_add(agent, node, "why blocked?", ann)
    services.note_add(agent, node, "CI was down", ann, reply_to=first.pk)
    services.note_add(agent, row, "look here", ann)
    services.mark_set(agent, row, True, ann)
    services.queue_decide(agent, selectors.queue(agent)[0][0].key, "done", ann)

    page = client.get("/a/troubled/review/", {"format": "json"}).json()
    assert shape_problems(page, ReviewPage) == []
    assert all(page[k] for k in ("queue", "decided", "notes", "reviewed"))
    for kind, scope, item in (tuple(NODE.values()), ("row", dfx.BAD, "2")):
        query = {"kind": kind, "scope": scope, "item": item, "format": "json"}
        thread = client.get("/a/troubled/review/thread/", query).json()
        assert shape_problems(thread, ThreadPage) == [], kind
        assert thread["notes"]
    assert shape_problems(thread["reviewed"], MarkItem) == [] and thread["reviewed"]

    # what a write answers: the thread as the partial draws it
    note = client.post("/a/troubled/review/note/?format=json", {**NODE, "text": "more"})
    assert note.status_code == 201 and shape_problems(note.json()["thread"], Thread) == []
    marked = client.post("/a/troubled/review/mark/?format=json", {**NODE, "reviewed": "1"})
    assert shape_problems(marked.json(), Thread) == []
    assert shape_problems(marked.json()["reviewed"], MarkItem) == [] and marked.json()["reviewed"]
    assert marked.json()["notes"][0]["replies"]
