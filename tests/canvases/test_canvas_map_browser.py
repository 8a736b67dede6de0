"""The canvas as a map, in Debian's chromium: overview and focus, minimap, find, deep links,
URL state, keyboard, legend and styles, dark mode, 390 px, the broken-canvas page.

Screenshots go to docs/screenshots/latest/canvas-*.png (looked at when they change).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import pytest

from canvases.mermaid.samples import sample_canvas
from intake.ingest import ingest_path
from tests.conftest import SCREENSHOTS
from tests.page_modules import expose

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

REPO = Path(__file__).resolve().parents[2]

SMALL = "002-migrate-orders-api.mmd"
FLAT = "900-flat-1000.mmd"
NESTED = "800-nested-300.mmd"
BROKEN = "050-broken.mmd"
BROKEN_TEXT = """%%{ "taskGoal": "broken on purpose", "progress": "10" }%%
flowchart TD
    050-N1["start<br/>status: done"]
    050-N2["read config<br/>status: doing
    050-N1 --> 050-N2
    this line is not mermaid at all
    050-N3("finish<br/>status: todo")
    050-N2 --> 050-N3
"""


def flat(text: str) -> str:
    return "\n".join(
        line for line in text.split("\n") if not line.strip().startswith("subgraph") and line.strip() != "end"
    )


@pytest.fixture
def data(fixtures_root: Path, django_user_model) -> Path:
    root = fixtures_root / "fixture-a-upstream"
    mmds = root / "main" / "mmds"
    (mmds / FLAT).write_text(flat(sample_canvas(1000, prefix="900")), encoding="utf-8")
    (mmds / NESTED).write_text(sample_canvas(300, prefix="800"), encoding="utf-8")
    (mmds / BROKEN).write_text(BROKEN_TEXT, encoding="utf-8")
    old = os.stat(mmds / SMALL).st_mtime
    for name in (FLAT, NESTED, BROKEN):
        os.utime(mmds / name, (old, old))
    os.utime(root / "main", (old, old))
    ingest_path(root)
    django_user_model.objects.create_user("erin", password="curate-me")
    return root


def open_canvas(page, live_server, name: str, query: str = "", hash_: str = ""):
    page.goto(f"{live_server.url}/a/main/c/{name}/{query}{hash_}")
    page.wait_for_function("document.body.dataset.canvasRendered === 'ok'", timeout=30000)
    expose(page, "canvas", "nav")


def shot(page, name: str, full_page: bool = False) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=full_page)


def in_view(page, node_id: str) -> bool:
    return page.evaluate(
        """(id) => { const v = mv.canvas.view(), b = mv.canvas.model().boxes.get(id);
        if (!b) return false; const r = v.visibleRect();
        return b.x > r.x && b.x < r.x + r.w && b.y > r.y && b.y < r.y + r.h; }""",
        node_id,
    )


def on_screen_font_px(page) -> float:
    return page.evaluate("mv.canvas.view().scale() * 16")


def url_state(page) -> tuple[list[str] | None, str]:
    parsed = urlparse(page.url)
    query = parse_qs(parsed.query, keep_blank_values=True)
    collapsed = query["collapsed"][0].split(",") if "collapsed" in query else None
    return collapsed, unquote(parsed.fragment)


def test_a_big_flat_canvas_opens_as_a_readable_overview_around_the_doing_node(live_server, page, data) -> None:
    open_canvas(page, live_server, FLAT)
    scene = page.evaluate("mv.canvas.scene()")
    drawn = int(page.evaluate("document.body.dataset.drawnNodes"))
    assert len(scene["nodes"]) == 1000
    assert drawn < 100  # groups of consecutive nodes, one of them open
    assert on_screen_font_px(page) >= 11
    doing = [n for n in scene["nodes"] if n["key"] == "doing"]
    newest = max(doing, key=lambda n: (n["ts"], scene["nodes"].index(n)))
    assert in_view(page, newest["id"])
    # the minimap shows the whole drawing and the part on screen; a click there moves the view
    assert page.locator("#diagram .minimap svg rect.mm-node").count() == drawn
    before = page.evaluate("mv.canvas.view().visibleRect()")
    box = page.locator("#diagram .minimap").bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + 8)
    after = page.evaluate("mv.canvas.view().visibleRect()")
    assert abs(after["y"] - before["y"]) > 10
    page.evaluate("(id) => mv.canvas.reveal(id, {open: false})", newest["id"])
    shot(page, "canvas-overview-1000.png")
    assert not page.errors


def test_find_brings_a_hidden_node_into_view_and_the_url_follows(live_server, page, data) -> None:
    open_canvas(page, live_server, FLAT)
    target = "900-N777"
    assert page.locator(f'#diagram g.node[data-memviz-id="{target}"]').count() == 0
    page.locator("#canvas-search").fill(target)
    page.locator("#canvas-hits button", has_text=target).first.wait_for()
    page.locator("#canvas-search").press("Enter")
    page.locator(f'#node-panel .node-detail[data-node="{target}"]').wait_for(timeout=10000)
    node = page.locator(f'#diagram g.node[data-memviz-id="{target}"]')
    assert node.count() == 1 and "selected" in (node.get_attribute("class") or "")
    assert page.locator("#diagram svg.mc-marks rect").count() == 1
    assert in_view(page, target) and on_screen_font_px(page) >= 11
    collapsed, fragment = url_state(page)
    assert fragment == f"node={target}"
    assert collapsed is not None and all(g not in collapsed for g in page.evaluate(f"mv.canvas.scene().groups.filter(g => mv.canvas.scene().nodes.find(n => n.id === '{target}').group === g.id).map(g => g.id)"))
    shot(page, "canvas-find.png")
    # by status and by summary text (CJK), case-insensitive over id, title, summary, status
    scene = page.evaluate("mv.canvas.scene()")
    blocked = [n["id"] for n in scene["nodes"] if n["key"] == "blocked"]
    assert len(page.evaluate("mv.nav.search('status: BLOCKED')")) == len(blocked)
    hits = page.evaluate("mv.nav.search('硬编码').map(n => n.id)")
    assert hits and all("硬编码" in " ".join(n["lines"]) for n in scene["nodes"] if n["id"] in hits)


def test_deep_links_and_the_node_list_focus_the_canvas(live_server, page, data) -> None:
    target = "800-N140"  # inside a subgraph that the overview keeps collapsed
    open_canvas(page, live_server, NESTED, hash_=f"#node={target}")
    page.locator(f'#node-panel .node-detail[data-node="{target}"]').wait_for(timeout=10000)
    assert in_view(page, target)
    # the node list: a click shows the node on the canvas and names it in the URL
    other = "800-N7"
    path = page.evaluate("location.pathname")
    page.locator(f'.node-list li[data-node="{other}"] a.node-link').click()
    page.locator(f'#node-panel .node-detail[data-node="{other}"]').wait_for(timeout=10000)
    assert page.evaluate("location.pathname") == path  # the panel, not the node's own page
    assert page.locator("#diagram svg.mc-marks rect").count() == 1
    assert in_view(page, other)
    assert url_state(page)[1] == f"node={other}"
    shot(page, "canvas-deep-link.png")


def test_the_node_list_opens_the_panel_when_no_drawing_is_up(live_server, page, data) -> None:
    # The list's links open the panel through canvas.js; with no drawing (it failed, or the
    # fonts are still loading) a click must still open the node, not do nothing.
    # the map module (canvas-view.js) as a drawing that fails: it is served throwing
    page.route(
        "**/static/js/canvas-view*.js",
        lambda route: route.fulfill(
            content_type="text/javascript",
            body='export function attach() { throw new Error("no drawing"); } export const READABLE_PX = 11;',
        ),
    )
    page.goto(f"{live_server.url}/a/main/c/{NESTED}/")
    page.wait_for_function("() => document.querySelector('#diagram svg.mc')")
    expose(page)
    assert page.evaluate("mv.canvas.view()") is None
    other = "800-N7"
    page.locator(f'.node-list li[data-node="{other}"] a.node-link').click()
    page.locator(f'#node-panel .node-detail[data-node="{other}"]').wait_for(timeout=10000)


def test_collapsed_groups_live_in_the_url(live_server, page, data) -> None:
    open_canvas(page, live_server, NESTED)
    groups = page.evaluate("mv.canvas.collapsed()")
    assert groups  # the overview
    page.locator("[data-zoom=fit]").click()
    group = next(g for g in groups if in_view(page, g))
    page.locator(f'#diagram g.node.collapsed-group[data-memviz-id="{group}"]').click()
    page.wait_for_function("(g) => !mv.canvas.collapsed().includes(g)", arg=group)
    collapsed, _ = url_state(page)
    assert collapsed is not None and group not in collapsed
    drawn = page.evaluate("document.body.dataset.drawnNodes")
    page.reload()
    page.wait_for_function("document.body.dataset.canvasRendered === 'ok'", timeout=30000)
    expose(page, "canvas", "nav")
    assert group not in page.evaluate("mv.canvas.collapsed()")
    assert page.evaluate("document.body.dataset.drawnNodes") == drawn
    page.locator('#diagram [data-groups="expand"]').click()
    assert url_state(page)[0] == [""]
    assert int(page.evaluate("document.body.dataset.drawnNodes")) == 300


def test_keyboard_moves_between_nodes_and_opens_one(live_server, page, data) -> None:
    open_canvas(page, live_server, SMALL)
    svg = page.locator("#diagram .mermaid-host svg")
    title_id = svg.get_attribute("aria-labelledby")
    assert page.locator(f"#{title_id}").text_content().startswith("把 orders API")
    names = page.eval_on_selector_all("#diagram g.node", "els => els.map(e => e.getAttribute('aria-label'))")
    assert len(names) == 5 and all(n and n.split(":")[0].startswith("002-N") for n in names)
    page.locator("#canvas-search").focus()
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('#diagram g.node')"):
            break
    first = page.evaluate("document.activeElement.dataset.memvizId")
    assert first == "002-N1"  # reading order: the top node first
    page.keyboard.press("ArrowDown")
    second = page.evaluate("document.activeElement.dataset.memvizId")
    assert second == "002-N2"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.memvizId") == "002-N3"
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    page.locator('#node-panel .node-detail[data-node="002-N2"]').wait_for(timeout=10000)
    assert url_state(page)[1] == "node=002-N2"
    shot(page, "canvas-keyboard.png")


def test_no_status_and_groups_look_unlike_every_status(live_server, page, data) -> None:
    open_canvas(page, live_server, SMALL)
    legend = page.locator("#diagram .map-legend").inner_text()
    assert "no status" in legend and "group (subgraph)" in legend
    fills = page.evaluate(
        """() => {
      const fill = (sel) => { const el = document.querySelector(sel); return el && getComputedStyle(el).fill; };
      const probe = (cls) => { const g = document.createElementNS("http://www.w3.org/2000/svg", "g");
        g.setAttribute("class", "node " + cls); g.innerHTML = '<rect class="shape" width="5" height="5"/>';
        document.querySelector("#diagram svg .nodes").appendChild(g);
        const s = getComputedStyle(g.firstChild); const out = [s.fill, s.stroke, s.strokeDasharray]; g.remove(); return out; };
      const out = {};
      for (const k of ["done", "doing", "todo", "paused", "blocked", "other", "none"]) out[k] = probe("mvz_" + k);
      out.group = [fill("#diagram .cluster-box"), getComputedStyle(document.querySelector("#diagram .cluster-box")).stroke, getComputedStyle(document.querySelector("#diagram .cluster-box")).strokeDasharray];
      return out; }"""
    )
    styles = {k: tuple(v) for k, v in fills.items()}
    assert len(set(styles.values())) == len(styles), styles  # every status, no status and groups differ
    node_n1 = page.locator('#diagram g.node[data-memviz-id="002-N1"]')  # a node without status
    assert "mvz_none" in (node_n1.get_attribute("class") or "")
    shot(page, "canvas-legend.png")


def test_dark_mode_follows_the_browser(live_server, chromium_launch, data) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium_launch)
        colours = {}
        for scheme in ("light", "dark"):
            page = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme=scheme).new_page()
            open_canvas(page, live_server, NESTED)
            colours[scheme] = page.evaluate(
                """() => [getComputedStyle(document.body).backgroundColor,
                   getComputedStyle(document.querySelector('#diagram .diagram')).backgroundColor,
                   getComputedStyle(document.querySelector('#diagram g.node.mvz_done .shape, #diagram g.node .shape')).fill]"""
            )
            if scheme == "dark":
                shot(page, "canvas-dark.png")
        browser.close()
    assert colours["light"][0] != colours["dark"][0]
    assert colours["light"][1] != colours["dark"][1]
    assert colours["dark"][0] in ("rgb(13, 17, 23)",)


def test_the_page_fits_a_390_pixel_phone(live_server, chromium_launch, data) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium_launch)
        page = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2).new_page()
        for name in (SMALL, NESTED, BROKEN):
            open_canvas(page, live_server, name)
            width = page.evaluate("document.scrollingElement.scrollWidth")
            assert width <= 390, (name, width)
        open_canvas(page, live_server, SMALL)
        shot(page, "canvas-390.png", full_page=True)
        browser.close()


def test_a_broken_canvas_shows_its_problems_text_and_readable_nodes(live_server, page, data) -> None:
    open_canvas(page, live_server, BROKEN)
    report = page.locator("#diagram .broken-report")
    assert report.is_visible()
    problems = page.locator("#diagram .problem-list li")
    assert problems.count() >= 2
    bad_lines = page.eval_on_selector_all("#diagram .marked-text tr.bad th", "els => els.map(e => Number(e.textContent))")
    assert 4 in bad_lines and 6 in bad_lines  # the unclosed label, the stray text
    assert page.locator("#diagram .marked-text tr").count() == BROKEN_TEXT.count("\n") + 1
    drawn = page.eval_on_selector_all("#diagram g.node", "els => els.map(e => e.dataset.memvizId)")
    assert "050-N1" in drawn  # what could be read is drawn
    assert "Syntax error" not in page.locator("body").inner_text()
    # nothing overlaps: the drawing, the report and the lint toggle each keep their own space
    boxes = {
        sel: page.locator(sel).bounding_box()
        for sel in ("#diagram .diagram", "#diagram .broken-report", "details.lint-box")
    }
    ordered = sorted(boxes.values(), key=lambda b: b["y"])
    for upper, lower in zip(ordered, ordered[1:], strict=False):
        assert upper["y"] + upper["height"] <= lower["y"] + 1
    page.locator("details.lint-box summary").click()
    page.locator("details.lint-box .lint-panel").wait_for(timeout=10000)
    page.locator("#diagram .problem-list a").first.click()
    shot(page, "canvas-broken.png", full_page=True)
