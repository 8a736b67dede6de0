import json
import os
from pathlib import Path

from agentfs.jsonl import Row, TailState, tail_rows


def line(call_id: str, node_id: str | None = None) -> bytes:
    return (json.dumps({"tool_call_id": call_id, "node_id": node_id}) + "\n").encode()


class Follower:
    """What an ingest loop does with tail_rows: keep rows, drop them all on a rewrite."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.state: TailState | None = None
        self.rows: list[Row] = []
        self.reads = 0
        self.rewrites = 0

    def poll(self) -> list[Row]:
        chunk, self.state, rewritten = tail_rows(self.path, self.state)
        if rewritten:
            self.rewrites += 1
            self.rows = []
        self.rows.extend(chunk.rows)
        self.reads += len(chunk.rows)
        return chunk.rows

    def ids(self) -> list[str]:
        return [r.tool_call_id for r in self.rows]


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def test_appends_in_pieces_hold_a_partial_line_until_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "offload-s.jsonl"
    path.write_bytes(line("a"))
    follower = Follower(path)
    assert [r.tool_call_id for r in follower.poll()] == ["a"]
    second = line("b")
    append(path, second[:7])
    assert follower.poll() == []
    append(path, second[7:-1])
    assert follower.poll() == []
    append(path, b"\n" + line("c"))
    new = follower.poll()
    assert [(r.tool_call_id, r.line_no) for r in new] == [("b", 2), ("c", 3)]
    assert new[0].offset == len(line("a"))
    assert follower.poll() == []
    assert follower.ids() == ["a", "b", "c"] and follower.reads == 3 and follower.rewrites == 0


def test_truncation_is_detected_and_re_read(tmp_path: Path) -> None:
    path = tmp_path / "offload-s.jsonl"
    path.write_bytes(line("a") + line("b") + line("c"))
    follower = Follower(path)
    follower.poll()
    path.write_bytes(b"")
    assert follower.poll() == [] and follower.rewrites == 1
    append(path, line("d"))
    follower.poll()
    assert follower.ids() == ["d"] and follower.rewrites == 1


def test_rewrite_in_place_of_the_head_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "offload-s.jsonl"
    path.write_bytes(line("a") + line("b"))
    follower = Follower(path)
    follower.poll()
    # L2 backfill: the whole file is rewritten with a node id, and grows.
    path.write_bytes(line("a", "001-N1") + line("b") + line("c"))
    follower.poll()
    assert follower.rewrites == 1
    assert [(r.tool_call_id, r.node_id) for r in follower.rows] == [
        ("a", "001-N1"),
        ("b", None),
        ("c", None),
    ]


def test_rewrite_near_the_end_of_a_long_file_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "offload-s.jsonl"
    rows = [line(f"call_{i:04d}") for i in range(200)]
    path.write_bytes(b"".join(rows))
    follower = Follower(path)
    follower.poll()
    # L2 wait marking touches the last rows only, far beyond the first 4096 bytes.
    rows[-1] = line("call_0199", "wait")
    path.write_bytes(b"".join(rows))
    follower.poll()
    assert follower.rewrites == 1
    assert len(follower.rows) == 200 and follower.rows[-1].node_id == "wait"


def test_same_size_rewrite_is_detected_by_mtime(tmp_path: Path) -> None:
    path = tmp_path / "offload-s.jsonl"
    rows = [line(f"call_{i:04d}", "001-N1") for i in range(200)]
    path.write_bytes(b"".join(rows))
    follower = Follower(path)
    follower.poll()
    rows[100] = line("call_0100", "001-N2")  # same length, in the middle of the file
    path.write_bytes(b"".join(rows))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    follower.poll()
    assert follower.rewrites == 1 and follower.rows[100].node_id == "001-N2"


def test_unchanged_file_is_not_read_again(tmp_path: Path) -> None:
    path = tmp_path / "offload-s.jsonl"
    path.write_bytes(line("a") + line("b"))
    follower = Follower(path)
    follower.poll()
    for _ in range(3):
        assert follower.poll() == []
    assert follower.reads == 2 and follower.rewrites == 0


def test_plain_appends_after_a_long_head_are_not_taken_for_rewrites(tmp_path: Path) -> None:
    path = tmp_path / "offload-s.jsonl"
    path.write_bytes(line("a"))
    follower = Follower(path)
    follower.poll()
    for i in range(300):  # grows well past the 4096-byte head
        append(path, line(f"call_{i}"))
        if i % 50 == 0:
            follower.poll()
    follower.poll()
    assert follower.rewrites == 0 and follower.reads == 301 and len(set(follower.ids())) == 301
