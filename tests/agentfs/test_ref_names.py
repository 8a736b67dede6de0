"""One rule names a ref (agentfs/refs.py): a row's `result_ref` → the ref's name in the index
(`ref_relative`), the plugin's own `refs/<name>` taken as it is on hot paths (`PLAIN_REF`), and
the name a ref page's URL takes (`ref_url_name`, `ref_names`). The fast path must never disagree
with the full one, or a page would link a ref the index names differently."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfs.paths import UnsafePath
from agentfs.refs import PLAIN_REF, ref_names, ref_relative, ref_url_name

TRICKY = [
    "refs/2026-06-09T08-00-00-000p08-00.md",
    "refs/x.md ",  # outer space: the full rule strips it, so the fast path must not take it
    "refs/x.md\n",
    "refs/\u00a0x.md",  # inner (no-break) space: a name like any other
    "refs/.",
    "refs/..",
    "refs/.hidden.md",
    "refs/a b.md",
    "refs/a/b.md",
    "refs/a\\b.md",
    "refs/",
    " refs/x.md",
    "x.md",
    "offload/s1/refs/x.md",
]


@pytest.mark.parametrize("value", TRICKY)
def test_the_fast_path_takes_only_what_the_full_rule_gives_back_unchanged(value: str) -> None:
    if PLAIN_REF.match(value):
        assert ref_relative(value) == value


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12))
def test_any_name_after_refs_agrees_with_the_full_rule(tail: str) -> None:
    value = f"refs/{tail}"
    plain = PLAIN_REF.match(value)
    if plain is None:
        return
    assert ref_relative(value) == value and plain.group(1) == tail


def test_what_the_fast_path_leaves_the_full_rule_still_names_or_refuses() -> None:
    assert ref_relative("refs/x.md ") == "refs/x.md"
    assert ref_relative("x.md") == "refs/x.md"
    assert ref_relative("offload/s1/refs/x.md") == "refs/x.md"
    with pytest.raises(UnsafePath):
        ref_relative("refs/../state.json")


def test_a_ref_pages_url_name_and_the_index_names_it_stands_for() -> None:
    assert ref_url_name("refs/x.md") == "x.md"
    assert ref_url_name("logs/x.md") == "logs/x.md"  # a ref a row cites outside refs/
    assert ref_names("x.md") == ["refs/x.md", "x.md"]
    assert ref_url_name(ref_names("x.md")[0]) == "x.md"
