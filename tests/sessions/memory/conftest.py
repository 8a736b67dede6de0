"""Copies of the shared fixture roots, so no test ever writes to the originals."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

SHARED_FIXTURES = Path(
    os.environ.get(
        "MEMVIZ_SHARED_FIXTURES", Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
    )
)


@pytest.fixture
def fixtures(tmp_path: Path) -> Path:
    """A private copy of ../shared/fixtures holding fixture-a-upstream, -b-wild, -c-enhanced."""
    target = tmp_path / "fixtures"
    shutil.copytree(SHARED_FIXTURES, target, symlinks=True)
    return target


@pytest.fixture
def agent_a(fixtures: Path) -> Path:
    return fixtures / "fixture-a-upstream" / "main"


@pytest.fixture
def agent_b(fixtures: Path) -> Path:
    return fixtures / "fixture-b-wild" / "coder"


@pytest.fixture
def agent_c(fixtures: Path) -> Path:
    return fixtures / "fixture-c-enhanced" / "main"
