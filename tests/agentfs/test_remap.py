"""Row remapping in offload JSONL: in-place edits, byte-exact elsewhere, and no lost appends."""

from __future__ import annotations

import bisect
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentfs import inode_io
from agentfs.layout import offload_files
from agentfs.remap import RemapResult, remap_rows, rows_with_nodes

HERE = Path(__file__).resolve().parent
FILE_A1 = "offload-3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90.jsonl"
FILE_A2 = "offload-b7e4d2a0-1c9f-4e63-a8d5-2f0c7b9e6d14.jsonl"


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def memviz_temps(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if ".memviz-tmp-" in p.name]


def test_merge_rewrites_only_matching_rows_across_sessions(agent_a: Path) -> None:
    before = {name: lines_of(agent_a / name) for name in (FILE_A1, FILE_A2)}

    merge = {"002-N3": "002-N2", "001-N3": "001-N2"}
    result = remap_rows(agent_a, node_map=merge)

    assert result.rows_changed == 2
    assert sorted(result.files_changed) == sorted([FILE_A1, FILE_A2])
    assert result.per_file == {FILE_A1: 1, FILE_A2: 1}
    for name, old_lines in before.items():
        new_lines = lines_of(agent_a / name)
        assert len(new_lines) == len(old_lines)
        for old, new in zip(old_lines, new_lines, strict=True):
            if old == new:
                continue
            old_row, new_row = json.loads(old), json.loads(new)
            assert list(new_row) == list(old_row)  # key order kept
            assert new_row["node_id"] == merge[old_row["node_id"]]
            assert {k: v for k, v in new_row.items() if k != "node_id"} == {
                k: v for k, v in old_row.items() if k != "node_id"
            }
            assert new == json.dumps(new_row, ensure_ascii=False, separators=(",", ":")).encode()
    assert memviz_temps(agent_a) == []


def test_corrupt_invalid_and_partial_lines_are_kept_byte_for_byte(agent_b: Path) -> None:
    path = agent_b / "offload-main.jsonl"
    old = lines_of(path)

    result = remap_rows(agent_b, node_map={"N2": "003-N1", "003-N4": "003-N1"})

    new = lines_of(path)
    assert result.per_file == {"offload-main.jsonl": 2}
    assert len(new) == len(old)
    assert new[-1] == old[-1]  # truncated last line, no trailing newline: an append in flight
    assert not path.read_bytes().endswith(b"\n")
    heartbeat = [i for i, line in enumerate(old) if b"HEARTBEAT" in line][0]
    assert new[heartbeat] == old[heartbeat]  # invalid row (no tool_call_id) untouched
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    assert [json.loads(new[i])["node_id"] for i in changed] == ["003-N1", "003-N1"]


def test_unknown_keys_and_odd_values_survive(agent_c: Path) -> None:
    name = "offload-1a2b3c4d-5e6f-4a8b-9c0d-ef1234567890.jsonl"
    remap_rows(agent_c, node_map={"002-N3": "002-N2"})
    rows = [json.loads(line) for line in lines_of(agent_c / name) if line]
    assert rows[1]["seq"] == 1 and rows[1]["node_id"] == "002-N2"
    assert rows[2]["score"] is None
    # boundaries-*.jsonl and the dotfile temp are not offload files and stay untouched
    assert [p.name for p in offload_files(agent_c)] == [
        name,
        "offload-9c8b7a65-4321-4fed-8cba-0123456789ab.jsonl",
    ]


def test_the_writer_edits_the_session_files_the_reader_reads_and_no_leftover(
    agent_c: Path,
) -> None:
    """A `*.tmp.*` leftover named like a session file is never parsed (spec §7 item 19): not by
    the reader, not by a merge's row edit either; a folder that is gone has no session files."""
    name = "offload-1a2b3c4d-5e6f-4a8b-9c0d-ef1234567890.jsonl"
    leftover = agent_c / "offload-1a2b3c4d.tmp.3f9a.jsonl"
    leftover.write_bytes((agent_c / name).read_bytes())
    before = leftover.read_bytes()
    assert remap_rows(agent_c, node_map={"002-N3": "002-N2"}).rows_changed > 0
    assert leftover.read_bytes() == before
    assert leftover not in offload_files(agent_c)
    assert offload_files(agent_c / "gone") == []


def test_prune_marks_rows_deleted_keeping_existing_flag_position(agent_a: Path) -> None:
    result = remap_rows(agent_a, mark_deleted={"001-N2", "002-N5"})
    rows = [json.loads(line) for line in lines_of(agent_a / FILE_A1) if line]
    assert [r.get("offloaded") for r in rows] == ["deleted", "deleted", None, None]
    assert list(rows[0])[-1] == "offloaded"  # replaced in place, not moved
    rows2 = [json.loads(line) for line in lines_of(agent_a / FILE_A2) if line]
    assert rows2[3]["offloaded"] == "deleted" and rows2[3]["node_id"] == "002-N5"
    assert result.rows_changed == 3
    assert remap_rows(agent_a, mark_deleted={"001-N2"}).rows_changed == 0  # idempotent


