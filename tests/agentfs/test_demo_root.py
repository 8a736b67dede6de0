import re
from pathlib import Path

from agentfs.jsonl import read_rows
from agentfs.layout import discover_agents
from agentfs.refs import read_ref_info, resolve_ref, split_ref, unwrap_tool_result
from agentfs.state import active_mmd_file, read_registry, read_state

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "demo" / "context-offload"
NODE_ID = re.compile(r"^\s*(?:subgraph\s+\S+\s+)?(\d{3}-N\d+)[\[{(]", re.M)


def test_committed_demo_is_what_the_script_writes(tmp_path: Path) -> None:
    from demo.make_demo import make_demo

    size = make_demo(tmp_path / "demo")
    assert size < 300_000
    written = sorted(p.relative_to(tmp_path / "demo") for p in (tmp_path / "demo").rglob("*"))
    committed = sorted(p.relative_to(DEMO) for p in DEMO.rglob("*"))
    assert written == committed
    for relative in written:
        if (DEMO / relative).is_file():
            assert (DEMO / relative).read_bytes() == (tmp_path / "demo" / relative).read_bytes()


def test_demo_reads_cleanly_apart_from_its_deliberate_oddities() -> None:
    agents = discover_agents(DEMO)
    assert [(a.name, a.variant) for a in agents] == [
        ("coder", "upstream"),
        ("etl", "enhanced"),
        ("main", "upstream"),
        ("research", "upstream"),
    ]
    corrupt, missing, unwrapped, unplaced, rows = [], [], 0, 0, 0
    for agent in agents:
        state = read_state(agent.state_path)
        active = active_mmd_file(state)
        assert state.error is None and active is not None and (agent.path / "mmds" / active).is_file()
        entries, error = read_registry(agent.registry_path, agent.path)
        assert error is None and all(e.exists for e in entries) and len(entries) >= 1
        canvas_ids = {i for p in agent.mmd_files for i in NODE_ID.findall(p.read_text())}
        for session in agent.session_files:
            chunk = read_rows(session.path, final=True)
            corrupt += [p for p in chunk.problems if p.kind == "corrupt"]
            assert not [p for p in chunk.problems if p.kind == "invalid"]
            for row in chunk.rows:
                rows += 1
                if row.node_id in (None, "wait"):
                    unplaced += 1
                else:
                    assert row.node_id in canvas_ids
                assert row.result_ref is not None, row.tool_call_id  # every demo row has its ref
                ref = resolve_ref(agent.path, row.result_ref)
                if not ref.exists():
                    missing.append(ref.name)
                    continue
                assert read_ref_info(ref).call_id == row.tool_call_id
                unwrapped += unwrap_tool_result(split_ref(ref.read_text())[1]) is not None
    assert len(corrupt) == 1 and len(missing) == 1
    assert unwrapped >= 5 and unplaced >= 4 and rows >= 30
