"""The canvas's fast paths, in Debian's chromium: an edit swaps only what it changed (and keeps the
view, the map tools and undo), a click opens the panel with the selection and URL, and pan/zoom
moves one composited layer that settles into a crisp SVG transform.

Screenshots go to docs/screenshots/latest/canvas-*.png (looked at when they change).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from canvases.mermaid import content_hash, parse
from canvases.mermaid.samples import sample_canvas
from canvases.mermaid.vocabulary import STATUS_STYLES, STATUS_VOCABULARY
from intake.ingest import ingest_path
from tests.canvases.browser_login import PASSWORD, USER
from tests.canvases.browser_login import log_in as sign_in
from tests.conftest import SCREENSHOTS
from tests.page_modules import expose

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

REPO = Path(__file__).resolve().parents[2]

BIG = "800-nested-300.mmd"


@pytest.fixture
def data(fixtures_root: Path, django_user_model) -> Path:
    root = fixtures_root / "fixture-a-upstream"
    mmds = root / "main" / "mmds"
    (mmds / BIG).write_text(sample_canvas(300, prefix="800"), encoding="utf-8")
    old = os.stat(root / "main").st_mtime - 86_400  # an idle agent: no live banner
    for path in (mmds / BIG, root / "main"):
        os.utime(path, (old, old))
    ingest_path(root)
    django_user_model.objects.create_user(USER, password=PASSWORD)
    return root / "main"


def log_in(page, live_server, next_url: str) -> None:
    sign_in(page, live_server, next_url)
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=30000)
    expose(page)


def shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name))


def first_drawn_node(page) -> str:
    return page.evaluate(
        """() => { const m = mv.canvas.model(), r = mv.canvas.view().visibleRect();
        return m.order.find((id) => { const b = m.boxes.get(id);
          return !m.leaves.get(id).summary && b.x > r.x && b.x < r.x + r.w && b.y > r.y && b.y < r.y + r.h; }); }"""
    )


def drawn_status_colours(page) -> dict[str, tuple[str, str]]:
    """mvz_<status> → (fill, stroke) of the first node drawn with it, as chromium computed them
    (nodes the agent coloured with its own classDef are the agent's colours: left out)."""
    return page.evaluate(
        """() => { const out = {};
        for (const g of document.querySelectorAll('#diagram g.node')) {
          const key = [...g.classList].find((c) => c.startsWith('mvz_')), shape = g.querySelector('.shape');
          if (key && shape && !shape.dataset.css && !shape.getAttribute('style') && !(key in out)) { const s = getComputedStyle(shape); out[key] = [s.fill, s.stroke]; }
        } return out; }"""
    )


def rgb(hex_colour: str) -> str:
    return "rgb({}, {}, {})".format(*(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)))


