""" "Promote to canvas annotation": the note becomes exactly the annotate revision of the canvas
write path; until then the canvas the agent reads never holds it."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from canvases.mermaid import edits
from canvases.mermaid.agent_view import injected_block
from canvases.models import Revision
from reviews.models import ReviewNote
from sessions.models import Canvas
from tests.debug import diagnosis_fixture as dfx

pytestmark = pytest.mark.django_db
FILE = "001-fix-tests.mmd"
TEXT = 'retry with "--runInBand" <b>first</b>'


def test_promote_writes_exactly_the_annotate_revision(tmp_path: Path) -> None:
    dfx.build(tmp_path / "root")
    mmd = tmp_path / "root" / "troubled" / "mmds" / FILE
    client = Client()
    client.force_login(User.objects.create_user("ann"))
    before = mmd.read_text("utf-8")
    known = set(Revision.objects.values_list("pk", flat=True))  # ingest's own
    base = {"kind": "node", "scope": FILE, "item": "001-N2"}
    client.post("/a/troubled/review/note/", {**base, "text": TEXT})
    client.post("/a/troubled/review/note/", {"kind": "session", "scope": dfx.BAD, "text": TEXT})
    note, session_note = ReviewNote.objects.order_by("id")
    # a note alone changes nothing the agent reads
    assert mmd.read_text("utf-8") == before
    assert set(Revision.objects.values_list("pk", flat=True)) == known

    answer = client.post(f"/a/troubled/review/notes/{note.pk}/promote/?format=json")
    assert answer.status_code == 200, answer.content
    revision = Revision.objects.exclude(pk__in=known).get()
    expected = edits.annotate(before, "001-N2", TEXT).text
    assert (revision.op, revision.params, revision.author) == (
        "annotate",
        {"node": "001-N2", "text": TEXT},
        "ann",
    )
    assert revision.before_text == before and revision.after_text == expected
    assert mmd.read_text("utf-8") == expected == Canvas.objects.get(filename=FILE).text
    assert answer.json() == {"revision": revision.number, "op": "annotate", "note": note.pk}
    block = injected_block(FILE, mmd.read_text("utf-8"))
    assert block is not None and "--runInBand" in block
    note.refresh_from_db()
    assert note.promoted_revision == revision.number

    # once only, and only notes on a node
    assert (
        client.post(f"/a/troubled/review/notes/{note.pk}/promote/?format=json").status_code == 409
    )
    refused = client.post(f"/a/troubled/review/notes/{session_note.pk}/promote/?format=json")
    assert refused.status_code == 400
    assert Revision.objects.count() == len(known) + 1 and mmd.read_text("utf-8") == expected
    assert Client().post(f"/a/troubled/review/notes/{note.pk}/promote/?format=json").status_code == 403
