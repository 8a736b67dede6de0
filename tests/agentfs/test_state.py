import json
from pathlib import Path

from agentfs.state import (
    active_mmd_file,
    parse_session_key,
    read_registry,
    read_state,
    state_value,
)


def test_fixture_state_keeps_unknown_keys(agent_b: Path) -> None:
    state = read_state(agent_b / "state.json")
    assert state.error is None
    assert active_mmd_file(state) == "004-修复CI缓存.mmd"
    assert state.data["reviewedBy"] == "ops-console"
    assert state.data["mmdCounter"] == 3 and state.data["estimatedSystemOverhead"] is None
    assert state.raw == (agent_b / "state.json").read_text()


def test_enhanced_state_has_last_processed_seq(agent_c: Path) -> None:
    state = read_state(agent_c / "state.json")
    assert state_value(state, "lastProcessedSeq") == 1
    assert active_mmd_file(state) == "002-etl-chunked-rewrite.mmd"


def test_corrupt_state_is_reported_not_raised(agent_a: Path) -> None:
    path = agent_a / "state.json"
    path.write_text('{"activeMmdFile": "002-migrate-orders-api.mmd",')
    state = read_state(path)
    assert state.data == {} and "not valid JSON" in (state.error or "")
    assert state.raw.startswith('{"activeMmdFile"')
    assert active_mmd_file(state) is None


def test_state_with_a_bom_is_treated_as_corrupt_like_the_plugin(agent_a: Path) -> None:
    path = agent_a / "state.json"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    state = read_state(path)
    assert state.data == {} and "BOM" in (state.error or "") and active_mmd_file(state) is None


def test_missing_or_non_object_state(tmp_path: Path) -> None:
    assert read_state(None).error and read_state(None).data == {}
    assert "missing" in (read_state(tmp_path / "state.json").error or "")
    (tmp_path / "state.json").write_text("[1]")
    assert "not a JSON object" in (read_state(tmp_path / "state.json").error or "")
    (tmp_path / "state.json").write_bytes(b'{"activeMmdFile": "caf\xff.mmd"}')
    assert active_mmd_file(read_state(tmp_path / "state.json")) == "caf\ufffd.mmd"


def test_go_snake_case_state(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"active_mmd_file": "001-x.mmd", "mmd_counter": 1}, indent=2))
    state = read_state(path)
    assert active_mmd_file(state) == "001-x.mmd" and state_value(state, "mmdCounter") == 1
    assert "active_mmd_file" in state.data  # stored as written


def test_registry_marks_stale_entries(agent_b: Path) -> None:
    entries, error = read_registry(agent_b / "sessions-registry.json", agent_b)
    assert error is None
    by_key = {e.session_key: e for e in entries}
    live = by_key["agent:coder:telegram:direct:77120"]
    assert live.exists and live.session_id == "5d0c9e12-8b7a-4f31-9e2d-0c4b6a7f1e38"
    assert live.updated_at == "2026-06-13T03:31:12.502Z"
    stale = by_key["agent:coder:cron:nightly-deps"]
    assert not stale.exists and (stale.offload_file or "").endswith("0c1d2e3f4a5b.jsonl")


def test_registry_in_snake_case_and_with_hostile_file_names(tmp_path: Path) -> None:
    (tmp_path / "offload-s1.jsonl").write_text("")
    (tmp_path.parent / "offload-x.jsonl").write_text("")
    path = tmp_path / "sessions-registry.json"
    path.write_text(
        json.dumps(
            {
                "k1": {"session_id": "s1", "offload_file": "offload-s1.jsonl"},
                "k2": {"sessionId": "x", "offloadFile": "../offload-x.jsonl"},
                "k3": "garbage",
            }
        )
    )
    entries, error = read_registry(path, tmp_path)
    assert [(e.session_key, e.session_id, e.exists) for e in entries] == [
        ("k1", "s1", True),
        ("k2", "x", False),
    ]
    assert error is not None and "k3" in error.reason


def test_a_registry_entry_whose_file_is_a_link_has_no_file(tmp_path: Path) -> None:
    """The reader refuses a session file that is a link (even to another file of the folder),
    so the registry does not claim the session's file exists."""
    (tmp_path / "offload-s1.jsonl").write_text("")
    (tmp_path / "offload-s2.jsonl").symlink_to("offload-s1.jsonl")
    (tmp_path / "sessions-registry.json").write_text(
        json.dumps({"k1": {"sessionId": "s1"}, "k2": {"sessionId": "s2"}})
    )
    entries, _ = read_registry(tmp_path / "sessions-registry.json", tmp_path)
    assert [(e.session_id, e.exists) for e in entries] == [("s1", True), ("s2", False)]


def test_corrupt_or_absent_registry(tmp_path: Path) -> None:
    assert read_registry(None, tmp_path) == ([], None)
    assert read_registry(tmp_path / "sessions-registry.json", tmp_path) == ([], None)
    (tmp_path / "sessions-registry.json").write_text("{")
    entries, error = read_registry(tmp_path / "sessions-registry.json", tmp_path)
    assert entries == [] and error is not None and "not valid JSON" in error.reason


def test_parse_session_key_follows_the_plugin() -> None:
    assert parse_session_key("agent:main:telegram:direct:42") == ("main", "telegram_direct_42")
    assert parse_session_key("agent:bot:swebench-w3-task9") == ("bot-w3", "swebench-w3-task9")
    assert parse_session_key("agent:a:x/../y") == ("a", "x___y")
    assert parse_session_key("cron:nightly") is None


def test_the_active_canvas_is_the_name_exactly_as_the_plugin_reads_it(tmp_path: Path) -> None:
    """The plugin opens `mmds/<activeMmdFile>` as written: a name with a space around it names
    no file (the agent gets no canvas), so it is not trimmed into one that does."""
    path = tmp_path / "state.json"
    for written, active in [
        (" 002-x.mmd", " 002-x.mmd"),
        ("002-x.mmd", "002-x.mmd"),
        ("", None),
        (None, None),
        (7, None),
    ]:
        path.write_text(json.dumps({"activeMmdFile": written}), "utf-8")
        assert active_mmd_file(read_state(path)) == active, written