def test_an_edit_swaps_only_what_changed_and_keeps_view_tools_and_undo(live_server, page, data: Path) -> None:
    log_in(page, live_server, f"/a/main/c/{BIG}/?collapsed=")
    # every status is drawn in its colours of the one table (canvases/mermaid/vocabulary.py,
    # exported to static/css/statuses.css), in the light and the dark theme
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        drawn = drawn_status_colours(page)
        assert {f"mvz_{w}" for w in STATUS_VOCABULARY} <= set(drawn), drawn
        for style in STATUS_STYLES:
            if f"mvz_{style.key}" in drawn:
                look = getattr(style, theme)
                assert drawn[f"mvz_{style.key}"] == [rgb(look.fill), rgb(look.line)], (theme, style.key)
    page.emulate_media(color_scheme="light")
    node = first_drawn_node(page)
    page.locator(f'#diagram g.node[data-memviz-id="{node}"]').click()
    page.locator(f'#node-panel .node-detail[data-node="{node}"]').wait_for()
    # state that a whole-editor swap would lose: typed find text, the map tools, the view
    page.fill("#canvas-search", "zzz-not-a-node")
    page.evaluate("() => { window.__tools = document.querySelector('#diagram .map-tools'); }")
    page.evaluate("(id) => mv.canvas.view().focusNode(id)", node)
    view_before = page.evaluate("mv.canvas.view().state()")
    renders = int(page.evaluate("document.body.dataset.renderCount"))

    page.evaluate("() => document.activeElement.blur()")  # leave the find box as it is
    page.evaluate("(id) => mv.canvas.select([id])", node)
    page.keyboard.press("a")
    page.locator('.op-form[data-form="annotate"] textarea').fill("re-check the totals")
    page.locator('.op-form[data-form="annotate"] button[type=submit]').click()
    page.wait_for_function(
        "(n) => Number(document.body.dataset.renderCount) > n && document.body.dataset.canvasRendered === 'ok'",
        arg=renders,
    )
    assert "annotate written" in page.locator("#flash").inner_text()
    text = (data / "mmds" / BIG).read_text("utf-8")
    assert parse(text).nodes[node].fields.extra["note"] == "re-check the totals"
    # the next edit's base is the new text; the forms, tools and typed text stayed
    assert page.locator("#editor").get_attribute("data-hash") == content_hash(text)
    assert page.evaluate("() => window.__tools === document.querySelector('#diagram .map-tools')")
    assert page.input_value("#canvas-search") == "zzz-not-a-node"
    assert page.locator(".op-form:visible").count() == 0
    assert page.input_value('.op-form[data-form="annotate"] textarea') == ""
    # the drawing is new, in the same view; the list item and the open panel show the note
    view_after = page.evaluate("mv.canvas.view().state()")
    assert abs(view_after["k"] - view_before["k"]) < 1e-6
    assert page.locator(f'#node-item-{node} .badge.note').count() == 1
    page.locator("#node-panel", has_text="re-check the totals").wait_for()
    assert page.locator("#live .stale-note").is_hidden()
    shot(page, "canvas-after-edit.png")

    # undo comes back from the same small answer and takes the note away again
    renders = int(page.evaluate("document.body.dataset.renderCount"))
    page.locator("#undo-button").click()
    page.wait_for_function(
        "(n) => Number(document.body.dataset.renderCount) > n && document.body.dataset.canvasRendered === 'ok'",
        arg=renders,
    )
    assert "undo written" in page.locator("#flash").inner_text()
    assert page.locator(f'#node-item-{node} .badge.note').count() == 0
    assert not page.locator("#redo-button").is_disabled()
    text = (data / "mmds" / BIG).read_text("utf-8")
    assert "note" not in parse(text).nodes[node].fields.extra
    assert page.locator("#editor").get_attribute("data-hash") == content_hash(text)
    assert page.errors == []


def test_a_conflicting_edit_gets_the_whole_editor_back(live_server, page, data: Path) -> None:
    log_in(page, live_server, f"/a/main/c/{BIG}/?collapsed=")
    node = first_drawn_node(page)
    path = data / "mmds" / BIG
    renders = int(page.evaluate("document.body.dataset.renderCount"))
    # a page based on a text memviz never saw (409): the answer is the editor on the file's text
    page.evaluate("() => { document.getElementById('editor').dataset.hash = 'sha256:' + '0'.repeat(64); }")
    page.evaluate("(id) => mv.canvas.select([id])", node)
    page.keyboard.press("a")
    page.locator('.op-form[data-form="annotate"] textarea').fill("too late")
    page.locator('.op-form[data-form="annotate"] button[type=submit]').click()
    page.locator("#flash .flash.error").wait_for()
    page.wait_for_function(
        "(n) => Number(document.body.dataset.renderCount) > n && document.body.dataset.canvasRendered === 'ok'",
        arg=renders,
    )
    assert page.locator("#editor").get_attribute("data-hash") == content_hash(path.read_text("utf-8"))
    assert "too late" not in path.read_text("utf-8")
    assert page.errors == []


