import json
import tracemalloc
from pathlib import Path

import pytest

from agentfs.jsonl import file_head_hash, read_rows

S1_A = "offload-3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90.jsonl"
S2_A = "offload-b7e4d2a0-1c9f-4e63-a8d5-2f0c7b9e6d14.jsonl"
S_B = "offload-5d0c9e12-8b7a-4f31-9e2d-0c4b6a7f1e38.jsonl"
S1_C = "offload-1a2b3c4d-5e6f-4a8b-9c0d-ef1234567890.jsonl"
S2_C = "offload-9c8b7a65-4321-4fed-8cba-0123456789ab.jsonl"


def row_line(call_id: str, **extra: object) -> str:
    return json.dumps({"tool_call_id": call_id, "summary": "s", **extra}) + "\n"


@pytest.mark.parametrize(
    ("agent", "file", "count"),
    [("agent_a", S1_A, 4), ("agent_a", S2_A, 5), ("agent_b", S_B, 3), ("agent_c", S1_C, 3)],
)
def test_fixture_row_counts(request, agent: str, file: str, count: int) -> None:
    chunk = read_rows(request.getfixturevalue(agent) / file, final=True)
    assert len(chunk.rows) == count
    assert chunk.problems == []
    assert chunk.end_offset == (request.getfixturevalue(agent) / file).stat().st_size


def test_wild_file_reports_one_invalid_and_one_corrupt_line(agent_b: Path) -> None:
    chunk = read_rows(agent_b / "offload-main.jsonl", final=True)
    assert [r.tool_call_id for r in chunk.rows] == [
        "toolu_bdrk_01HxQm7Lk2Vb9Zc4",
        "toolubdrk01HxQm7Lk2Vb9Zc4",
        "call_7f3a9e21c4",
        "call_b81d0f3e57",
        "call_c2e4",
    ]
    invalid, corrupt = chunk.problems
    assert (invalid.line_no, invalid.kind, invalid.reason) == (6, "invalid", "missing tool_call_id")
    assert "HEARTBEAT.md" in invalid.excerpt
    assert (corrupt.line_no, corrupt.kind) == (7, "corrupt")
    assert corrupt.reason.startswith("invalid JSON")
    assert corrupt.excerpt.startswith('{"tool_call_id":"call_e91f"')
    raw = (agent_b / "offload-main.jsonl").read_bytes()
    assert raw[corrupt.offset :].startswith(b'{"tool_call_id":"call_e91f"')
    assert raw[invalid.offset :].startswith(b'{"tool_call":"read: HEARTBEAT.md"')


def test_truncated_last_line_is_held_back_unless_final(agent_b: Path) -> None:
    path = agent_b / "offload-main.jsonl"
    chunk = read_rows(path)
    assert len(chunk.problems) == 1  # only the invalid heartbeat row
    assert chunk.next_line_no == 7
    assert path.read_bytes()[chunk.end_offset :].startswith(b'{"tool_call_id":"call_e91f"')


def test_row_fields_and_odd_values_are_kept(agent_b: Path) -> None:
    rows = read_rows(agent_b / "offload-main.jsonl").rows
    first, dup, wait, deleted, no_ref = rows
    assert first.offloaded is True and first.node_id == "N2" and first.score == 8.0
    assert first.normalized_id == dup.tool_call_id == "toolubdrk01HxQm7Lk2Vb9Zc4"
    assert dup.node_id is None
    assert wait.node_id == "wait" and wait.score == 0.0
    assert deleted.offloaded == "deleted"
    assert no_ref.result_ref is None and "result_ref" not in no_ref.data
    assert (first.line_no, first.offset) == (1, 0)


def test_unknown_fields_and_null_score_survive(agent_b: Path, agent_c: Path) -> None:
    rows = read_rows(agent_c / S1_C).rows
    assert [r.data["seq"] for r in rows] == [0, 1, 2]
    assert rows[2].score is None and rows[2].data["score"] is None
    assert rows[2].summary.startswith("[L1 degraded]")
    assert read_rows(agent_b / S_B).rows[0].score == 7.5


def test_invalid_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "offload-x.jsonl"
    path.write_bytes(
        b'{"tool_call_id":"a","summary":"caf\xc3\xa9 \xff\xfe broken"}\n' + row_line("b").encode()
    )
    chunk = read_rows(path)
    assert [r.tool_call_id for r in chunk.rows] == ["a", "b"]
    assert chunk.rows[0].summary == "café \ufffd\ufffd broken"


