"""The push client runs on the agent's machine with the standard library alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_push_client_needs_no_third_party_package(tmp_path: Path) -> None:
    # -S: no site-packages at all, as on a machine where only the repo was copied
    done = subprocess.run(
        [
            sys.executable,
            "-S",
            "-m",
            "memviz.push",
            str(tmp_path),
            "http://127.0.0.1:9",
            "t",
            "--once",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "ModuleNotFoundError" not in done.stderr, done.stderr
    assert "No module named" not in done.stderr, done.stderr
