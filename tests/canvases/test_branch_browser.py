"""In Debian's chromium: branch from a revision on the history page, resume on the branch from
its preview, then find it in the agent page's branch tree."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from canvases import services
from intake.ingest import ingest_path
from sessions.models import Canvas
from tests.canvases.browser_login import PASSWORD, USER, log_in
from tests.conftest import SCREENSHOTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

FILE = "002-migrate-orders-api.mmd"
BRANCH = "003-migrate-orders-api-r1.mmd"


def test_branch_from_history_then_resume_then_the_tree(
    live_server, page, fixtures_root: Path, django_user_model
) -> None:
    ingest_path(fixtures_root / "fixture-a-upstream")
    folder = fixtures_root / "fixture-a-upstream" / "main"
    user = django_user_model.objects.create_user(USER, password=PASSWORD)
    canvas = Canvas.objects.get(filename=FILE)
    services.canvas_apply_edit(  # r2: 002-N3 merged away; r1 still has it
        canvas=canvas,
        op="merge",
        params={"nodes": ["002-N2", "002-N3"]},
        base_hash=canvas.content_hash,
        user=user,
    )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    history = f"/a/main/c/{FILE}/history/"
    log_in(page, live_server, history)
    page.screenshot(path=str(SCREENSHOTS / "branch-history.png"))

    page.locator('table.revisions tr[data-revision="1"] .branch-form button').click()
    page.wait_for_url(f"**/a/main/c/{BRANCH}/preview/")
    assert BRANCH in page.locator("ul.messages li.success").inner_text()
    text = (folder / "mmds" / BRANCH).read_text("utf-8")
    assert page.locator("pre.resume-block").inner_text().count("003-N3") == text.count("003-N3") > 0
    page.screenshot(path=str(SCREENSHOTS / "branch-preview.png"), full_page=True)

    page.locator("form.resume-form button.primary").click()
    page.wait_for_selector("ul.messages li.success")
    assert json.loads((folder / "state.json").read_text("utf-8"))["activeMmdFile"] == BRANCH

    page.goto(f"{live_server.url}/a/main/")
    tree = page.locator(".branch-tree")
    assert tree.locator(f'li[data-file="{FILE}"] > a').inner_text() == FILE
    child = tree.locator(f'li[data-file="{FILE}"] li[data-file="{BRANCH}"]')
    assert "from r1" in child.locator(".branch-origin").inner_text()
    assert page.locator(f'table.grid tr.active a[href$="/c/{BRANCH}/"]').count() == 1
    page.locator("#branches").scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "branch-agent-tree.png"), full_page=True)
    assert page.errors == []
