import json
from pathlib import Path

from agentfs.jsonl import read_rows
from agentfs.layout import discover_agents, is_agent_folder
from agentfs.refs import resolve_ref
from agentfs.state import active_mmd_file, read_state

ROW = json.dumps({"tool_call_id": "call_1", "result_ref": "refs/r.md"}) + "\n"


def test_data_root_with_three_fixture_agents(fixtures: Path) -> None:
    root = fixtures / "all"
    root.mkdir()
    for name, source in [("main", "fixture-a-upstream/main"), ("coder", "fixture-b-wild/coder")]:
        (fixtures / source).rename(root / name)
    (fixtures / "fixture-c-enhanced/main").rename(root / "etl")
    # Root-level legacy files the reclaimer tolerates are not agents.
    (root / "offload-legacy.jsonl").write_text(ROW)
    (root / "debug.log").write_text("x")
    (root / ".DS_Store").write_text("x")
    agents = discover_agents(root)
    assert [(a.name, a.variant) for a in agents] == [
        ("coder", "upstream"),
        ("etl", "enhanced"),
        ("main", "upstream"),
    ]
    assert [len(a.session_files) for a in agents] == [2, 2, 2]
    assert not is_agent_folder(root)


def test_single_agent_folder_is_accepted_as_root(agent_a: Path) -> None:
    (agent,) = discover_agents(agent_a)
    assert agent.name == "main" and agent.path == agent_a and agent.variant == "upstream"
    assert [s.session_id for s in agent.session_files] == [
        "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90",
        "b7e4d2a0-1c9f-4e63-a8d5-2f0c7b9e6d14",
    ]
    assert all(s.layout_dir == agent_a for s in agent.session_files)
    assert [p.name for p in agent.mmd_files] == [
        "001-fix-login-timeout.mmd",
        "002-migrate-orders-api.mmd",
    ]
    assert agent.state_path == agent_a / "state.json"
    assert agent.registry_path == agent_a / "sessions-registry.json"
    assert agent.refs_dir == agent_a / "refs" and agent.extra_files == []


def test_wild_agent_keeps_the_pre_id_session_and_chinese_canvas(agent_b: Path) -> None:
    (agent,) = discover_agents(agent_b)
    assert [s.session_id for s in agent.session_files] == [
        "5d0c9e12-8b7a-4f31-9e2d-0c4b6a7f1e38",
        "main",
    ]
    assert agent.mmd_files[-1].name == "004-修复CI缓存.mmd"


def test_enhanced_extras_are_not_sessions_and_temp_files_are_ignored(agent_c: Path) -> None:
    (agent_c / "sessions-registry.json.tmp.1a2b3c4d").write_text("{")
    (agent_c / "mmds" / ".002-etl-chunked-rewrite.mmd.tmp-1-2-3").write_text("")
    (agent,) = discover_agents(agent_c)
    assert agent.variant == "enhanced"
    assert len(agent.session_files) == 2
    assert all(s.path.name.startswith("offload-") for s in agent.session_files)
    assert sorted(p.name.split("-")[0] for p in agent.extra_files) == [
        "boundaries",
        "boundaries",
        "degraded",
    ]
    every = [str(p) for p in agent.extra_files + agent.mmd_files]
    every += [str(s.path) for s in agent.session_files]
    assert not any(".tmp" in p for p in every)


def test_fresh_agent_with_only_empty_dirs_is_an_agent(tmp_path: Path) -> None:
    (tmp_path / "root" / "new" / "refs").mkdir(parents=True)
    (tmp_path / "root" / "new" / "mmds").mkdir()
    (tmp_path / "root" / "stray").mkdir()
    agents = discover_agents(tmp_path / "root")
    assert [a.name for a in agents] == ["new"]
    assert agents[0].session_files == [] and agents[0].state_path is None
    assert is_agent_folder(tmp_path / "root" / "new")
    assert not is_agent_folder(tmp_path / "root" / "stray")
    assert discover_agents(tmp_path / "missing") == []