def test_crlf_bom_blank_lines_and_unsafe_characters(tmp_path: Path) -> None:
    path = tmp_path / "offload-x.jsonl"
    path.write_bytes(
        "\ufeff".encode()
        + row_line("a").rstrip("\n").encode()
        + b"\r\n\r\n   \n"
        # A raw control character inside a string breaks JSON.parse; parseJsonlSafe strips
        # it and retries.
        + b'{"tool_call_id":"b","summary":"bell\x07 here"}\r\n'
        + b"[1, 2]\n"
        + b'{"tool_call_id": 42}\n'
        + b'{"tool_call_id": ""}\n'
        + b'{"tool_call_id": "c", "score": NaN}\n'
    )
    chunk = read_rows(path)
    assert [(r.tool_call_id, r.line_no) for r in chunk.rows] == [("a", 1), ("b", 4)]
    assert chunk.rows[1].summary == "bell here"
    assert [(p.line_no, p.kind, p.reason) for p in chunk.problems] == [
        (5, "invalid", "not a JSON object (a list)"),
        (6, "invalid", "tool_call_id is not a string"),
        (7, "invalid", "empty tool_call_id"),
        (8, "corrupt", chunk.problems[3].reason),
    ]
    assert chunk.next_line_no == 9


def test_reading_from_an_offset_continues_line_numbers(agent_a: Path) -> None:
    path = agent_a / S2_A
    whole = read_rows(path)
    second = whole.rows[2]
    rest = read_rows(path, start_offset=second.offset, start_line_no=second.line_no)
    assert rest.rows == whole.rows[2:]
    assert rest.start_offset == second.offset


def test_huge_line_is_reported_and_memory_stays_bounded(tmp_path: Path) -> None:
    path = tmp_path / "offload-x.jsonl"
    limit = 64 * 1024
    with open(path, "wb") as handle:
        handle.write(row_line("before").encode())
        handle.write(b'{"tool_call_id":"huge","summary":"' + b"x" * (8 * 1024 * 1024) + b'"}\n')
        handle.write(row_line("after").encode())
    tracemalloc.start()
    chunk = read_rows(path, max_line_bytes=limit)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [r.tool_call_id for r in chunk.rows] == ["before", "after"]
    (problem,) = chunk.problems
    assert problem.kind == "corrupt" and problem.line_no == 2 and "too long" in problem.reason
    assert problem.excerpt.startswith('{"tool_call_id":"huge"') and len(problem.excerpt) <= 200
    assert chunk.rows[1].offset == path.stat().st_size - len(row_line("after"))
    assert peak < 4 * 1024 * 1024


def test_head_hash_covers_first_4096_bytes(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"a" * 5000)
    before = file_head_hash(path)
    path.write_bytes(b"a" * 4096 + b"b" * 904)
    assert file_head_hash(path) == before == read_rows(path).head_hash
    path.write_bytes(b"b" + b"a" * 4999)
    assert file_head_hash(path) != before


def test_lines_spanning_read_blocks_keep_exact_offsets(tmp_path: Path) -> None:
    path = tmp_path / "offload-x.jsonl"
    lines = [row_line(f"call_{i:05d}", note="数据" * (i % 7)).encode() for i in range(20_000)]
    path.write_bytes(b"".join(lines))
    assert path.stat().st_size > 1024 * 1024  # more than one read block
    chunk = read_rows(path)
    assert len(chunk.rows) == 20_000 and chunk.problems == []
    data = path.read_bytes()
    for row in chunk.rows[::997]:
        assert data[row.offset :].startswith(f'{{"tool_call_id": "{row.tool_call_id}"'.encode())
    assert chunk.end_offset == len(data) and chunk.next_line_no == 20_001


def test_huge_unterminated_last_line_counts_only_when_final(tmp_path: Path) -> None:
    path = tmp_path / "offload-x.jsonl"
    path.write_bytes(row_line("a").encode() + b'{"tool_call_id":"b","x":"' + b"y" * 200_000)
    held = read_rows(path, max_line_bytes=1024)
    assert held.problems == [] and held.end_offset == len(row_line("a"))
    final = read_rows(path, max_line_bytes=1024, final=True)
    assert [(p.line_no, p.kind) for p in final.problems] == [(2, "corrupt")]
    assert final.end_offset == path.stat().st_size