def test_file_mode_is_kept_and_untouched_files_are_not_rewritten(agent_a: Path) -> None:
    path1, path2 = agent_a / FILE_A1, agent_a / FILE_A2
    path1.chmod(0o640)
    inode2 = path2.stat().st_ino
    remap_rows(agent_a, node_map={"001-N3": "001-N2"})
    assert path1.stat().st_mode & 0o777 == 0o640
    assert path2.stat().st_ino == inode2  # no row matched: not even renamed


def test_needle_inside_text_does_not_change_rows(tmp_path: Path) -> None:
    row = {"tool_call_id": "c1", "summary": 'see "002-N3" and \\"002-N3\\"', "node_id": "002-N2"}
    nested = {"tool_call_id": "c2", "meta": {"node_id": "002-N3"}, "node_id": None}
    content = "".join(
        json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in (row, nested)
    )
    (tmp_path / "offload-s.jsonl").write_text(content)
    assert remap_rows(tmp_path, node_map={"002-N3": "002-N1"}) == RemapResult()
    assert (tmp_path / "offload-s.jsonl").read_text() == content


def test_rows_with_nodes_counts_valid_rows(agent_b: Path) -> None:
    assert rows_with_nodes(agent_b, {"004-N2"}) == 2
    assert rows_with_nodes(agent_b, {"N2", "003-N3", "004-N9"}) == 3
    assert rows_with_nodes(agent_b, set()) == 0


def test_bad_node_map_is_refused(agent_a: Path) -> None:
    with pytest.raises(ValueError, match="node_map"):
        remap_rows(agent_a, node_map={"002-N3": ""})


def _complete_rows(folder: Path, names: list[str]) -> dict[str, dict]:
    rows = {}
    for name in names:
        data = (folder / name).read_bytes()
        for line in data[: data.rfind(b"\n") + 1].split(b"\n"):
            try:
                row = json.loads(line)
            except ValueError:
                continue
            rows[row["tool_call_id"]] = row
    return rows


def _reappended_count(record: logging.LogRecord) -> int:
    """How many lines remap's warning says it appended again (its second argument)."""
    count = record.args[1] if isinstance(record.args, tuple) else None
    assert isinstance(count, int), record.args
    return count


def _out_of_order(ids: list[str], expected: list[str]) -> int:
    """How many ids must move for `ids` to read as `expected` (length minus the longest
    common subsequence, here an increasing run of positions)."""
    position = {tcid: k for k, tcid in enumerate(expected)}
    tails: list[int] = []
    for tcid in ids:
        k = bisect.bisect_left(tails, position[tcid])
        tails[k : k + 1] = [position[tcid]]
    return len(ids) - len(tails)