def test_a_click_opens_the_panel_with_the_selection_and_the_url(live_server, page, data: Path) -> None:
    page.goto(f"{live_server.url}/a/main/c/{BIG}/?collapsed=")
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=30000)
    expose(page)
    node = first_drawn_node(page)
    page.locator(f'#diagram g.node[data-memviz-id="{node}"]').click()
    page.locator(f'#node-panel .node-detail[data-node="{node}"]').wait_for()
    page.wait_for_function("(id) => location.hash === '#node=' + encodeURIComponent(id)", arg=node)
    assert "selected" in (page.locator(f'#diagram g.node[data-memviz-id="{node}"]').get_attribute("class") or "")
    assert page.locator(f'#node-item-{node}.selected').count() == 1
    # the ring is drawn on a layer of its own above the drawing (marking the node inside a
    # 1000-node SVG re-rastered all of it on every click), around the node wherever the view goes
    assert_ring_around(page, node)
    host = page.locator("#diagram .mermaid-host").bounding_box()
    x, y = host["x"] + host["width"] / 2, host["y"] + host["height"] / 2
    _, layers = drag_unpaused(
        page, x, y, -90, -60, 4,
        "[svg.style.transform, document.querySelector('#diagram svg.mc-marks').style.transform]",
    )
    assert layers[0].startswith("matrix(") and layers[1] == layers[0]  # moved together
    assert_ring_around(page, node)
    page.evaluate("mv.canvas.view().zoomIn()")
    page.wait_for_timeout(300)
    assert_ring_around(page, node)
    page.keyboard.press("Escape")
    assert page.locator("#diagram svg.mc-marks rect").count() == 0
    assert page.errors == []


def drag_unpaused(
    page, x: float, y: float, dx: float, dy: float, steps: int, read: str, before: str = "null"
) -> tuple[Any, Any]:
    """Drag from (x, y) by (dx, dy); return ``before`` (read just before the button goes down)
    and ``read`` (while it is still down), JS expressions over ``svg``, the drawing's <svg>.

    The view settles (redraws crisp) after 180 ms without motion (canvas-view.js
    MOTION_IDLE_MS), held button or not: what a drag shows holds for moves that come faster
    than that. On a loaded machine a pause between two of Playwright's steps once settled the
    view mid-drag, so the page records the moves' times and a drag the machine paused is tried
    again (from where the last one left the view)."""
    page.evaluate(
        """() => { if (window.testMoves) return; window.testMoves = [];
        document.addEventListener('mousemove', () => testMoves.push(performance.now()), true); }"""
    )
    for _attempt in range(4):
        page.mouse.move(x, y)
        start = page.evaluate(
            f"() => {{ testMoves = []; const svg = document.querySelector('#diagram svg.mc'); return {before}; }}"
        )
        page.mouse.down()
        page.mouse.move(x + dx, y + dy, steps=steps)
        seen = page.evaluate(
            f"""() => {{ const svg = document.querySelector('#diagram svg.mc'), t = testMoves;
            const gaps = [...t.slice(1).map((m, i) => m - t[i]), performance.now() - t[t.length - 1]];
            return {{ read: {read}, paused: Math.max(...gaps) >= 150 }}; }}"""
        )
        page.mouse.up()
        page.wait_for_function("() => !document.querySelector('#diagram svg.mc').classList.contains('moving')")
        if not seen["paused"]:
            return start, seen["read"]
    raise AssertionError("every drag was paused by the machine: nothing checked")

def assert_ring_around(page, node: str) -> None:
    rings = page.locator("#diagram svg.mc-marks rect")
    assert rings.count() == 1
    ring = rings.bounding_box()
    box = page.locator(f'#diagram g.node[data-memviz-id="{node}"] .shape').first.bounding_box()
    assert ring is not None and box is not None
    assert ring["x"] < box["x"] and ring["y"] < box["y"]
    assert ring["x"] + ring["width"] > box["x"] + box["width"] and ring["y"] + ring["height"] > box["y"] + box["height"]
    assert ring["width"] < box["width"] * 1.3 + 30  # around this node, not somewhere larger


