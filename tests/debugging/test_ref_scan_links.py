"""The diagnosis reads a ref as the ref page does: a ref that is a link, or a refs/ folder that
is a link, is not read through (even when it points inside the agent folder), so a finding
never rests on a file the page refuses to show."""

from __future__ import annotations

from pathlib import Path

from debugging.debug_selectors import _scanner
from sessions.models import Agent

REF = "# Tool Result: exec\n\n**Result:**\n\nError: boom\n"


def test_a_linked_ref_is_not_read_through(tmp_path: Path) -> None:
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / "a.md").write_text(REF, "utf-8")
    (tmp_path / "refs" / "b.md").symlink_to("a.md")
    (tmp_path / "elsewhere.md").write_text(REF, "utf-8")
    (tmp_path / "refs" / "c.md").symlink_to("../elsewhere.md")
    scan = _scanner(Agent(slug="main", path=str(tmp_path)))
    found = scan("refs/a.md")
    assert found is not None and found.error_line == "Error: boom"
    assert scan("refs/b.md") is None
    assert scan("refs/c.md") is None
    assert scan("elsewhere.md") is not None  # a plain file named as it is


def test_refs_linked_to_a_folder_inside_is_not_read_through(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "a.md").write_text(REF, "utf-8")
    (tmp_path / "refs").symlink_to("store")
    scan = _scanner(Agent(slug="main", path=str(tmp_path)))
    assert scan("refs/a.md") is None
    assert scan("store/a.md") is not None
