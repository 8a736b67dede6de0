"""RefLocator answers what resolve_ref + confine answer, links and hostile names included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentfs.paths import UnsafePath
from agentfs.refs import resolve_ref
from sessions.models import Agent
from sessions.selectors import RefLocator

pytestmark = pytest.mark.django_db

REFS = [
    "refs/a.md",
    "a.md",
    " refs/a.md ",
    "offload/s1/refs/a.md",
    "refs/missing.md",
    "refs/out.md",  # a link leading out of the folder
    "linked/a.md",  # a folder link leading out
    "inner/b.md",  # a folder link staying inside
    "../secret.md",
    "/etc/passwd",
    "refs\\a.md",
    "refs/../../x.md",
    "C:refs/a.md",
    "refs/a\x00.md",
    "",
    "   ",
]


def test_same_answers_as_resolve_ref(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    (agent_dir / "refs").mkdir(parents=True)
    (agent_dir / "refs" / "a.md").write_text("x")
    (agent_dir / "sub").mkdir()
    (agent_dir / "sub" / "b.md").write_text("x")
    (tmp_path / "secret.md").write_text("s")
    os.symlink(tmp_path / "secret.md", agent_dir / "refs" / "out.md")
    os.symlink(tmp_path, agent_dir / "linked")
    os.symlink(agent_dir / "sub", agent_dir / "inner")
    agent = Agent.objects.create(slug="a", name="a", path=str(agent_dir), root=str(tmp_path))
    locator = RefLocator(agent)
    for ref in REFS:
        got = locator.locate(ref)
        if not ref:
            assert got is None
            continue
        try:
            expected = resolve_ref(agent_dir, ref).relative_to(agent_dir.resolve()).as_posix()
        except (UnsafePath, ValueError) as exc:
            assert got == {"name": None, "url_name": None, "exists": False, "error": f"refused: {exc}"}, ref
        else:
            assert got is not None and got["name"] == expected and got["error"] is None, ref
