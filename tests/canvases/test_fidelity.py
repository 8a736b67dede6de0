"""memviz's renderer draws mermaid's picture: the fidelity corpus drawn by both, compared by facts.

Each diagram of tests/fixtures/fidelity (flowcharts in the style of mermaid's flowchart docs and
of agent status boards) is drawn by mermaid.js (the vendored bundle, the text the mermaid.js view
draws) and by memviz's renderer (the page's scene and canvas-draw.js) in one chromium page; the
facts read from both SVGs must agree: nodes and their visible text, edges with their labels and
end markers, shapes, the author's colours on nodes and edges, bold/italic, groups and membership,
direction, edge labels not covered by nodes, accTitle. Layout is free. See docs/canvas-rendering.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from canvases.canvas_scene import canvas_scene
from canvases.mermaid.mermaid_source import mermaid_source
from tests.conftest import MERMAID_JS, SCREENSHOTS

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "fixtures" / "fidelity"
FACTS_JS = Path(__file__).with_name("fidelity_facts.js")
STATIC_JS = REPO / "static" / "js"
# the page both draw in: served from this origin by the test (memviz's modules from static/js)
ORIGIN = "http://memviz.test"
PAGE = '<html><body><div id="drawing" style="width:3000px;height:3000px"></div></body></html>'

# Diagrams agreeing on every fact; the test fails if a change draws fewer of them alike.
AGREEING_AT_LEAST = 50
# Every flowchart example of mermaid's docs (see its README.md), and how many must agree.
DOCS_CORPUS = CORPUS / "mermaid-docs"
DOCS_AGREEING_AT_LEAST = 110
DOCS_SIDE_BY_SIDE = ("060-multi-document-stacked-document.mmd", "100-markdown-strings.mmd")

# Edges drawn through a node that is not one of their ends, over the corpus (mermaid: see the
# test's output); the test fails if memviz's layout draws more.
CROSSINGS_AT_MOST = 0
# mermaid's shape names (its parser's for the classic syntax, the author's for `@{ shape }`) and
# the shape memviz must draw for each, from the table "Complete list of new shapes" of mermaid's
# flowchart docs. A name missing here is a difference: a shape drawn as a stand-in rectangle fails.
_SHAPE_NAMES = {
    "rect": "squareRect rect rectangle proc process",
    "round": "roundedRect rounded event",
    "stadium": "stadium pill terminal",
    "subroutine": "subroutine fr-rect framed-rectangle subproc subprocess",
    "cylinder": "cylinder cyl database db",
    "circle": "circle circ",
    "asymmetric": "odd",
    "rhombus": "diamond diam decision question",
    "hexagon": "hexagon hex prepare",
    "parallelogram": "lean_right lean-r lean-right in-out",
    "parallelogram_alt": "lean_left lean-l lean-left out-in",
    "trapezoid": "trapezoid trap-b priority trapezoid-bottom",
    "trapezoid_alt": "inv_trapezoid trap-t manual inv-trapezoid trapezoid-top",
    "double_circle": "doublecircle dbl-circ double-circle",
    "document": "doc document",
    "triangle": "tri extract triangle",
    "flipped_triangle": "flip-tri flipped-triangle manual-file",
    "small_circle": "sm-circ small-circle start",
    "framed_circle": "fr-circ framed-circle stop",
    "filled_circle": "f-circ filled-circle junction",
    "fork": "fork join",
    "text": "text",
    "notched_rect": "notch-rect card notched-rectangle",
    "lined_rect": "lin-rect lin-proc lined-process lined-rectangle shaded-process",
    "stacked_rect": "st-rect processes procs stacked-rectangle",
    "hourglass": "hourglass collate",
    "delay": "delay half-rounded-rectangle",
    "bolt": "bolt com-link lightning-bolt",
    "crossed_circle": "cross-circ crossed-circle summary",
    "brace_l": "brace brace-l comment",
    "brace_r": "brace-r",
    "braces": "braces",
    "h_cylinder": "h-cyl das horizontal-cylinder",
    "lined_cylinder": "lin-cyl disk lined-cylinder",
    "curved_trapezoid": "curv-trap curved-trapezoid display",
    "divided_rect": "div-rect div-proc divided-process divided-rectangle",
    "window_pane": "win-pane internal-storage window-pane",
    "lined_document": "lin-doc lined-document",
    "notched_pentagon": "notch-pent loop-limit notched-pentagon",
    "sloped_rect": "sl-rect manual-input sloped-rectangle",
    "stacked_document": "docs documents st-doc stacked-document",
    "flag": "flag paper-tape",
    "bow_rect": "bow-rect stored-data bow-tie-rectangle",
    "tagged_document": "tag-doc tagged-document",
    "tagged_rect": "tag-rect tag-proc tagged-process tagged-rectangle",
    "datastore": "datastore data-store",
    "cloud": "cloud",
    "bang": "bang",
    # `@{ icon: … }` by its form, `@{ img: … }`: mermaid's parser's names
    "icon": "icon", "icon_square": "iconSquare", "icon_circle": "iconCircle",
    "icon_rounded": "iconRounded", "image": "imageSquare",
}
SHAPES = {name: shape for shape, names in _SHAPE_NAMES.items() for name in names.split()}
MERMAID_NODE = ("rgb(236,236,255)", "rgb(147,112,219)")  # mermaid's default theme: fill, stroke
MERMAID_EDGE = MERMAID_TEXT = "rgb(51,51,51)"
MERMAID_GROUP = ("rgb(255,255,222)", "rgb(170,170,51)")

# looked at side by side (mermaid left, memviz right), in SCREENSHOTS
SIDE_BY_SIDE_OF = ("22-shape-syntax-new.mmd", "33-board-subgraphs.mmd", "36-board-markdown.mmd",
                   "39-board-many-labels.mmd", "50-lr-labels-groups.mmd")
SIDE_BY_SIDE = """async ([item, name]) => {
  const host = document.getElementById("drawing");
  host.innerHTML = '<div style="display:flex;gap:8px"><div id="m" style="width:790px;height:1000px"></div>' +
    '<div id="v" style="width:790px;height:1000px"></div></div>';
  const { svg } = await mermaid.render("side" + name.slice(0, 2), item.text);
  host.querySelector("#m").innerHTML = svg;
  const drawing = await import("/static/js/canvas-draw.js");
  const drawn = drawing.draw(drawing.normalize(item.scene), { collapsed: new Set(), idPrefix: "side" });
  const v = host.querySelector("#v");
  v.innerHTML = drawn.svg;
  for (const g of v.querySelectorAll("g.node[data-memviz-id]")) g.insertAdjacentHTML("beforeend", drawn.model.labels.get(g.dataset.memvizId));
  const root = v.querySelector("svg");
  drawing.applyCss(root);
  const b = root.querySelector(".mc-content").getBBox();
  root.setAttribute("viewBox", `${b.x - 10} ${b.y - 10} ${b.width + 20} ${b.height + 20}`);
}"""

pytestmark = [pytest.mark.browser]


def corpus() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.mmd"))}


def differences(m: dict[str, Any], v: dict[str, Any]) -> dict[str, list[str]]:
    """feature -> what memviz draws differently from mermaid (empty: the same picture)."""
    out: dict[str, list[str]] = {}

    def differ(feature: str, what: str) -> None:
        out.setdefault(feature, []).append(what)

    if "error" in v:
        return {"drawing": [v["error"]]}
    mn, vn = m["nodes"], v["nodes"]
    if set(mn) != set(vn):
        differ("nodes", f"{sorted(set(mn) ^ set(vn))}")
    for node_id in set(mn) & set(vn):
        a, b = mn[node_id], vn[node_id]
        if a["text"] != b["text"]:
            differ("node text", f"{node_id}: {a['text']!r} vs {b['text']!r}")
        if SHAPES.get(a["shape"], f"unknown {a['shape']}") != (b["shape"] or "rect"):
            differ("shapes", f"{node_id}: {a['shape']} vs {b['shape']}")
        for paint, default in zip(("fill", "stroke"), MERMAID_NODE, strict=True):
            # mermaid fills a junction or a fork bar with its theme's border colour
            theme = (default, MERMAID_NODE[1]) if paint == "fill" else (default,)
            if a[paint] not in (*theme, b[paint]):  # what the author set, as they set it
                differ("node colours", f"{node_id} {paint}: {a[paint]} vs {b[paint]}")
        if a["text"] and a["ink"] not in (MERMAID_TEXT, b["ink"]):
            differ("node colours", f"{node_id} text: {a['ink']} vs {b['ink']}")
        if (a["bold"], a["italic"]) != (b["bold"], b["italic"]):
            differ("bold/italic", f"{node_id}: {a['bold']} {a['italic']} vs {b['bold']} {b['italic']}")
        if a["group"] != b["group"]:
            differ("groups", f"{node_id} in {a['group']} vs {b['group']}")
    key = lambda e: (e["s"], e["t"], e["label"])  # noqa: E731
    me, ve = sorted(m["edges"], key=key), sorted(v["edges"], key=key)
    if [key(e) for e in me] != [key(e) for e in ve]:
        differ("edges, edge labels", f"{[key(e) for e in me]} vs {[key(e) for e in ve]}")
    else:
        for a, b in zip(me, ve, strict=True):
            if a["ends"] != b["ends"]:
                differ("edge ends", f"{key(a)}: {a['ends']} vs {b['ends']}")
            # mermaid sets each word of an edge label apart: the formatted text is compared whole
            if [sorted("".join(a[f])) for f in ("bold", "italic")] != [sorted("".join(b[f])) for f in ("bold", "italic")]:
                differ("bold/italic", f"{key(a)}: {a['bold']} {a['italic']} vs {b['bold']} {b['italic']}")
            if a["stroke"] != MERMAID_EDGE and a["stroke"] != b["stroke"]:
                differ("edge colours", f"{key(a)}: {a['stroke']} vs {b['stroke']}")
            if a["ink"] not in ("", MERMAID_TEXT, b["ink"]):
                differ("edge colours", f"{key(a)} label: {a['ink']} vs {b['ink']}")
    if m["clusters"] != v["clusters"]:
        differ("groups", f"{m['clusters']} vs {v['clusters']}")
    for title, paint in m["paint"].items():
        for got, want, default in zip(v["paint"].get(title, paint), paint, MERMAID_GROUP, strict=True):
            if want not in (default, got):
                differ("group colours", f"{title}: {want} vs {got}")
    if covered := sorted(set(v["covered"]) - set(m["covered"])):
        differ("edge labels covered", f"{covered}")
    for group, way in m["direction"].items():
        if v["direction"].get(group, way) != way:
            differ("direction", f"{group or 'diagram'}: {way} vs {v['direction'][group]}")
    if m["hidden"] != v["hidden"]:
        differ("invisible links (~~~)", f"{m['hidden']} vs {v['hidden']}")
    if any(want and want not in got for want, got in zip(m["title"], v["title"], strict=True)):
        differ("accTitle/accDescr", f"{m['title']} vs {v['title']}")
    return out


def _serve(route: Any) -> None:
    """The blank page, and memviz's modules as the app serves them (nothing else)."""
    path = route.request.url.removeprefix(ORIGIN)
    if path == "/":
        route.fulfill(content_type="text/html", body=PAGE)
        return
    name = path.removeprefix("/static/js/")
    source = STATIC_JS / name
    if name != path and "/" not in name and source.is_file():
        route.fulfill(content_type="text/javascript", body=source.read_text("utf-8"))
    else:
        route.fulfill(status=404, body="")


