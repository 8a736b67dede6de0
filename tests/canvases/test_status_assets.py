"""The statuses have one home (canvases/mermaid/vocabulary.py): the CSS and script the pages load
are made from it and must be what it makes now, and no other file restates its words or colours.
(That the page draws them is checked in chromium: test_canvas_fast_paths_browser.py.)"""

from __future__ import annotations

import re
from pathlib import Path

from canvases.mermaid.render import STATUS_STYLES as CLASS_DEFS
from canvases.mermaid.vocabulary import STATUS_STYLES, STATUS_VOCABULARY, URGENCY
from canvases.status_assets import CSS_NAME, JS_NAME, generated, stale, write
from debugging.offline_html import STYLES
from debugging.offline_script import MODULES
from tests.code_tree import APP_PACKAGES

REPO = Path(__file__).resolve().parents[2]
STATIC = REPO / "static"
WORDS = "|".join(STATUS_VOCABULARY)
# Two status words quoted one after the other: a list of them written out again.
WORD_LIST = re.compile(rf"""["']({WORDS})["']\s*,\s*["']({WORDS})["']""")


def test_the_committed_css_and_script_are_what_the_table_makes() -> None:
    assert stale(STATIC) == [], "run scripts/export_statuses.py"


def test_a_changed_table_makes_the_files_stale_and_export_rewrites_them(tmp_path: Path) -> None:
    for name, text in generated().items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text.replace("#fff4cc", "#000000"), "utf-8")
    assert sorted(stale(tmp_path)) == sorted([CSS_NAME])  # the script holds no colour
    assert write(tmp_path) == [CSS_NAME]
    assert stale(tmp_path) == []


def test_every_status_has_its_rules_in_both_themes_and_its_words_in_the_script() -> None:
    css, script = generated()[CSS_NAME], generated()[JS_NAME]
    light, dark = css.split("@media (prefers-color-scheme: dark)")
    for style in STATUS_STYLES:
        assert f"--{style.key}: {style.light.fill};" in light
        assert f"--{style.key}-line: {style.dark.line};" in dark
        assert f".mc .mvz_{style.key} .shape {{" in css and f".status-{style.key} {{" in css
        # mermaid's classDef (what mermaid.js draws) holds the same light colours
        assert f"fill:{style.light.fill},stroke:{style.light.line}" in CLASS_DEFS[style.key]
    assert f'"urgency": {list(URGENCY)}'.replace("'", '"') in script


def test_the_pages_and_the_offline_file_load_them_after_the_base_styles() -> None:
    base = (REPO / "templates" / "base.html").read_text("utf-8")
    assert base.index("css/memviz.css") < base.index(CSS_NAME)
    assert STYLES.index("css/memviz.css") < STYLES.index(CSS_NAME)
    # the words are a module the drawing imports; the offline file joins it first
    assert 'import { statuses } from "./statuses.js";' in (STATIC / "js" / "canvas-draw.js").read_text()
    assert MODULES.index(JS_NAME) < MODULES.index("js/canvas-draw.js")


def test_no_other_file_restates_the_statuses_words_or_colours() -> None:
    keys = "|".join(URGENCY)
    # a status's colour defined, or a rule of a status's class, outside the generated CSS
    own_css = re.compile(rf"--({keys})(-line|-text)?\s*:|\.(mvz|status)-?_?({keys})\b")
    generated_files = {STATIC / CSS_NAME, STATIC / JS_NAME}
    found = []
    for path in [*STATIC.glob("css/*.css"), *STATIC.glob("js/*.js")]:
        if path in generated_files:
            continue
        text = path.read_text("utf-8")
        if path.suffix == ".css":
            found += [f"{path.name}: {m.group(0)}" for m in own_css.finditer(text)]
        found += [f"{path.name}: {m.group(0)}" for m in WORD_LIST.finditer(text)]
    # L1.5 of the plugin counts three of the words (mmd-meta.ts): its rule, mirrored, not ours.
    allowed = {REPO / "canvases" / "mermaid" / "vocabulary.py", REPO / "canvases" / "mermaid" / "agent_view.py"}
    for app in APP_PACKAGES:
        for path in (REPO / app).rglob("*.py"):
            if path not in allowed and "migrations" not in path.parts:
                text = path.read_text("utf-8")
                found += [f"{path.relative_to(REPO)}: {m.group(0)}" for m in WORD_LIST.finditer(text)]
    assert found == []


def test_a_pill_on_any_page_takes_the_class_the_canvas_gives_its_status() -> None:
    """The node, search and agent pages' pills and the canvas share one rule (render.status_key):
    a node with no status is "none" everywhere (it was the dashed "other" on the pages)."""
    from canvases.mermaid.render import status_key
    from memviz.templatetags.memviz import status_class

    for status in (*STATUS_VOCABULARY, "weird", "", None):
        assert status_class(status) == f"status-{status_key(status)}"
    assert (status_class(""), status_class("weird")) == ("status-none", "status-other")
