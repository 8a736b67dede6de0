"""A first start with no data root of the user's own serves a copy of the demo, never the clone's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO

DEMO = REPO / "demo" / "context-offload"
PRINT_ROOT = "from django.conf import settings; print(settings.MEMVIZ_DATA_ROOT)"


def settings_data_root(home: Path, var: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMVIZ_DATA_ROOT"}
    env.update(
        HOME=str(home), MEMVIZ_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="memviz.settings"
    )
    code = f"import django; django.setup(); {PRINT_ROOT}"
    return subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
    )


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_demo_is_served_from_a_copy_in_var(tmp_path: Path) -> None:
    var = tmp_path / "var"
    process = settings_data_root(tmp_path / "home", var)
    out, _ = process.communicate(timeout=60)
    root = Path(out.strip())
    assert root == var / "demo" / "context-offload"
    assert files_of(root) == files_of(DEMO)
    # An agent at rest: a fresh clone's file times would read as an agent writing right now.
    assert max(p.stat().st_mtime for p in root.rglob("*")) < time.time() - 3600
    (root / "coder" / "mmds" / "001-k8s-canary-deploy.mmd").write_text("edited by a curator")
    again = settings_data_root(tmp_path / "home", var)
    assert Path(again.communicate(timeout=60)[0].strip()) == root
    assert (root / "coder" / "mmds" / "001-k8s-canary-deploy.mmd").read_text() == (
        "edited by a curator"  # a later start keeps the curated copy
    )


def test_processes_starting_together_share_one_whole_copy(tmp_path: Path) -> None:
    var = tmp_path / "var"
    processes = [settings_data_root(tmp_path / "home", var) for _ in range(4)]
    roots = {Path(p.communicate(timeout=60)[0].strip()) for p in processes}
    assert roots == {var / "demo" / "context-offload"}
    assert files_of(var / "demo" / "context-offload").keys() == files_of(DEMO).keys()
    assert [p.name for p in (var / "demo").iterdir()] == ["context-offload"]  # no temp left


def test_the_users_own_folder_wins(tmp_path: Path) -> None:
    own = tmp_path / "home" / ".openclaw" / "context-offload"
    own.mkdir(parents=True)
    process = settings_data_root(tmp_path / "home", tmp_path / "var")
    assert Path(process.communicate(timeout=60)[0].strip()) == own
    assert not (tmp_path / "var" / "demo").exists()
