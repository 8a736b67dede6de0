"""The atomic writer: preconditions, mode, temp hygiene, and old-or-new under SIGKILL."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentfs.atomic import (
    PreconditionFailed,
    file_hash,
    remove_stale_temps,
    sha256_bytes,
    write_atomic,
)

HERE = Path(__file__).resolve().parent
CANVAS = "002-migrate-orders-api.mmd"


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if ".memviz-tmp-" in p.name]


def test_write_keeps_mode_and_returns_hash(agent_a: Path) -> None:
    path = agent_a / "mmds" / CANVAS
    path.chmod(0o640)
    data = path.read_bytes() + b"\n    002-N5 --> 002-N1"
    new_hash = write_atomic(path, data, expect_hash=file_hash(path))
    assert path.read_bytes() == data
    assert new_hash == sha256_bytes(data) == file_hash(path)
    assert path.stat().st_mode & 0o777 == 0o640
    assert leftovers(path.parent) == []


def test_stale_hash_writes_nothing(agent_a: Path) -> None:
    path = agent_a / "mmds" / CANVAS
    before = path.read_bytes()
    stale = sha256_bytes(b"what the page showed")
    with pytest.raises(PreconditionFailed) as caught:
        write_atomic(path, b"new", expect_hash=stale)
    assert caught.value.current_hash == sha256_bytes(before)
    assert "changed on disk" in str(caught.value)
    assert path.read_bytes() == before
    assert leftovers(path.parent) == []


def test_vanished_file_writes_nothing(agent_a: Path) -> None:
    path = agent_a / "mmds" / CANVAS
    known = file_hash(path)
    path.unlink()
    with pytest.raises(PreconditionFailed, match="vanished") as caught:
        write_atomic(path, b"new", expect_hash=known)
    assert caught.value.current_hash is None
    with pytest.raises(PreconditionFailed):
        write_atomic(path, b"new")  # must_exist defaults to True
    assert not path.exists()
    assert leftovers(path.parent) == []


def test_new_file_when_allowed(tmp_path: Path) -> None:
    path = tmp_path / "005-new.mmd"
    write_atomic(path, b"flowchart TD", must_exist=False)
    assert path.read_bytes() == b"flowchart TD"
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()


def test_temp_is_removed_when_the_write_fails(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "a.mmd"
    path.write_bytes(b"old")

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, b"new")
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["a.mmd"]


def test_temp_name_is_a_dotfile_the_plugin_ignores(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(b"{}")
    seen = []
    real_replace = os.replace

    def recording_replace(source: str, target: str) -> None:
        seen.append(Path(source).name)
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", recording_replace)
    write_atomic(path, b'{"a": 1}')
    (name,) = seen
    assert name.startswith(".state.json.memviz-tmp-")
    assert not name.endswith((".mmd", ".jsonl", ".json"))


def test_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real.mmd").write_bytes(b"x")
    (tmp_path / "link.mmd").symlink_to(tmp_path / "real.mmd")
    with pytest.raises(ValueError, match="symlink"):
        write_atomic(tmp_path / "link.mmd", b"y")
    assert (tmp_path / "real.mmd").read_bytes() == b"x"


def _load_victim():
    spec = importlib.util.spec_from_file_location(
        "crash_writer_proc", HERE / "crash_writer_proc.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_and_kill(args: list[str], rng: random.Random) -> int:
    """Kill the victim after 1-8 complete writes (chosen by rng), at a random moment of the
    next one (10%: at once). Returns the writes it reported done; the file holds that
    version or a later one, never a torn one."""
    victim = subprocess.Popen(
        [sys.executable, str(HERE / "crash_writer_proc.py"), *args],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert victim.stdout is not None
    writes = rng.randint(1, 8)
    for expected in range(1, writes + 1):
        assert victim.stdout.readline().strip() == f"wrote {expected}"
    if rng.random() < 0.9:
        with contextlib.suppress(subprocess.TimeoutExpired):
            victim.wait(timeout=rng.uniform(0, 0.01))
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    victim.stdout.close()
    return writes


@pytest.mark.slow
def test_sigkill_leaves_old_or_new_file(tmp_path: Path) -> None:
    victim = _load_victim()
    path = tmp_path / "001-crash.mmd"
    path.write_bytes(victim.content_for(0))
    path.chmod(0o604)
    rng = random.Random(7)
    versions = set()
    for _ in range(40):
        writes = _run_and_kill(["atomic", str(path)], rng)
        data = path.read_bytes()
        version = int(data.split(b"\n", 1)[0].split()[1])
        assert data == victim.content_for(version)  # a complete version, never a torn one
        assert version >= writes  # a write reported done is never undone
        assert path.stat().st_mode & 0o777 == 0o604
        versions.add(version)
        remove_stale_temps(tmp_path)
        assert leftovers(tmp_path) == []
    assert len(versions) > 5


@pytest.mark.slow
def test_sigkill_during_remap_leaves_each_file_old_or_new(tmp_path: Path) -> None:
    states = {}
    for index in range(3):
        rows = [
            {"tool_call_id": f"c{index}-{k}", "summary": "中文摘要" * 20, "node_id": "X", "k": k}
            for k in range(2000)
        ]
        lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in rows]
        x_text = ("\n".join(lines) + "\n").encode()
        name = f"offload-s{index}.jsonl"
        (tmp_path / name).write_bytes(x_text)
        states[name] = {x_text, x_text.replace(b'"node_id":"X"', b'"node_id":"Y"')}
    rng = random.Random(11)
    for _ in range(30):
        _run_and_kill(["remap", str(tmp_path)], rng)
        for name, allowed in states.items():
            assert (tmp_path / name).read_bytes() in allowed
        remove_stale_temps(tmp_path)
        assert leftovers(tmp_path) == []


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
