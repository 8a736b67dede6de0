"""The browser scripts' pure parts (tests/js/*.test.mjs, node's own test runner) run with the suite."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_the_javascript_unit_tests_pass() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is installed by `make setup` (npm)")
    files = sorted(str(p) for p in (REPO / "tests" / "js").glob("*.test.mjs"))
    assert files, "tests/js holds the JavaScript unit tests"
    done = subprocess.run([node, "--test", *files], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout
