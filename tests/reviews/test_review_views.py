"""Writing review notes over HTTP: signed-in users only, CSRF checked, hostile text shown as text
on every page that shows it, and JSON twins of the thread and the review page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.test import Client

from reviews.models import ReviewMark, ReviewNote
from tests.debug import diagnosis_fixture as dfx
from tests.pages import one

pytestmark = pytest.mark.django_db
HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">'
NODE = {"kind": "node", "scope": "001-fix-tests.mmd", "item": "001-N2"}
ROW = {"kind": "row", "scope": dfx.BAD}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    dfx.build(tmp_path / "root")
    return tmp_path / "root"


def test_anonymous_writes_are_refused_and_store_nothing(root: Path) -> None:
    client = Client()
    for url, data in [
        ("/a/troubled/review/note/", {**NODE, "text": "hi"}),
        ("/a/troubled/review/mark/", {**NODE, "reviewed": "1"}),
        ("/a/troubled/review/queue/", {"key": "x", "state": "done"}),
    ]:
        # a browser's form goes to the login page; a script gets 403 with the reason
        assert client.post(url, data, HTTP_REFERER="http://testserver/a/troubled/")["Location"] == (
            "/login/?next=/a/troubled/"
        )
        refused = client.post(url + "?format=json", data)
        assert refused.status_code == 403 and "log in" in refused.json()["error"]
    assert not ReviewNote.objects.exists() and not ReviewMark.objects.exists()
    # the pages offer no forms to the anonymous
    page = client.get("/a/troubled/c/001-fix-tests.mmd/n/001-N2/")
    assert page.status_code == 200 and b"review-note" not in page.content
    assert "Log in to write notes." in page.content.decode()


def test_writes_need_the_csrf_token(root: Path) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.create_user("ann"))
    assert client.post("/a/troubled/review/note/", {**NODE, "text": "no token"}).status_code == 403
    page = client.get("/a/troubled/c/001-fix-tests.mmd/n/001-N2/")
    token = one(BeautifulSoup(page.content, "html.parser"), "form.note-form input[name=csrfmiddlewaretoken]")["value"]
    answer = client.post(
        "/a/troubled/review/note/?format=json",
        {**NODE, "text": "with token", "csrfmiddlewaretoken": token},
    )
    assert answer.status_code == 201
    assert answer.json()["thread"]["notes"][0]["text"] == "with token"
    assert list(ReviewNote.objects.values_list("text", flat=True)) == ["with token"]


def test_hostile_note_text_is_shown_as_text_everywhere(root: Path) -> None:
    client = Client()
    client.force_login(User.objects.create_user("ann"))
    row = {"kind": "row", "scope": dfx.BAD, "item": "2"}
    session = {"kind": "session", "scope": dfx.BAD, "item": ""}
    for target in (NODE, row, session):
        answer = client.post(
            "/a/troubled/review/note/", {**target, "text": HOSTILE}, headers={"HX-Request": "true"}
        )
        assert answer.status_code == 200 and b"<script>alert" not in answer.content
    client.post("/a/troubled/review/mark/", {**row, "reviewed": "1"})
    pages = [
        "/a/troubled/c/001-fix-tests.mmd/n/001-N2/",
        f"/a/troubled/s/{dfx.BAD}/",
        "/a/troubled/review/",
        "/a/troubled/review/?q=onerror",
        f"/a/troubled/review/thread/?kind=row&scope={dfx.BAD}&item=2",
    ]
    for url in pages:
        html = client.get(url).content.decode()
        soup = BeautifulSoup(html, "html.parser")
        texts = [t.get_text() for t in soup.select(".note-text")]
        assert HOSTILE in texts, url  # shown, as the characters typed
        assert not soup.select(".note-text script, .note-text img"), url
    # the session page marks the row that has a note and is reviewed, and holds the session's thread
    soup = BeautifulSoup(client.get(f"/a/troubled/s/{dfx.BAD}/").content, "html.parser")
    opener = soup.select_one("li.row .row-review summary")
    assert opener is not None
    marked = [
        s.get_text() for s in soup.select("li.row .row-review summary") if "✓" in s.get_text()
    ]
    assert marked == ["review notes (1) ✓"]
    assert one(soup, ".session-review .review-thread .note-text").get_text() == HOSTILE
    # and so does the timeline a filter redraws (the htmx partial)
    partial = client.get(f"/a/troubled/s/{dfx.BAD}/?min_score=1", headers={"HX-Request": "true"})
    assert "review notes (1) ✓" in partial.content.decode()


def test_json_twins_and_the_filter(root: Path) -> None:
    client = Client()
    client.force_login(User.objects.create_user("ann"))
    client.post("/a/troubled/review/note/", {**NODE, "text": "flaky npm test"})
    client.post(
        "/a/troubled/review/note/", {"kind": "session", "scope": dfx.BAD, "text": "good run"}
    )
    thread = client.get("/a/troubled/review/thread/", {**NODE, "format": "json"}).json()
    assert thread["target"]["url"] == "/a/troubled/c/001-fix-tests.mmd/n/001-N2/"
    assert [n["author"] for n in thread["notes"]] == ["ann"]
    page = client.get("/a/troubled/review/", {"format": "json", "q": "NPM"}).json()
    assert [n["text"] for n in page["notes"]] == ["flaky npm test"]
    assert {i["kind"] for i in page["queue"]} >= {"loop", "missing_ref"}
    assert client.get("/a/troubled/review/thread/", {**NODE, "item": "nope"}).status_code == 404
    # deciding an item no longer in the queue: JSON says so, htmx redraws the queue with why
    gone = {"key": "0" * 32, "state": "done"}
    assert client.post("/a/troubled/review/queue/?format=json", gone).status_code == 404
    redrawn = client.post("/a/troubled/review/queue/", gone, headers={"HX-Request": "true"})
    queue = one(BeautifulSoup(redrawn.content, "html.parser"), "section#review-queue")
    assert "no longer in the review queue" in one(queue, ".warn").get_text()


def test_a_body_that_cannot_be_read_is_refused_as_every_write_refuses_it(root: Path) -> None:
    """The review writes read their body as canvases' writes do (canvases/op_input.py), and
    answer its refusal (memviz/input_refused.py) with its reason and status, writing nothing."""
    client = Client()
    client.force_login(User.objects.create_user("ann"))
    for body, error in [
        ("{not json", "the request body is not valid JSON"),
        ('["a list"]', "the request body must be a JSON object"),
    ]:
        answer = client.post("/a/troubled/review/note/", body, content_type="application/json")
        assert answer.status_code == 400
        assert answer.json() == {"error": error, "status": 400}
    assert not ReviewNote.objects.exists()


def test_each_review_write_reads_its_fields_by_their_kind(root: Path) -> None:
    """A field of the wrong type is refused with its name (nothing written); a JSON body's
    values and a form's text read the same (a tick box, a reply's note number)."""
    client = Client()
    client.force_login(User.objects.create_user("ann"))

    def post(path: str, body: dict[str, object]) -> tuple[int, dict]:
        answer = client.post(path, json.dumps(body), content_type="application/json")
        return answer.status_code, answer.json()

    for field, value, error in [
        ("text", 5, "'text' must be text"),
        ("reply_to", "first", "'reply_to' must be a number"),
    ]:
        status, body = post("/a/troubled/review/note/", {**NODE, "text": "t", field: value})
        assert (status, body["error"]) == (400, error)
    assert not ReviewNote.objects.exists()
    status, body = post("/a/troubled/review/note/", {**NODE, "text": "first"})
    assert status == 201
    reply = {**NODE, "text": "second", "reply_to": str(body["note"])}  # a form's digits
    assert client.post("/a/troubled/review/note/", reply).status_code == 302
    assert ReviewNote.objects.get(text="second").thread_id == body["note"]
    assert post("/a/troubled/review/mark/", {**NODE, "reviewed": True})[0] == 200
    assert ReviewMark.objects.filter(item="001-N2").exists()
    client.post("/a/troubled/review/mark/", NODE)  # the box left unticked: the mark goes
    assert not ReviewMark.objects.exists()
    # a row's item is its line number: a script sends it as a number or as digits
    for item in (2, "2"):
        status, body = post("/a/troubled/review/note/", {**ROW, "item": item, "text": "row note"})
        assert status == 201, body
    assert ReviewNote.objects.filter(kind="row", item="2").count() == 2