def test_upstream_agent_with_session_named_like_itself_is_not_go(tmp_path: Path) -> None:
    agent_dir = tmp_path / "main"
    (agent_dir / "refs").mkdir(parents=True)
    (agent_dir / "offload-main.jsonl").write_text(ROW)
    (agent_dir / "state.json").write_text('{\n  "activeMmdFile": null\n}')
    (agent,) = discover_agents(tmp_path)
    assert (agent.name, agent.variant) == ("main", "upstream")


def make_go_session(scope: Path, session_id: str, active: str) -> Path:
    folder = scope / session_id
    (folder / "refs").mkdir(parents=True)
    (folder / "mmds").mkdir()
    (folder / f"offload-{session_id}.jsonl").write_text(ROW)
    (folder / "refs" / "r.md").write_text("# Tool Result\n")
    (folder / "mmds" / active).write_text("flowchart TD\n")
    (folder / "state.json").write_text(json.dumps({"active_mmd_file": active}, indent=2))
    (folder / "sessions-registry.json").write_text("{}")
    return folder


def test_go_port_per_session_layout(tmp_path: Path) -> None:
    root = tmp_path / ".tdai-offload"
    scope = root / "agent_app_user_coder"
    first = make_go_session(scope, "sess-a", "001-a.mmd")
    second = make_go_session(scope, "sess-b", "001-b.mmd")
    for start in (root, scope):
        (agent,) = discover_agents(start)
        assert (agent.name, agent.variant) == ("agent_app_user_coder", "go")
        assert [(s.session_id, s.layout_dir) for s in agent.session_files] == [
            ("sess-a", first),
            ("sess-b", second),
        ]
        assert [p.name for p in agent.mmd_files] == ["001-a.mmd", "001-b.mmd"]
        assert agent.refs_dirs == [first / "refs", second / "refs"]
        assert agent.session_files[1].state_path == second / "state.json"
        session = agent.session_files[0]
        row = read_rows(session.path).rows[0]
        assert row.result_ref is not None
        assert resolve_ref(session.layout_dir, row.result_ref).is_file()
        assert active_mmd_file(read_state(agent.state_path)) in {"001-a.mmd", "001-b.mmd"}


def make_server_session(store: Path, session: str) -> Path:
    folder = store / "offload" / session
    (folder / "refs").mkdir(parents=True)
    (folder / "mmds").mkdir()
    key = f"offload/{session}/refs/call_1.md"
    (folder / "entries.jsonl").write_text(
        json.dumps({"tool_call_id": "call_1", "result_ref": key}) + "\n"
    )
    (folder / "pending.jsonl").write_text("")
    (folder / "node-mapping.jsonl").write_text('{"tool_call_id":"call_1","node_id":"x-orphan"}\n')
    (folder / "compact-state.json").write_text("{}")
    (folder / "refs" / "call_1.md").write_text("**tool_call_id:** call_1\n\nresult\n")
    (folder / "mmds" / "001-x.mmd").write_text("")
    return folder


def test_server_layout(tmp_path: Path) -> None:
    store = tmp_path / "storage"
    one = make_server_session(store, "s1")
    two = make_server_session(store, "s2")
    for start in (store, store / "offload"):
        (agent,) = discover_agents(start)
        assert (agent.name, agent.variant) == ("storage", "server")
        assert [(s.session_id, s.path.name, s.layout_dir) for s in agent.session_files] == [
            ("s1", "entries.jsonl", one),
            ("s2", "entries.jsonl", two),
        ]
        names = sorted({p.name for p in agent.extra_files})
        assert names == ["compact-state.json", "node-mapping.jsonl", "pending.jsonl"]
        row = read_rows(agent.session_files[0].path).rows[0]
        assert row.result_ref is not None
        assert resolve_ref(agent.session_files[0].layout_dir, row.result_ref).is_file()
    (single,) = discover_agents(one)
    assert single.variant == "server" and len(single.session_files) == 1


def test_results_are_deterministic(agent_c: Path) -> None:
    first = discover_agents(agent_c.parent)
    assert first == discover_agents(agent_c.parent) and len(first) == 1
