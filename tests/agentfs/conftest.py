"""Copies of the example data roots (tests/fixtures/roots), so no test writes to the originals."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURE_ROOTS


@pytest.fixture
def fixtures(tmp_path: Path) -> Path:
    """A private copy of the roots fixture-a-upstream, -b-wild, -c-enhanced."""
    target = tmp_path / "fixtures"
    shutil.copytree(FIXTURE_ROOTS, target, symlinks=True)
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
