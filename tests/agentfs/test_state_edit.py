"""Setting the active canvas in state.json byte-preservingly, and the resume preview block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentfs.atomic import PreconditionFailed, file_hash
from agentfs.state_edit import (
    CANVAS_BUDGET_CHARS,
    canvas_label,
    create_minimal_state,
    estimate_tokens,
    resume_block,
    set_active_canvas,
)
from canvases.mermaid.agent_view import injected_block


def test_only_the_two_values_change(agent_a: Path) -> None:
    state = agent_a / "state.json"
    old = state.read_text()
    state.chmod(0o600)

    new_hash = set_active_canvas(state, "001-fix-login-timeout.mmd")

    new = state.read_text()
    assert new_hash == file_hash(state)
    assert new == old.replace(
        '"activeMmdFile": "002-migrate-orders-api.mmd"',
        '"activeMmdFile": "001-fix-login-timeout.mmd"',
    ).replace('"activeMmdId": "migrate-orders-api"', '"activeMmdId": "fix-login-timeout"')
    assert not new.endswith("\n")
    assert state.stat().st_mode & 0o777 == 0o600
    assert json.loads(new)["mmdCounter"] == 2


def test_cjk_name_and_unknown_keys(agent_b: Path) -> None:
    state = agent_b / "state.json"
    set_active_canvas(state, "003-k8s-canary-deploy.mmd")
    data = json.loads(state.read_text())
    assert data["activeMmdId"] == "k8s-canary-deploy"
    assert data["reviewedBy"] == "ops-console" and data["mmdCounter"] == 3
    set_active_canvas(state, "004-修复CI缓存.mmd")
    assert "修复CI缓存" in state.read_text()  # written as UTF-8, not \\u-escaped


def test_missing_id_key_reserialises_in_the_files_style(agent_a: Path) -> None:
    state = agent_a / "state.json"
    data = json.loads(state.read_text())
    del data["activeMmdId"]
    state.write_text(json.dumps(data, indent=2, ensure_ascii=False))
    set_active_canvas(state, "001-fix-login-timeout.mmd")
    text = state.read_text()
    assert text == json.dumps(
        data | {"activeMmdFile": "001-fix-login-timeout.mmd", "activeMmdId": "fix-login-timeout"},
        indent=2,
        ensure_ascii=False,
    )


def test_go_variant_uses_snake_case(tmp_path: Path) -> None:
    (tmp_path / "mmds").mkdir()
    (tmp_path / "mmds" / "001-a.mmd").write_text("flowchart TD")
    state = tmp_path / "state.json"
    state.write_text(
        '{\n  "active_mmd_file": null,\n  "active_mmd_id": "",\n  "mmd_counter": 4\n}\n'
    )
    set_active_canvas(state, "001-a.mmd")
    assert state.read_text() == (
        '{\n  "active_mmd_file": "001-a.mmd",\n  "active_mmd_id": "a",\n  "mmd_counter": 4\n}\n'
    )


@pytest.mark.parametrize(
    "name", ["../state.json", "mmds/002-migrate-orders-api.mmd", "", ".x.mmd", "009-nope.mmd"]
)
def test_bad_names_are_refused(agent_a: Path, name: str) -> None:
    state = agent_a / "state.json"
    before = state.read_bytes()
    with pytest.raises(ValueError):
        set_active_canvas(state, name)
    assert state.read_bytes() == before


@pytest.mark.parametrize("content", [b'{"activeMmdFile": ', b"\xef\xbb\xbf{}", b"[1, 2]"])
def test_corrupt_state_is_refused(agent_a: Path, content: bytes) -> None:
    state = agent_a / "state.json"
    state.write_bytes(content)
    with pytest.raises(ValueError, match="state.json"):
        set_active_canvas(state, "001-fix-login-timeout.mmd")
    assert state.read_bytes() == content


def test_stale_hash_is_refused(agent_a: Path) -> None:
    state = agent_a / "state.json"
    before = state.read_bytes()
    with pytest.raises(PreconditionFailed):
        set_active_canvas(state, "001-fix-login-timeout.mmd", expect_hash="0" * 64)
    assert state.read_bytes() == before
    set_active_canvas(state, "001-fix-login-timeout.mmd", expect_hash=file_hash(state))


def test_canvas_label() -> None:
    assert canvas_label("004-修复CI缓存.mmd") == "修复CI缓存"
    assert canvas_label("transformer-analysis-001.mmd") == "transformer-analysis-001"


def test_resume_block_is_the_agents_block(agent_a: Path) -> None:
    text = (agent_a / "mmds" / "002-migrate-orders-api.mmd").read_text()
    block = resume_block("main", "002-migrate-orders-api.mmd", text, "ignored")
    assert block == injected_block("002-migrate-orders-api.mmd", text)
    lines = block.split("\n")
    assert lines[0] == "<current_task_context>" and lines[-1] == "</current_task_context>"
    goal = lines.index("**任务目标:** 把 orders API 迁移到 v2 (Decimal money + cursor pagination)")
    assert lines[goal + 1] == "**任务文件:** 002-migrate-orders-api.mmd"
    fence = lines.index("```mermaid")
    assert (
        "\n".join(lines[fence + 1 : fence + 1 + len(text.split("\n"))]) == text
    )  # raw, metadata too
    assert "doing" in block.split("```")[-1]
    assert "任务目标" not in resume_block("main", "x.mmd", "flowchart TD", "")
    assert resume_block("main", "x.mmd", "", "") == ""  # an empty file: no block at all


def test_create_minimal_state(tmp_path: Path) -> None:
    (tmp_path / "mmds").mkdir()
    (tmp_path / "mmds" / "004-修复CI缓存.mmd").write_text("flowchart TD")
    new_hash = create_minimal_state(tmp_path, "004-修复CI缓存.mmd")
    state = tmp_path / "state.json"
    assert state.read_text(encoding="utf-8") == (
        '{\n  "activeMmdFile": "004-修复CI缓存.mmd",\n  "activeMmdId": "修复CI缓存"\n}'
    )
    assert new_hash == file_hash(state)
    assert {p.name for p in tmp_path.iterdir()} == {"mmds", "state.json"}  # no temp left
    state.write_text('{"activeMmdFile": null, "mine": 1}')
    with pytest.raises(FileExistsError):
        create_minimal_state(tmp_path, "004-修复CI缓存.mmd")
    assert state.read_text() == '{"activeMmdFile": null, "mine": 1}'  # never overwritten
    state.unlink()
    with pytest.raises(ValueError, match="does not exist"):
        create_minimal_state(tmp_path, "005-missing.mmd")
    with pytest.raises(ValueError, match="bare"):
        create_minimal_state(tmp_path, "../state.json")
    assert not state.exists()


def test_estimate_tokens() -> None:
    assert CANVAS_BUDGET_CHARS == 4000
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("修复缓存") == 4
    assert estimate_tokens("修复 abcd") == 2 + 2


def test_create_minimal_state_never_replaces_a_file_the_agent_creates_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent may write its own state.json after our existence check: its file wins."""
    import agentfs.atomic as atomic

    (tmp_path / "mmds").mkdir()
    (tmp_path / "mmds" / "001-x.mmd").write_text("flowchart TD")
    real_write_all = atomic.write_all

    def agent_writes_first(fd: int, data: bytes) -> None:
        (tmp_path / "state.json").write_text('{"activeMmdFile": "002-y.mmd"}')
        real_write_all(fd, data)

    monkeypatch.setattr(atomic, "write_all", agent_writes_first)
    with pytest.raises(FileExistsError):
        create_minimal_state(tmp_path, "001-x.mmd")
    assert (tmp_path / "state.json").read_text() == '{"activeMmdFile": "002-y.mmd"}'
    assert {p.name for p in tmp_path.iterdir()} == {"mmds", "state.json"}
