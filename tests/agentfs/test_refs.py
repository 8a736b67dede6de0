import hashlib
import json
import tracemalloc
from pathlib import Path

import pytest

from agentfs.jsonl import read_rows
from agentfs.layout import discover_agents
from agentfs.paths import UnsafePath
from agentfs.refs import (
    read_ref_info,
    read_ref_page,
    resolve_ref,
    split_ref,
    unwrap_tool_result,
)


def all_rows(agent_dir: Path):
    (agent,) = discover_agents(agent_dir)
    for session in agent.session_files:
        yield from read_rows(session.path, final=True).rows


def test_every_fixture_a_ref_resolves_and_names_its_call(agent_a: Path) -> None:
    rows = list(all_rows(agent_a))
    assert len(rows) == 9
    for row in rows:
        path = resolve_ref(agent_a, row.result_ref)
        assert path.is_file()
        info = read_ref_info(path)
        assert info.call_id == row.tool_call_id
        assert info.timestamp == row.timestamp
        assert info.variant == "upstream"


def test_content_addressed_refs_resolve_and_match_their_hash(agent_c: Path) -> None:
    for row in all_rows(agent_c):
        path = resolve_ref(agent_c, row.result_ref)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == path.stem
        assert read_ref_info(path).call_id == row.tool_call_id


def test_missing_ref_resolves_to_a_path_that_does_not_exist(agent_b: Path) -> None:
    rows = {r.tool_call_id: r for r in all_rows(agent_b)}
    missing = resolve_ref(agent_b, rows["call_02_Xl6Uo9NlP2"].result_ref)
    assert missing.name == "2026-06-13T11-31-12-040p08-00.md" and not missing.exists()
    assert rows["call_c2e4"].result_ref is None


def test_orphan_undefined_ref(agent_b: Path) -> None:
    path = agent_b / "refs" / "2026-06-12T16-58-40-712p08-00.md"
    info = read_ref_info(path)
    assert (info.tool, info.call_id) == ("edit", "call_c2e4a9d7b1")
    _header, raw = split_ref(path.read_text())
    assert raw == "undefined"
    assert unwrap_tool_result(raw) is None


def test_upstream_ref_split_and_result_offset(agent_a: Path) -> None:
    path = agent_a / "refs" / "2026-06-10T09-12-41-902p08-00.md"
    text = path.read_text()
    header, raw = split_ref(text)
    assert header.startswith("# Tool Result: exec") and header.endswith("call_01_Lp9sW2xRa7")
    assert raw == (
        "src/auth/session.ts:3:export const SESSION_TTL = 1800; // 30 min, hard-coded\n"
        "src/auth/refresh.ts:18:  // SESSION_TTL not applied on refresh"
    )
    info = read_ref_info(path)
    assert path.read_bytes()[info.result_offset :].decode().startswith(raw)
    assert info.size == path.stat().st_size


def test_stringified_result_is_unwrapped(agent_a: Path) -> None:
    path = agent_a / "refs" / "2026-06-10T10-02-11-530p08-00.md"
    _header, raw = split_ref(path.read_text())
    inner = unwrap_tool_result(raw)
    assert inner is not None and inner.startswith("# Orders API v2\n\n- 金额字段统一使用 Decimal")
    assert '"12.30"' in inner