def test_a_long_dotted_edge_is_drawn_in_joined_pieces_with_one_arrowhead(live_server, page, data: Path) -> None:
    # The rasteriser dashes a whole path for every tile its bounds touch: a dotted edge across a
    # big canvas is drawn in pieces (canvas-draw.js, DASH_PIECE) that must still read as one edge.
    page.goto(f"{live_server.url}/a/main/c/{BIG}/?collapsed=")
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=30000)
    expose(page)
    edges = page.evaluate(
        """() => { const byEdge = new Map();
        for (const p of document.querySelectorAll('#diagram svg.mc path.edge-dotted')) {
          if (!byEdge.has(p.dataset.edge)) byEdge.set(p.dataset.edge, []);
          byEdge.get(p.dataset.edge).push(p);
        }
        return [...byEdge.values()].map((ps) => ps.map((p) => { const n = p.getTotalLength(), a = p.getPointAtLength(0), b = p.getPointAtLength(n);
          return { length: n, a: [a.x, a.y], b: [b.x, b.y], start: p.hasAttribute('marker-start'), end: p.hasAttribute('marker-end') }; })); }"""
    )
    split = [pieces for pieces in edges if len(pieces) > 1]
    assert split, "no dotted edge long enough to be drawn in pieces"
    for pieces in split:
        for before, after in zip(pieces, pieces[1:], strict=False):
            assert abs(before["b"][0] - after["a"][0]) < 0.2 and abs(before["b"][1] - after["a"][1]) < 0.2
        assert all(p["length"] <= 2 * 1500 for p in pieces)
        assert [p["end"] for p in pieces] == [False] * (len(pieces) - 1) + [True]
        assert not any(p["start"] for p in pieces[1:])
    assert page.errors == []


def test_pan_and_zoom_move_one_layer_then_settle_crisp(live_server, page, data: Path) -> None:
    page.goto(f"{live_server.url}/a/main/c/{BIG}/?collapsed=")
    page.wait_for_function("() => document.body.dataset.canvasRendered === 'ok'", timeout=30000)
    expose(page)
    host = page.locator("#diagram .mermaid-host").bounding_box()
    # a drag: while it lasts the <svg> moves as one layer and the drawing is not redrawn
    x, y = host["x"] + host["width"] / 2, host["y"] + host["height"] / 2
    before, moving = drag_unpaused(
        page, x, y, -120, -80, 6,
        """{ cls: svg.classList.contains('moving'), css: svg.style.transform,
             content: svg.querySelector('.mc-content').getAttribute('transform') }""",
        before="""{ content: svg.querySelector('.mc-content').getAttribute('transform'),
                    pan: mv.canvas.view().state().pan }""",
    )
    pan_before = before["pan"]
    assert moving["cls"] and moving["css"].startswith("matrix(")
    assert moving["content"] == before["content"]
    state = page.evaluate("mv.canvas.view().state()")
    assert abs(state["pan"]["x"] - pan_before["x"] + 120) < 2 and abs(state["pan"]["y"] - pan_before["y"] + 80) < 2
    settled = page.evaluate(
        """() => { const svg = document.querySelector('#diagram svg.mc');
        return { css: svg.style.transform, content: svg.querySelector('.mc-content').getAttribute('transform') }; }"""
    )
    assert settled["css"] == ""
    k, pan = state["k"], state["pan"]
    assert settled["content"] == f"matrix({k},0,0,{k},{pan['x']},{pan['y']})"

    # a wheel zoom keeps the drawing point under the pointer where it was (the pointer maths
    # must not see the layer's CSS transform while it moves)
    px, py = host["x"] + 300, host["y"] + 200
    under = page.evaluate(
        "([x, y]) => { const s = mv.canvas.view().state(); return [(x - s.pan.x) / s.k, (y - s.pan.y) / s.k]; }",
        [300, 200],
    )
    page.mouse.move(px, py)
    for _ in range(3):
        page.mouse.wheel(0, -120)
        page.wait_for_timeout(30)
    page.wait_for_function("() => !document.querySelector('#diagram svg.mc').classList.contains('moving')")
    after = page.evaluate(
        "([x, y]) => { const s = mv.canvas.view().state(); return [(x - s.pan.x) / s.k, (y - s.pan.y) / s.k, s.k]; }",
        [300, 200],
    )
    assert after[2] > state["k"] * 1.2
    assert abs(after[0] - under[0]) < 2 and abs(after[1] - under[1]) < 2
    shot(page, "canvas-after-zoom.png")
    assert page.errors == []
