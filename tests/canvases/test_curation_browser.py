"""In Debian's chromium: log in, select, merge, annotate, prune, undo; then files, history, resume."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from canvases.mermaid import parse
from intake.ingest import ingest_path
from tests.canvases.browser_login import PASSWORD, USER, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts"
FILE = "002-migrate-orders-api.mmd"


@pytest.fixture
def agent_dir(fixtures_root: Path, django_user_model) -> Path:
    ingest_path(fixtures_root / "fixture-a-upstream")
    django_user_model.objects.create_user(USER, password=PASSWORD)
    return fixtures_root / "fixture-a-upstream" / "main"


def node(page, node_id: str):
    return page.locator(f'.mermaid-host svg g.node[data-memviz-id="{node_id}"]')


def wait_edit(page, text: str) -> None:
    page.wait_for_function(
        "t => (document.querySelector('#flash')?.textContent || '').includes(t)", arg=text
    )
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=20000)


def test_merge_annotate_prune_undo_in_the_browser(live_server, page, agent_dir: Path) -> None:
    url = f"/a/main/c/{FILE}/"
    log_in(page, live_server, url)
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=20000)
    assert page.locator(".mermaid-host svg g.node").count() == 5

    merge_button = page.locator('.edit-toolbar [data-open="merge"]')
    assert merge_button.is_disabled()  # nothing selected: nothing to merge
    node(page, "002-N2").click()
    assert merge_button.is_disabled() and page.locator('[data-open="annotate"]').is_enabled()
    page.keyboard.press("m")
    assert page.locator('.op-form[data-form="merge"]').is_hidden()  # one node: no merge form
    node(page, "002-N3").click(modifiers=["Shift"])
    assert merge_button.is_enabled()
    assert page.locator("#selection-list").inner_text() == "002-N2, 002-N3"
    assert "selected" in (node(page, "002-N3").get_attribute("class") or "")
    assert page.locator("#diagram svg.mc-marks rect").count() == 2  # a ring around each
    page.keyboard.press("?")
    assert page.locator("#shortcut-help").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#shortcut-help").is_visible()
    page.keyboard.press("m")
    merge = page.locator('.op-form[data-form="merge"]')
    assert merge.is_visible()
    merge.locator("input[name=label]").fill("调研与测试: v2 规范 + pytest")
    merge.locator("button[type=submit]").click()
    wait_edit(page, "merge written")
    assert page.locator(".mermaid-host svg g.node").count() == 4
    assert page.locator(".op-form:visible").count() == 0  # forms close after the edit
    assert page.locator(".canvas-head").inner_text().count("4 nodes") == 1
    assert page.locator("#live .stale-note").is_hidden()
    page.screenshot(path=str(ARTIFACTS / "curation-merged.png"))

    node(page, "002-N5").click()
    page.keyboard.press("a")
    page.locator('.op-form[data-form="annotate"] textarea').fill("run the full regression first")
    page.locator('.op-form[data-form="annotate"] button[type=submit]').click()
    wait_edit(page, "annotate written")

    node(page, "002-N4").click()
    page.keyboard.press("Delete")
    prune = page.locator('.op-form[data-form="prune"]')
    prune.locator("input[name=drop_from_context]").check()
    prune.locator("button[type=submit]").click()
    wait_edit(page, "prune written")
    assert page.locator(".mermaid-host svg g.node").count() == 3
    assert node(page, "002-N4").count() == 0

    page.keyboard.press("z")
    wait_edit(page, "undo written")
    assert node(page, "002-N4").count() == 1
    assert page.locator(".mermaid-host svg g.node").count() == 4
    page.screenshot(path=str(ARTIFACTS / "curation-after-undo.png"))

    doc = parse((agent_dir / "mmds" / FILE).read_text("utf-8"))
    assert set(doc.nodes) == {"002-N1", "002-N2", "002-N4", "002-N5"}
    assert doc.nodes["002-N5"].fields.extra["note"] == "run the full regression first"
    assert doc.nodes["002-N2"].fields.title.startswith("调研与测试")
    rows = [
        json.loads(line)
        for path in sorted(agent_dir.glob("offload-*.jsonl"))
        for line in path.read_text("utf-8").splitlines()
        if line.strip()
    ]
    assert not [r for r in rows if r.get("node_id") == "002-N3"]  # re-pointed to 002-N2
    assert all(r.get("offloaded") != "deleted" for r in rows if r.get("node_id") == "002-N4")

    page.goto(f"{live_server.url}{url}history/")
    ops = page.locator("table.revisions tbody tr td:nth-child(4) code").all_inner_texts()
    assert ops == ["undo", "prune", "annotate", "merge", "imported"]
    page.screenshot(path=str(ARTIFACTS / "curation-history.png"))
    page.locator("table.revisions tbody tr", has_text="merge").locator("a").first.click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.static-diagram')].every(d => d.dataset.rendered === 'ok')",
        timeout=20000,
    )
    assert page.locator(".static-diagram g.node.diff-removed").count() == 1
    assert page.locator(".static-diagram g.node.diff-changed").count() == 2
    page.screenshot(path=str(ARTIFACTS / "curation-revision.png"), full_page=True)
    assert page.errors == []


def test_resume_from_canvas_in_the_browser(live_server, page, agent_dir: Path) -> None:
    target = "001-fix-login-timeout.mmd"
    state = agent_dir / "state.json"
    before = state.read_text("utf-8")
    url = f"/a/main/c/{target}/preview/"
    log_in(page, live_server, url)
    block = page.locator("pre.resume-block").inner_text()
    assert block.startswith("<current_task_context>")
    assert f"**任务文件:** {target}" in block
    assert (agent_dir / "mmds" / target).read_text("utf-8") in block
    page.screenshot(path=str(ARTIFACTS / "curation-resume-preview.png"), full_page=True)
    page.locator("form.resume-form button[type=submit]").click()
    page.wait_for_selector(".messages li")
    assert "is now the active canvas" in page.locator(".messages").inner_text()
    after = state.read_text("utf-8")
    assert json.loads(after)["activeMmdFile"] == target
    assert after == before.replace('"002-migrate-orders-api.mmd"', f'"{target}"').replace(
        '"migrate-orders-api"', '"fix-login-timeout"'
    )
    assert page.locator(".badge.active").count() == 1
    assert page.errors == []
