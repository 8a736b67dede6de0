"""Any text a person types in any field: the canvas still parses in mermaid, round-trips through
the engine, keeps the agent's rules, and the field reads back as typed (up to the substitutions
documented in docs/write-back.md). Examples are collected first, then one chromium page parses
them all."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from canvases.mermaid import EditError, edits, parse, render_body
from canvases.mermaid.human_text import human_text_display

from . import reference
from .cases import TEMPLATES, WJ, as_typed, fixture_canvases
from .conftest import assert_mermaid_parses

pytestmark = [pytest.mark.browser]

BITS = [
    "%%", "%%{", "}%%", "%%{init: x}%%", "%", "{", "}", "N", "7", "-", "001-N7", "N9", "1001-N3",
    "n_001-N1", "-N", "status:", "summary: ", "Timestamp:", "timestamp：", "class a done", "<br/>",
    "<br>", "<", ">", "&", "#", ";", "quot", "#quot;", "&lt;", "&amp", '"', "`", "\\", "|", "\n",
    "\r\n", "\u2028", "\t", WJ, "]", ")", "[", "-->", ":::", "end", " ", "：", "😀", "修复",
]  # fmt: skip
TYPED = st.lists(st.one_of(st.sampled_from(BITS), st.text(max_size=4)), max_size=14).map(
    lambda parts: "".join(parts)[:140]
)
FIELDS = [
    "note",
    "title",
    "summary",
    "status",
    "merge_label",
    "merge_summary",
    "edge_label",
    "goal",
]
CANVASES = {**fixture_canvases(), **TEMPLATES}
REFUSALS = ("the title cannot be empty", "the status cannot be empty", "a status is one short word")


def apply(text: str, field: str, typed: str) -> tuple[edits.EditResult, str]:
    """Run the edit that writes `typed` into `field`; returns the result and the node it touched."""
    ids = list(parse(text).nodes)
    node = ids[-1]
    if field == "note":
        return edits.annotate(text, node, typed), node
    if field == "title":
        return edits.edit_label(text, node, title=typed), node
    if field == "summary":
        return edits.edit_label(text, node, summary=typed), node
    if field == "status":
        return edits.set_status(text, node, typed), node
    if field == "goal":
        return edits.set_meta(text, taskGoal=typed), node
    if field == "edge_label":
        pairs = {(e.source, e.target) for e in parse(text).edges}
        source, target = next(
            (a, b) for a in reversed(ids) for b in ids if a != b and (a, b) not in pairs
        )
        return edits.add_edge(text, source, target, label=typed), f"{source}>{target}"
    keep = ids[-2]
    if field == "merge_label":
        return edits.merge(text, [keep, ids[-1]], label=typed), keep
    return edits.merge(text, [keep, ids[-1]], summary=typed), keep


def read_back(text: str, field: str, node: str) -> str | None:
    """The field as the engine's parser reads it; None when the edit fell back to a default."""
    doc = parse(text)
    if field == "goal":
        return doc.meta.task_goal
    if field == "edge_label":
        source, target = node.split(">")
        label = next(e.label for e in doc.edges if (e.source, e.target) == (source, target))
        return human_text_display(label or "")
    if node not in doc.nodes:
        return None
    fields = doc.nodes[node].fields
    if field == "note":
        return fields.extra.get("note", "")
    if field in ("title", "merge_label"):
        return fields.title
    if field in ("summary", "merge_summary"):
        return fields.summary or ""
    return fields.status


def expected(typed: str, field: str) -> str:
    text = as_typed(typed)
    if field == "status" and text.lower() in ("done", "doing", "todo", "paused", "blocked"):
        return text.lower()
    return text


def test_any_typed_text_in_any_field(mermaid_verdicts):
    bodies: dict[str, str] = {}

    @settings(
        max_examples=200,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(st.sampled_from(sorted(CANVASES)), st.sampled_from(FIELDS), TYPED)
    def one(name: str, field: str, typed: str) -> None:
        text = CANVASES[name]
        if len(parse(text).nodes) < 2 and field in ("edge_label", "merge_label", "merge_summary"):
            field = "note"  # a one-node canvas has nothing to link or merge
        try:
            result, node = apply(text, field, typed)
        except EditError as error:
            assert str(error).startswith(REFUSALS), error
            assert field in ("title", "status")
            return
        new = result.text
        doc = parse(new)
        assert not doc.has_errors, doc.problems
        assert reference.strict_line_one(new) and not reference.empty_shell(new)
        want = expected(typed, field)
        got = read_back(new, field, node)
        defaulted = field.startswith("merge") and not want  # an empty label keeps the merged one
        if not defaulted:
            assert got == want
        elif field == "merge_label":
            assert got  # the merged titles: a label is never left without its title
        if field == "goal":
            assert (reference.goal(new) or "").replace(WJ, "") == want
        else:
            # round trip: another edit of the same node carries the written text unchanged
            other = edits.set_status(new, node.split(">")[0], "doing").text
            if not defaulted:
                assert read_back(other, field, node) == (want if field != "status" else "doing")
        new_ids = set(reference.index_ids(new)) - set(reference.index_ids(text))
        assert new_ids <= {t for n in doc.nodes for t in reference.index_ids(n)}
        bodies[f"{name} · {field} · {typed!r}"] = render_body(new)

    one()
    assert len(bodies) > 100
    assert_mermaid_parses(mermaid_verdicts, bodies)