@pytest.mark.slow
def test_concurrent_appender_loses_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A real second process appends ~4,000 rows/s while merges and prunes run here.

    Every row survives exactly once. Order is kept too, except where the remap had to stop
    renaming and re-append late rows (it logs a warning saying so): then those rows only.
    """
    caplog.set_level(logging.WARNING, logger="agentfs.remap")
    names = [f"offload-s{i}.jsonl" for i in range(4)]
    seeded: dict[str, list[bytes]] = {}
    for index, name in enumerate(names):
        seed = [
            json.dumps(
                {"tool_call_id": f"seed-{index}-{k}", "node_id": f"M{k % 10}", "x_old": [k]},
                separators=(",", ":"),
            ).encode()
            for k in range(40)
        ]
        seed.insert(5, b'{"tool_call_id":"broken", "node_id":"M1"')  # corrupt: kept as is
        seeded[name] = seed
        (tmp_path / name).write_bytes(b"\n".join(seed) + b"\n")
    (tmp_path / "boundaries-s0.jsonl").write_bytes(b'{"startSeq":0}\n')
    stop = tmp_path / "stop"
    appender = subprocess.Popen(
        [sys.executable, str(HERE / "appender_proc.py"), str(tmp_path), str(stop), "4000", *names],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert appender.stdout is not None
        assert appender.stdout.readline().strip() == "ready"
        must_be_keep: set[str] = set()
        must_be_deleted: set[str] = set()
        retries = merges = 0
        deadline = time.monotonic() + 10
        # at least 10 remaps overlap the appender (a loaded machine takes longer, not fewer),
        # up to 150 while the 10 s last
        while merges < 10 or (merges < 150 and time.monotonic() < deadline):
            source = f"M{merges % 10}"
            pruned = f"P{merges % 3}"
            present = _complete_rows(tmp_path, names)  # rows present when this merge starts
            must_be_keep |= {i for i, r in present.items() if r.get("node_id") == source}
            must_be_deleted |= {i for i, r in present.items() if r.get("node_id") == pruned}
            result = remap_rows(tmp_path, node_map={source: "KEEP"}, mark_deleted={pruned})
            retries += result.retries
            merges += 1
    finally:
        stop.touch()
        out, _ = appender.communicate(timeout=10)
    counts = json.loads(out.strip().splitlines()[-1])
    print(f"{merges} remaps, {sum(counts.values())} rows appended, {retries} retries/recoveries")

    for name in names:
        data = (tmp_path / name).read_bytes()
        assert data.endswith(b"\n")
        lines = data[:-1].split(b"\n")
        seed = seeded[name]
        assert lines[5] == seed[5]  # the corrupt line, byte for byte, in place
        rows = [json.loads(line) for i, line in enumerate(lines) if i != 5]
        ids = [row["tool_call_id"] for row in rows]
        expected_seed = [json.loads(s)["tool_call_id"] for i, s in enumerate(seed) if i != 5]
        index = names.index(name)
        expected = expected_seed + [f"app-{index}-{k:06d}" for k in range(counts[name])]
        reappended = [r for r in caplog.records if r.getMessage().startswith(f"{name}:")]
        if not reappended:
            assert ids == expected  # every row exactly once, in append order
        else:  # every row exactly once; only as many out of place as were re-appended
            assert sorted(ids) == sorted(expected)
            moved = sum(_reappended_count(r) for r in reappended)
            assert _out_of_order(ids, expected) <= moved
        for row in rows:
            if row["tool_call_id"].startswith("app-"):
                assert row["x_future"] == {"nested": [row["seq"], "二"], "flag": True}
            else:
                assert row["x_old"] == [int(row["tool_call_id"].rsplit("-", 1)[1])]
            if row["tool_call_id"] in must_be_keep:
                assert row["node_id"] == "KEEP"
            if row["tool_call_id"] in must_be_deleted:
                assert row["offloaded"] == "deleted"
    assert (tmp_path / "boundaries-s0.jsonl").read_bytes() == b'{"startSeq":0}\n'
    assert memviz_temps(tmp_path) == []
    assert os.listdir(tmp_path) != []


LATE_ROW = b'{"tool_call_id":"late","node_id":"M1"}\n'


def _late_append_during_rename(
    path: Path, monkeypatch: pytest.MonkeyPatch, late: bytes = LATE_ROW
) -> list[bool]:
    """Make the agent's next append (`late`) land in the *old* inode while the rewrite renames
    it, and one more row land in the new file right after: the race the recovery step exists
    for. Returns, per recovery, whether it proved that no writer was left (the lease)."""

    old = os.open(path, os.O_WRONLY | os.O_APPEND)  # the agent opened the file before our rename
    real_wait = inode_io.wait_until_no_writer
    proved: list[bool] = []

    def wait(fd: int) -> bool:
        nonlocal old
        if old >= 0:
            os.write(old, late)
            os.close(old)
            old = -1
            with path.open("ab") as handle:  # its next tool call opens the new file
                handle.write(b'{"tool_call_id":"next","node_id":"M1"}\n')
        proved.append(real_wait(fd))
        return proved[-1]

    monkeypatch.setattr(inode_io, "wait_until_no_writer", wait)
    return proved


def _ids(path: Path) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [(row["tool_call_id"], row["node_id"]) for row in rows]


def test_a_late_append_into_the_replaced_file_is_kept_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "offload-s.jsonl"
    path.write_text("".join(f'{{"tool_call_id":"r{k}","node_id":"M1"}}\n' for k in range(3)))
    proved = _late_append_during_rename(path, monkeypatch)
    remap_rows(tmp_path, node_map={"M1": "KEEP"})
    assert _ids(path) == [
        ("r0", "KEEP"),
        ("r1", "KEEP"),
        ("r2", "KEEP"),
        ("late", "KEEP"),  # folded in from the old inode, remapped, before the newer row
        ("next", "M1"),  # appended after the rename: the agent's, left as written
    ]
    # The nested recovery's lease is granted too: our own temp descriptor on the inode that
    # became the file is closed by then (it used to block the lease for its 2 s timeout).
    assert proved == [True, True]


def test_out_of_time_the_late_append_is_appended_not_lost_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from agentfs import remap

    path = tmp_path / "offload-s.jsonl"
    path.write_text("".join(f'{{"tool_call_id":"r{k}","node_id":"M1"}}\n' for k in range(3)))
    _late_append_during_rename(path, monkeypatch)
    monkeypatch.setattr(remap, "BUDGET_SECONDS", 0.0)  # the budget is spent by the rename
    caplog.set_level(logging.WARNING, logger="agentfs.remap")
    remap_rows(tmp_path, node_map={"M1": "KEEP"})
    assert _ids(path) == [
        ("r0", "KEEP"),
        ("r1", "KEEP"),
        ("r2", "KEEP"),
        ("next", "M1"),
        ("late", "M1"),  # kept, as the agent wrote it, after the row that followed it
    ]
    assert [_reappended_count(r) for r in caplog.records] == [1]


def _half_line_finished_during_rename(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's row is half written when we read the file (a split append); its rest and one
    more row reach the old inode during our rename, and its next tool call the new file."""
    _late_append_during_rename(path, monkeypatch, b'de_id":"M1"}\n' + LATE_ROW)