def test_unwrap_rejects_what_is_not_a_tool_result() -> None:
    assert unwrap_tool_result("undefined") is None
    assert unwrap_tool_result("plain text") is None
    assert unwrap_tool_result('{"content": "text"}') is None
    assert unwrap_tool_result('{"content": [{"type": "image", "data": "..."}]}') is None
    two = {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    assert unwrap_tool_result(json.dumps(two)) == "a\nb"


def test_result_with_its_own_fences_keeps_them(tmp_path: Path) -> None:
    text = (
        "# Tool Result: read\n\n**Timestamp:** t\n\n---\n\n**Tool:** read\n**Call ID:** c\n\n"
        "**Result:**\n```\n# README\n```bash\nmake\n```\n```"
    )
    assert split_ref(text)[1] == "# README\n```bash\nmake\n```"


def test_go_variant_ref(tmp_path: Path) -> None:
    path = tmp_path / "ref_20260612_164031_123456789_abcdef012345.md"
    path.write_text(
        "# Tool Result\n\n- tool_call_id: call_9\n- tool_name: exec\n"
        "- timestamp: 2026-06-12T16:40:31.123456789+08:00\n- node_id: 001-N1\n"
        "- result_ref: refs/ref_20260612_164031_123456789_abcdef012345.md\n\n"
        '## Arguments\n\n```json\n{"command": "ls"}\n```\n\n## Result\n\n```\nfile-a\nfile-b\n```\n'
    )
    info = read_ref_info(path)
    assert (info.variant, info.tool, info.call_id) == ("go", "exec", "call_9")
    assert info.timestamp == "2026-06-12T16:40:31.123456789+08:00"
    header, raw = split_ref(path.read_text())
    assert "## Arguments" in header and raw.strip("\n") == "file-a\nfile-b"


def test_server_variant_ref_and_storage_key(tmp_path: Path) -> None:
    session = tmp_path / "offload" / "sess-1"
    (session / "refs").mkdir(parents=True)
    path = session / "refs" / "toolu_01ABC.md"
    path.write_text(
        "**tool_call_id:** toolu_01ABC\n**Timestamp:** 2026-07-01T10:00:00.000Z\n\n"
        "total 12\ndrwxr-xr-x  2 root root 4096 a\n"
    )
    assert resolve_ref(session, "offload/sess-1/refs/toolu_01ABC.md") == path.resolve()
    info = read_ref_info(path)
    assert (info.variant, info.call_id) == ("server", "toolu_01ABC")
    assert path.read_bytes()[info.result_offset :].startswith(b"total 12")
    assert split_ref(path.read_text())[1].startswith("total 12")


def test_bare_ref_name_resolves_into_refs(agent_a: Path) -> None:
    name = "2026-06-10T09-12-03-417p08-00.md"
    assert resolve_ref(agent_a, name) == (agent_a / "refs" / name).resolve()


@pytest.mark.parametrize(
    "ref",
    [
        "../fixture-b-wild/coder/refs/2026-06-12T16-40-31-208p08-00.md",
        "refs/../../../etc/passwd",
        "/etc/passwd",
        "refs\\..\\state.json",
        "offload/../refs/x.md",
        "offload/s/refs/../../../x.md",
        "",
    ],
)
def test_hostile_result_refs_are_refused(agent_a: Path, ref: str) -> None:
    with pytest.raises(UnsafePath):
        resolve_ref(agent_a, ref)


def test_ref_symlinked_out_of_the_agent_is_refused(agent_a: Path, tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("token")
    (agent_a / "refs" / "leak.md").symlink_to(tmp_path / "secret")
    with pytest.raises(UnsafePath):
        resolve_ref(agent_a, "refs/leak.md")


def test_multi_megabyte_ref_is_paged_with_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    body = ("日志 line ✓ " * 7 + "\n").encode() * 60_000  # ~5 MB of multi-byte text
    path.write_bytes(b"# Tool Result: exec\n\n**Result:**\n```\n" + body + b"\n```")
    size = path.stat().st_size
    assert size > 4_000_000
    tracemalloc.start()
    info = read_ref_info(path)
    assert info.result_offset is not None
    first = read_ref_page(path, offset=info.result_offset, limit=65536)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1_000_000
    assert info.result_offset == len("# Tool Result: exec\n\n**Result:**\n```\n")
    assert len(first.text.encode()) <= 65536 + 3 and "\ufffd" not in first.text
    assert first.total_bytes == size and first.next_offset == first.offset + len(
        first.text.encode()
    )
    pieces: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = read_ref_page(path, offset=offset, limit=10_000)
        pieces.append(page.text)
        offset = page.next_offset
    assert "".join(pieces).encode() == path.read_bytes()


def test_ref_page_replaces_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"
    path.write_bytes(b"ok \xff\xfe end")
    page = read_ref_page(path)
    assert page.text == "ok \ufffd\ufffd end" and page.next_offset is None
