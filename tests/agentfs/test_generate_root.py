import importlib.util
import re
import sys
from pathlib import Path

import pytest

from agentfs.jsonl import read_rows
from agentfs.layout import discover_agents
from agentfs.refs import read_ref_info, resolve_ref
from agentfs.state import active_mmd_file, read_registry, read_state

REPO = Path(__file__).resolve().parents[2]
NODE_ID = re.compile(r"^\s*(\d{3}-N\d+)\[", re.M)


@pytest.fixture
def generator(monkeypatch):
    path = REPO / "bench" / "generate_root.py"
    spec = importlib.util.spec_from_file_location("generate_root", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "generate_root", module)
    spec.loader.exec_module(module)
    return module


def test_generated_root_is_consistent_for_the_reader(generator, tmp_path: Path) -> None:
    counts = generator.generate_root(
        tmp_path / "root", 2400, agents=3, sessions_per_agent=2, ref_bytes=300, canvas_nodes=300
    )
    assert counts["rows"] == counts["refs"] == 2400 and counts["agents"] == 3
    agents = discover_agents(tmp_path / "root")
    assert [a.name for a in agents] == ["agent-00", "agent-01", "agent-02"]
    rows = 0
    biggest = 0
    for agent in agents:
        active = active_mmd_file(read_state(agent.state_path))
        assert active is not None and (agent.path / "mmds" / active).is_file()
        entries, error = read_registry(agent.registry_path, agent.path)
        assert error is None and len(entries) == 2 and all(e.exists for e in entries)
        node_ids: set[str] = set()
        for canvas in agent.mmd_files:
            ids = NODE_ID.findall(canvas.read_text())
            biggest = max(biggest, len(ids))
            node_ids.update(ids)
        for session in agent.session_files:
            chunk = read_rows(session.path)
            assert chunk.problems == []
            for row in chunk.rows:
                rows += 1
                assert row.node_id in node_ids or row.node_id in (None, "wait")
                assert row.result_ref is not None, row.tool_call_id  # every row has its ref
                assert read_ref_info(resolve_ref(agent.path, row.result_ref)).call_id == (
                    row.tool_call_id
                )
    assert rows == 2400
    assert biggest == 301  # the 300-node canvas plus its root label node


def test_generator_is_deterministic_and_refuses_a_non_empty_folder(generator, tmp_path):
    first = generator.generate_root(tmp_path / "a", 300, agents=2, ref_bytes=200)
    generator.generate_root(tmp_path / "b", 300, agents=2, ref_bytes=200)
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*"))
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*"))
    assert files_a == files_b and len(files_a) > 300
    sample = next(p for p in files_a if p.suffix == ".jsonl")
    assert (tmp_path / "a" / sample).read_bytes() == (tmp_path / "b" / sample).read_bytes()
    with pytest.raises(FileExistsError):
        generator.generate_root(tmp_path / "a", 10)
    assert first["rows"] == 300