def compare(texts: dict[str, str], chromium_launch: dict, side_by_side: tuple[str, ...] = ()) -> dict:
    """Both renderers' facts of every text, read in one chromium page; side-by-side screenshots."""
    from playwright.sync_api import sync_playwright

    items = [{"text": mermaid_source(t), "scene": canvas_scene(t)} for t in texts.values()]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**chromium_launch)
        page = browser.new_page(viewport={"width": 1600, "height": 1200})
        page.route(f"{ORIGIN}/**", _serve)
        page.goto(f"{ORIGIN}/")
        for sheet in ("memviz.css", "statuses.css"):
            page.add_style_tag(path=str(REPO / "static" / "css" / sheet))
        page.add_script_tag(path=str(MERMAID_JS))
        results = page.evaluate(FACTS_JS.read_text(encoding="utf-8"), items)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for name in side_by_side:
            page.evaluate(SIDE_BY_SIDE, [items[list(texts).index(name)], name])
            page.screenshot(path=str(SCREENSHOTS / f"fidelity-{name.removesuffix('.mmd')}.png"))
        browser.close()
    return dict(zip(texts, results, strict=True))


def report_of(texts: dict[str, str], results: dict) -> tuple[dict, list[str], list[int]]:
    """(name -> differences of the diagrams mermaid draws, agreeing names, edges through nodes)."""
    drawn = {n: r for n, r in results.items() if "error" not in r["mermaid"]}
    report = {name: differences(r["mermaid"], r["memviz"]) for name, r in drawn.items()}
    agreeing = [name for name, diff in report.items() if not diff]
    by_feature: dict[str, int] = {}
    for diff in report.values():
        for feature in diff:
            by_feature[feature] = by_feature.get(feature, 0) + 1
    crossings = [sum(r[who]["crossings"] for r in drawn.values()) for who in ("mermaid", "memviz")]
    print(f"\nsame picture: {len(agreeing)}/{len(drawn)} (mermaid refused {len(texts) - len(drawn)})")
    print(f"edges through a node not their own: mermaid {crossings[0]}, memviz {crossings[1]}")
    for feature, count in sorted(by_feature.items()):
        print(f"  {feature}: {count} diagrams differ")
    for name, r in drawn.items():
        if r["memviz"]["crossings"] > r["mermaid"]["crossings"]:
            print(f"  {name} · edges through other nodes: {r['memviz']['crossings']}")
    for name, diff in report.items():
        for feature, whats in diff.items():
            print(f"  {name} · {feature}: {'; '.join(whats)[:300]}")
    return report, agreeing, crossings


def test_memviz_draws_the_same_picture_as_mermaid(chromium_launch: dict) -> None:
    texts = corpus()
    report, agreeing, crossings = report_of(texts, compare(texts, chromium_launch, SIDE_BY_SIDE_OF))
    assert len(report) == len(texts), "mermaid.js refused a corpus diagram"
    assert len(agreeing) >= AGREEING_AT_LEAST, report
    assert crossings[1] <= CROSSINGS_AT_MOST


def test_every_flowchart_of_mermaids_own_docs_is_drawn_alike(chromium_launch: dict) -> None:
    """Every example of mermaid's flowchart syntax page (tests/fixtures/fidelity/mermaid-docs),
    written by mermaid's authors, not by us."""
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(DOCS_CORPUS.glob("*.mmd"))}
    report, agreeing, crossings = report_of(texts, compare(texts, chromium_launch, DOCS_SIDE_BY_SIDE))
    assert len(report) == len(texts), "mermaid.js refused a docs example"
    assert len(agreeing) >= DOCS_AGREEING_AT_LEAST, report
    assert crossings[1] <= crossings[0]
