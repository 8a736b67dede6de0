"""The real renderer: mermaid.parse() in headless Debian chromium accepts what the engine writes."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from canvases.mermaid import EditError, edits, parse, render_body
from canvases.mermaid.mermaid_source import mermaid_source, status_lines
from canvases.mermaid.samples import sample_canvas
from tests.conftest import FIXTURE_ROOTS, fixture_canvases

REPO = Path(__file__).resolve().parents[2]
MERMAID_JS = REPO / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
CORPUS = Path(__file__).parent / "mermaid" / "corpus"
PARSE_ALL = """async (texts) => {
  mermaid.initialize({startOnLoad: false, securityLevel: "strict"});
  const results = [];
  for (const text of texts) {
    try { await mermaid.parse(text); results.push(null); }
    catch (error) { results.push(String(error && error.message || error).slice(0, 400)); }
  }
  return results;
}"""

pytestmark = [
    pytest.mark.browser,
]


def read(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


@pytest.fixture(scope="module")
def mermaid_parse(chromium_launch: dict):
    """Parse many diagrams in one blank page; returns the error (or None) of each."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**chromium_launch)
        page = browser.new_page()
        page.set_content("<html><body></body></html>")
        page.add_script_tag(path=str(MERMAID_JS))

        def run(texts: list[str]) -> list[str | None]:
            return page.evaluate(PARSE_ALL, texts)

        yield run
        browser.close()


def canvases() -> dict[str, str]:
    found = {p.name: read(p) for p in sorted(CORPUS.glob("*.mmd"))}
    found.update({key: read(path) for key, path in fixture_canvases().items()})
    found["crlf-tabs.mmd"] = found["en-canonical.mmd"].replace("\n", "\r\n").replace("    ", "\t")
    found["big-300.mmd"] = sample_canvas(300)
    return found


def edit_outputs(name: str, text: str) -> dict[str, str]:
    """The text every edit writes on this canvas (edits that do not apply are left out)."""
    doc = parse(text)
    ids = list(doc.nodes)
    if len(ids) < 2 or doc.is_escaped_oneliner:
        return {}
    first, second, last = ids[0], ids[1], ids[-1]
    pairs = {(e.source, e.target) for e in doc.edges}
    hostile = 'a "quote" ]) }} --> end <br/> status: done `md` #quot; &gt; %%{ }%% \\'
    attempts = {
        "set_status": lambda: edits.set_status(text, last, "blocked"),
        "set_status_bare": lambda: edits.set_status(text, second, "等待"),
        "annotate": lambda: edits.annotate(text, last, hostile),
        "edit_label": lambda: edits.edit_label(text, second, title=hostile, summary=hostile),
        "add_edge": lambda: edits.add_edge(text, last, first, label=hostile),
        "remove_edge": lambda: edits.remove_edge(text, *next(iter(sorted(pairs)))),
        "prune": lambda: edits.prune(text, second),
        "prune_no_bridge": lambda: edits.prune(text, first, bridge=False),
        "merge": lambda: edits.merge(text, [first, second, last]),
        "merge_into": lambda: edits.merge(text, [second, last], into=last, label=hostile),
        "set_meta": lambda: edits.set_meta(text, taskGoal=hostile, progress=50),
    }
    outputs = {}
    for op, attempt in attempts.items():
        try:
            outputs[f"{name} · {op}"] = attempt().text
        except (EditError, StopIteration):
            continue
    return outputs


def assert_all_parse(mermaid_parse, texts: dict[str, str]) -> None:
    names = list(texts)
    results = mermaid_parse([texts[n] for n in names])
    failures = {n: r for n, r in zip(names, results, strict=True) if r is not None}
    assert not failures, "\n\n".join(f"{n}:\n{r}\n---\n{texts[n]}" for n, r in failures.items())


def test_render_body_of_every_canvas_parses(mermaid_parse):
    bodies = {}
    for name, text in canvases().items():
        if parse(text).has_errors and not parse(text).is_escaped_oneliner:
            continue
        bodies[name] = render_body(text)
        for sub in parse(text).subgraphs:
            bodies[f"{name} · collapse {sub.id}"] = render_body(text, collapse=[sub.id])
    assert len(bodies) > 20
    assert_all_parse(mermaid_parse, bodies)


def test_the_mermaid_view_text_of_every_canvas_parses_where_the_file_does_not(mermaid_parse):
    """The mermaid.js view draws the file's own lines; mermaid refuses the plugin's header line."""
    sources, files = {}, {}
    for name, text in canvases().items():
        doc = parse(text)
        if doc.has_errors and not doc.is_escaped_oneliner:
            continue
        files[name] = text
        sources[name] = mermaid_source(text)
        sources[f"{name} · status colours"] = sources[name] + "\n" + status_lines(text)
    assert_all_parse(mermaid_parse, sources)
    refused = [r for r in mermaid_parse(list(files.values())) if r is not None]
    assert len(refused) >= 5  # as the agent wrote them, mermaid.js draws none of these


def test_render_body_of_every_edit_parses(mermaid_parse):
    bodies = {}
    for name, text in canvases().items():
        if parse(text).has_errors:
            continue
        for label, output in edit_outputs(name, text).items():
            bodies[label] = render_body(output)
    assert len(bodies) > 100
    assert_all_parse(mermaid_parse, bodies)


def test_edited_files_without_a_metadata_line_parse_below_their_new_header(mermaid_parse):
    """Every edit now writes the strict `%%{ … }%%` line 1 (format spec §4.8.4); the rest of a
    file that had no metadata line is still what mermaid accepts as it is."""
    raw = {}
    for name, text in canvases().items():
        doc = parse(text)
        if doc.has_errors or doc.fenced or doc.meta.form not in ("none", "comment"):
            continue
        if any(
            "&gt;" in e.arrow or '\\"' in n.label_raw
            for e, n in itertools.product(doc.edges, doc.nodes.values())
        ):
            continue
        for label, output in edit_outputs(name, text).items():
            header, _, body = output.partition("\n")
            assert header.startswith("%%{ ") and header.endswith(" }%%"), label
            raw[label] = body
    assert raw
    assert_all_parse(mermaid_parse, raw)


def test_spec_expectations_for_the_raw_fixture_files(mermaid_parse):
    """§9: the metadata line makes mermaid fail on line 1; 004 (comment metadata) passes raw."""
    files = {
        f"{p.parents[2].name}/{p.name}": read(p) for p in FIXTURE_ROOTS.glob("*/*/mmds/*.mmd")
    }
    results = dict(zip(files, mermaid_parse(list(files.values())), strict=True))
    assert results.pop("fixture-b-wild/004-修复CI缓存.mmd") is None
    assert all(error and "line 1" in error for error in results.values()), results
