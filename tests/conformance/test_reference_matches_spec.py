"""The reference implementation's fixed text is the spec's, verbatim (format spec §4.8.1)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import EXTRA_FIXTURE_ROOTS, REPO

from . import reference

# The spec beside the clone when a workplace has it (so a change to it is noticed), else the
# copy the tests carry.
SPEC_BESIDE = EXTRA_FIXTURE_ROOTS.parent / "format-spec.md"
SPEC = SPEC_BESIDE if SPEC_BESIDE.is_file() else REPO / "tests" / "fixtures" / "format-spec.md"


@pytest.fixture(scope="module")
def template() -> list[str]:
    """The lines of the §4.8.1 block template, without the `(optional: …)` notes."""
    if not SPEC.is_file():
        pytest.fail(f"the format spec is missing at {SPEC}")
    text = SPEC.read_text(encoding="utf-8")
    section = text[text.index("### 4.8") : text.index("## 5.")]
    block = section[section.index("````text\n") + len("````text\n") : section.index("\n   ````\n")]
    lines = [line[3:] if line.startswith("   ") else line for line in block.split("\n")]
    return [re.sub(r"\s+\(optional: .*\)$", "", line) for line in lines]


def test_the_template_lines_are_the_references(template):
    assert template[0] == reference.OPEN
    assert template[1] == reference.PREAMBLE
    assert template[2] == reference.GOAL + "<taskGoal>"
    assert template[3] == reference.FILE + "<activeMmdFile>"
    assert template[4] == reference.NODE_INDEX
    assert template[5:8] == ["```mermaid", "<the file content, unchanged>", "```"]
    assert template[8:] == [reference.REMINDER, reference.CLOSE]


def test_the_spec_states_the_patterns_the_reference_implements():
    text = SPEC.read_text(encoding="utf-8")
    assert r"`^%%\{\s*(.*?)\s*\}%%`" in text  # §4.2: the whole-file match
    assert r"\b(\d+-N\d+|N\d+)\b" in text  # §4.8.1 node index
    assert r"\b\d{3}-N\d+\b" in text  # §4.8.2 fallback
    assert "3 or fewer non-empty lines" in text  # §4.8.4
    assert "its length and its first 64 characters" in text  # §4.8.6
