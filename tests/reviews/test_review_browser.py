"""In chromium, one reviewer's whole flow: a note on a node, a reply, the reviewed mark, a queue
item done, and the note promoted to the canvas annotation the agent reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from tests.conftest import SCREENSHOTS
from tests.debug import diagnosis_fixture as dfx

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
NODE_PAGE = "/a/troubled/c/001-fix-tests.mmd/n/001-N2/"
TODO = "#review-queue > ol.queue > li.queue-item"  # the open items (decided ones are listed apart)


def test_note_reply_reviewed_queue_done_promote(live_server, page, tmp_path: Path) -> None:
    dfx.build(tmp_path / "root")
    mmd = tmp_path / "root" / "troubled" / "mmds" / "001-fix-tests.mmd"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    signed_in = Client()  # a session without hashing a password (the login form has its tests)
    signed_in.force_login(User.objects.create_user("rev"))
    cookie = signed_in.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
    )
    page.goto(f"{live_server.url}{NODE_PAGE}")
    thread = page.locator(".node-detail .review-thread")

    thread.locator("form.note-form textarea").fill("npm test fails <b>twice</b>: flaky?")
    thread.locator("form.note-form button").click()
    note = thread.locator("ol.notes > li.note").first
    note.locator(".note-text", has_text="<b>twice</b>").wait_for(timeout=10000)
    note.locator("form.reply-form textarea").fill("CI runner was down")
    note.locator("form.reply-form button").click()
    note.locator(".replies .note-text", has_text="CI runner was down").wait_for(timeout=10000)
    thread.locator("form.mark button").click()
    thread.locator(".badge.reviewed", has_text="rev").wait_for(timeout=10000)
    assert mmd.read_text("utf-8").count("flaky") == 0  # nothing of it in the agent's file

    page.goto(f"{live_server.url}/a/troubled/review/")
    loop = page.locator(f"{TODO}[data-kind=loop]")
    before = page.locator(TODO).count()
    assert loop.count() == 1 and before > 1
    loop.locator("button[data-state=done]").click()
    page.wait_for_function(f"() => document.querySelectorAll('{TODO}').length === {before - 1}")
    assert page.locator(f"{TODO}[data-kind=loop]").count() == 0
    page.locator(".queue-decided summary").click()
    assert page.locator(".queue-decided li[data-kind=loop][data-state=done]").count() == 1
    page.locator("#review-notes .note-text", has_text="CI runner").wait_for()
    page.screenshot(path=str(SCREENSHOTS / "review-queue.png"), full_page=True)
    page.reload()  # done is kept
    assert page.locator(TODO).count() == before - 1

    page.goto(f"{live_server.url}{NODE_PAGE}")
    page.on("dialog", lambda dialog: dialog.accept())
    page.locator(".review-thread ol.notes > li.note form.promote button").first.click()
    page.locator(".review-thread .badge.promoted").first.wait_for(timeout=15000)
    assert "flaky?" in mmd.read_text("utf-8")  # now the agent reads it
    page.screenshot(path=str(SCREENSHOTS / "review-node.png"), full_page=True)
    assert page.errors == []
