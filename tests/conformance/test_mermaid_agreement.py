"""The real mermaid (chromium) reads every canvas memviz writes, and the engine's verdict on a
label agrees with mermaid's: whatever mermaid rejects, the engine reports as an error."""

from __future__ import annotations

import pytest

from canvases.mermaid import parse, render_body
from canvases.mermaid.human_text import human_text

from .cases import HOSTILE, WJ, op_cases
from .conftest import assert_mermaid_parses

pytestmark = [pytest.mark.browser]

# Label texts as they may stand in a canvas someone else wrote (not escaped by memviz).
RAW_LABELS = [
    "plain",
    "100%% sure",
    "a %%{ b",
    "a %%{init: x}%% b",
    "a %%{ 5",
    "a %%{}",
    "a %%{ #quot; x",
    "%%",
    "a }%% b",
    "%{x}%",
    "`md` tail",
    "`md`",
    "` a `",
    "`",
    "``",
    "`a`b`",
    "`a",
    "a`",
    "head `x`",
    "<b>bold</b>",
    "a<br/>b",
    "#quot;",
    "&lt;",
    "trail\\",
    "style: red#quot; ok;",
    "😀",
    f"N{WJ}7 %{WJ}% <{WJ}br/>",
]


def label_canvas(label: str) -> str:
    return (
        f'flowchart TD\n    001-N1["{label}"] --> 001-N2["x"]\n    001-N1 -->|"{label}"| 001-N3\n'
    )


def test_every_canvas_memviz_writes_parses_in_mermaid(mermaid_verdicts):
    bodies = {
        f"{case.canvas} · {case.op} · {case.typed!r}": render_body(case.result.text)
        for case in op_cases()
        if case.result is not None
    }
    assert len(bodies) > 800
    assert_mermaid_parses(mermaid_verdicts, bodies)


def test_the_engine_reports_every_label_mermaid_rejects(mermaid_verdicts):
    texts = {label: label_canvas(label) for label in RAW_LABELS}
    texts.update({f"multi-line {k}": f'flowchart TD\n    A["x\n{k} y"]\n' for k in ("%%", "  %%")})
    verdicts = dict(zip(texts, mermaid_verdicts(list(texts.values())), strict=True))
    disagree = {}
    for name, text in texts.items():
        engine_error = parse(text).has_errors
        mermaid_error = verdicts[name] is not None
        # stricter on purpose: a closed `%%{…}%%` in a label parses, but mermaid drops its text
        closed_directive = "%%{" in name and "}%%" in name
        if mermaid_error != engine_error and not (closed_directive and engine_error):
            disagree[name] = (engine_error, verdicts[name])
    assert not disagree, disagree
    assert (
        sum(v is not None for v in verdicts.values()) >= 8
    )  # the samples do reach mermaid's errors


def test_human_text_of_every_hostile_sample_parses_as_a_label(mermaid_verdicts):
    """What `human_text` writes is a valid quoted label and edge label, whatever was typed."""
    samples = [*HOSTILE, *RAW_LABELS, "\\", "`", "``", '"', "|", "<", "&", "#", "%", "}%%{"]
    texts = {
        repr(sample): label_canvas(human_text(sample)).replace(
            f'|"{human_text(sample)}"|', f'|"{human_text(sample, "edge_label")}"|'
        )
        for sample in samples
        if human_text(sample)
    }
    for name, text in texts.items():
        assert not parse(text).has_errors, name
    assert_mermaid_parses(mermaid_verdicts, texts)


RENDER_ALL = """async (sources) => {
  mermaid.initialize({startOnLoad: false, securityLevel: "strict"});
  const texts = [];
  for (const [index, source] of sources.entries()) {
    const {svg} = await mermaid.render("g" + index, source);
    const holder = document.createElement("div");
    holder.innerHTML = svg;
    texts.push(holder.textContent);
  }
  return texts;
}"""


def test_mermaid_shows_typed_text_as_typed(mermaid_page):
    """Rendered (not only parsed): the note a person typed is the text mermaid draws."""
    from canvases.mermaid import edits

    from .cases import all_canvases, as_typed

    base = all_canvases()["fixture-a-upstream/001-fix-login-timeout.mmd"]
    sources = [render_body(edits.annotate(base, "001-N2", typed).text) for typed in HOSTILE]
    drawn = mermaid_page.evaluate(RENDER_ALL, sources)
    for typed, text in zip(HOSTILE, drawn, strict=True):
        shown = " ".join(text.replace(WJ, "").split())
        assert "note: " + " ".join(as_typed(typed).split()) in shown, (typed, shown)