HALF = '{"tool_call_id":"half","no'


def test_a_half_written_line_is_finished_in_place_not_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "offload-s.jsonl"
    path.write_text("".join(f'{{"tool_call_id":"r{k}","node_id":"M1"}}\n' for k in range(3)) + HALF)
    _half_line_finished_during_rename(path, monkeypatch)
    remap_rows(tmp_path, node_map={"M1": "KEEP"})
    assert _ids(path) == [
        ("r0", "KEEP"),
        ("r1", "KEEP"),
        ("r2", "KEEP"),
        ("half", "KEEP"),  # both halves, joined, remapped, in the agent's order
        ("late", "KEEP"),
        ("next", "M1"),
    ]


def test_out_of_time_a_half_written_line_is_appended_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Past the budget the late lines are appended, not rewritten in order: the half line must
    arrive whole, not as a first half joined to the agent's next row."""
    from agentfs import remap

    path = tmp_path / "offload-s.jsonl"
    path.write_text("".join(f'{{"tool_call_id":"r{k}","node_id":"M1"}}\n' for k in range(3)) + HALF)
    _half_line_finished_during_rename(path, monkeypatch)
    monkeypatch.setattr(remap, "BUDGET_SECONDS", 0.0)
    caplog.set_level(logging.WARNING, logger="agentfs.remap")
    remap_rows(tmp_path, node_map={"M1": "KEEP"})
    assert _ids(path) == [  # every line parses: nothing was split
        ("r0", "KEEP"),
        ("r1", "KEEP"),
        ("r2", "KEEP"),
        ("next", "M1"),
        ("half", "M1"),
        ("late", "M1"),
    ]
    assert [_reappended_count(r) for r in caplog.records] == [2]
    assert not (tmp_path / inode_io.RECOVERED_DIR).exists()


def test_a_half_line_whose_writer_died_stays_at_the_end_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "offload-s.jsonl"
    path.write_text('{"tool_call_id":"r0","node_id":"M1"}\n' + HALF)
    remap_rows(tmp_path, node_map={"M1": "KEEP"})
    assert path.read_text() == '{"tool_call_id":"r0","node_id":"KEEP"}\n' + HALF


def test_when_the_late_rows_cannot_be_put_back_they_are_saved_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process rewrites the old inode in place during our rename, and the budget is
    spent: its bytes are in no other file, so they are saved before the old inode goes."""
    from agentfs import remap

    path = tmp_path / "offload-s.jsonl"
    path.write_text("".join(f'{{"tool_call_id":"r{k}","node_id":"M1"}}\n' for k in range(3)))
    old = os.open(path, os.O_WRONLY)
    real_wait = inode_io.wait_until_no_writer
    rewritten = b'{"tool_call_id":"other","node_id":"M9"}\n'

    def wait(fd: int) -> bool:
        nonlocal old
        if old >= 0:
            os.pwrite(old, rewritten, 0)
            os.close(old)
            old = -1
        return real_wait(fd)

    monkeypatch.setattr(inode_io, "wait_until_no_writer", wait)
    monkeypatch.setattr(remap, "BUDGET_SECONDS", 0.0)
    with pytest.raises(remap.RemapConflict, match=r"\.memviz-recovered/offload-s\.jsonl\.") as caught:
        remap_rows(tmp_path, node_map={"M1": "KEEP"})
    saved = list((tmp_path / inode_io.RECOVERED_DIR).iterdir())
    assert len(saved) == 1 and saved[0].name in str(caught.value)
    assert saved[0].read_bytes().startswith(rewritten)  # the other writer's bytes, kept
    assert _ids(path)[:3] == [("r0", "KEEP"), ("r1", "KEEP"), ("r2", "KEEP")]


def test_the_saved_rows_folder_is_never_read_as_agent_data() -> None:
    from agentfs.inode_io import RECOVERED_DIR
    from agentfs.layout import is_ignored_name

    assert is_ignored_name(RECOVERED_DIR)
