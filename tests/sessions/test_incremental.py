"""Incremental ingest does work proportional to what changed, and misses nothing (issue 11).

The live path (the watcher names the changed files) finds new refs from new rows and from the
events, checks a grown file in constant time and never lists the refs folder; the periodic full
pass (or ``full``) lists it and re-reads prefixes, catching the rest.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from agentfs import jsonl
from agentfs.jsonl import RowStream, read_rows
from intake import ref_index, row_ingest, tracked
from intake.ingest import ingest_agent_dir, ingest_path
from sessions.models import Agent, Ref, Row

pytestmark = pytest.mark.django_db
SID = "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90"
REF_TEXT = "# Tool Result: exec\n\n**Timestamp:** {ts}\n\n---\n\n**Tool:** exec\n**Call ID:** {cid}\n\n**Result:**\n```\nok\n```"


@pytest.fixture
def agent_dir(fixtures_root: Path) -> Path:
    path = fixtures_root / "fixture-a-upstream" / "main"
    ingest_path(path)
    return path


def write_ref(agent_dir: Path, name: str, cid: str) -> Path:
    path = agent_dir / "refs" / name
    path.write_text(REF_TEXT.format(ts="2026-06-15T00:00:00.000+08:00", cid=cid), "utf-8")
    return path


def append_row(agent_dir: Path, tcid: str, ref: str | None) -> Path:
    path = agent_dir / f"offload-{SID}.jsonl"
    row = {"tool_call_id": tcid, "summary": tcid, "node_id": None}
    if ref:
        row["result_ref"] = f"refs/{ref}"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
    return path


def assert_ref_figures(agent_dir: Path) -> None:
    agent = Agent.objects.get(slug="main")
    on_disk = sorted(p for p in (agent_dir / "refs").iterdir() if p.suffix == ".md")
    assert agent.refs_count == len(on_disk) == Ref.objects.filter(agent=agent).count()
    assert agent.refs_bytes == sum(p.stat().st_size for p in on_disk)


def test_live_path_finds_refs_from_rows_and_events_without_listing_the_folder(
    agent_dir: Path, monkeypatch
) -> None:
    def no_listing(*args, **kwargs):
        raise AssertionError("the live path listed the refs folder")

    monkeypatch.setattr(ref_index, "_scan_dir", no_listing)
    write_ref(agent_dir, "r-row.md", "c-row")
    jsonl = append_row(agent_dir, "c-row", "r-row.md")
    orphan = write_ref(agent_dir, "r-orphan.md", "c-orphan")  # written without a row
    silent = write_ref(agent_dir, "r-silent.md", "c-silent")  # no row and no event
    [delta] = ingest_agent_dir(agent_dir, changed=[jsonl, orphan]).deltas
    assert sorted(delta.new_refs) == ["refs/r-orphan.md", "refs/r-row.md"]
    assert Ref.objects.get(name="refs/r-row.md").call_id == "c-row"
    assert not Ref.objects.filter(name="refs/r-silent.md").exists()
    # a deleted ref named by an event leaves the index
    orphan.unlink()
    ingest_agent_dir(agent_dir, changed=[orphan])
    assert not Ref.objects.filter(name="refs/r-orphan.md").exists()
    # a full pass (due every MEMVIZ_FULL_CHECK_SECONDS, or asked for) lists the folder and
    # finds what no event announced
    monkeypatch.undo()
    [delta] = ingest_path(agent_dir, full=True).deltas
    assert delta.new_refs == ["refs/r-silent.md"]
    silent.unlink()
    ingest_path(agent_dir, full=True)
    assert_ref_figures(agent_dir)


def test_live_path_lists_the_folder_once_the_full_check_is_due(agent_dir: Path, settings) -> None:
    settings.MEMVIZ_FULL_CHECK_SECONDS = 0
    write_ref(agent_dir, "r-silent.md", "c")
    jsonl = append_row(agent_dir, "x1", None)
    [delta] = ingest_agent_dir(agent_dir, changed=[jsonl]).deltas
    assert delta.new_refs == ["refs/r-silent.md"]
    assert_ref_figures(agent_dir)


def test_a_first_scan_looks_no_ref_up_and_a_later_one_finds_only_whats_new(
    fixtures_root: Path, monkeypatch
) -> None:
    # A folder none of whose refs is indexed gets no per-name lookups (at 250k refs an agent
    # they were most of PostgreSQL's extra ingest time); a changed folder's listing is checked
    # against one pass over the index's names, not a lookup per name.
    path = fixtures_root / "fixture-a-upstream" / "main"
    looked_up: list[int] = []
    real = ref_index._known

    def spy(agent, names):
        looked_up.append(len(names))
        return real(agent, names)

    monkeypatch.setattr(ref_index, "_known", spy)
    ingest_path(path)
    assert looked_up == [] and Ref.objects.filter(agent__slug="main").exists()
    assert_ref_figures(path)
    ref = write_ref(path, "r-new.md", "c-new")
    [delta] = ingest_path(path, full=True).deltas
    assert looked_up == [] and delta.new_refs == ["refs/r-new.md"]
    assert_ref_figures(path)
    # Refs are written once; one rewritten in place anyway is re-read when the watcher names it.
    ref.write_text(ref.read_text() + "\nlonger now", "utf-8")
    ingest_agent_dir(path, changed=[ref])
    assert Ref.objects.get(name="refs/r-new.md").size == ref.stat().st_size
    assert_ref_figures(path)


def test_ref_figures_move_by_deltas(agent_dir: Path) -> None:
    before = Agent.objects.get(slug="main")
    ref = write_ref(agent_dir, "r1.md", "c1")
    ingest_agent_dir(agent_dir, changed=[ref])
    ref.write_text(ref.read_text() + "\nlonger now", "utf-8")
    ingest_agent_dir(agent_dir, changed=[ref])
    assert_ref_figures(agent_dir)
    after = Agent.objects.get(slug="main")
    assert after.refs_count == before.refs_count + 1
    assert Ref.objects.get(name="refs/r1.md").size == ref.stat().st_size


def big_session(agent_dir: Path, rows: int) -> Path:
    path = agent_dir / "offload-big.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(rows):
            handle.write(json.dumps({"tool_call_id": f"b{i}", "summary": "x" * 100, "node_id": None}) + "\n")
    return path


def test_quick_check_catches_an_l2_rewrite_near_the_end(agent_dir: Path) -> None:
    path = big_session(agent_dir, 3000)  # ~400 KB, far more than the 64 KB the check reads
    ingest_agent_dir(agent_dir, changed=[path])
    claimed = '"b2990", "summary": "' + "x" * 100 + '", "node_id": '
    text = path.read_text().replace(claimed + "null", claimed + '"wait"')  # L2 claims a row
    path.write_text(text + json.dumps({"tool_call_id": "b3000"}) + "\n")
    report = ingest_agent_dir(agent_dir, changed=[path])
    assert report.sessions_reread == 1
    assert Row.objects.get(tool_call_id="b2990").node_id == "wait"
    assert Row.objects.filter(session__session_id="big").count() == 3001


def test_full_check_catches_a_same_length_change_far_from_the_end(agent_dir: Path) -> None:
    path = big_session(agent_dir, 3000)
    ingest_path(agent_dir)
    # Same length, 130 KB from the start and 260 KB before the end, plus an append: outside
    # both windows of the quick check.
    path.write_text(path.read_text().replace('"b1000", "summary": "xx', '"b1000", "summary": "yy', 1))
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"tool_call_id": "b3000"}) + "\n")
    live = ingest_agent_dir(agent_dir, changed=[path])
    assert live.sessions_reread == 0 and live.rows_added == 1  # the documented blind spot
    path.write_text(path.read_text().replace('"b1001", "summary": "xx', '"b1001", "summary": "zz', 1))
    full = ingest_path(agent_dir, full=True)
    assert full.sessions_reread == 1
    assert Row.objects.get(tool_call_id="b1000").summary.startswith("yy")
    assert Row.objects.get(tool_call_id="b1001").summary.startswith("zz")


def test_row_stream_reads_what_read_rows_reads(fixtures_root: Path, tmp_path: Path) -> None:
    path = tmp_path / "offload-s.jsonl"
    lines = [json.dumps({"tool_call_id": f"c{i}", "summary": "s"}) for i in range(23)]
    lines[5] = "{not json"
    lines[9] = json.dumps({"no_id": 1})
    path.write_text("\n".join(lines) + "\n" + '{"tool_call_id": "partial"', "utf-8")
    for start in (0, len(lines[0]) + 1):
        whole = read_rows(path, start_offset=start, start_line_no=1 if not start else 2)
        stream = RowStream(path, start_offset=start, start_line_no=1 if not start else 2, batch_rows=4)
        batches = list(stream)
        assert all(len(b) <= 4 for b in batches) and len(batches) > 3
        assert [r for b in batches for r in b] == whole.rows
        assert stream.problems == whole.problems
        assert (stream.end_offset, stream.next_line_no) == (whole.end_offset, whole.next_line_no)


def test_ingest_memory_does_not_grow_with_rows_per_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(row_ingest, "ROW_BATCH", 200)
    # smaller read blocks than the files, as a 1 MB block is to a large session file
    monkeypatch.setattr(jsonl, "_BLOCK", 32 * 1024)
    monkeypatch.setattr(tracked, "_BLOCK", 32 * 1024)
    peaks = []
    for rows in (1_000, 4_000):
        agent = tmp_path / f"root{rows}" / f"a{rows}"
        agent.mkdir(parents=True)
        big_session(agent, rows)
        tracemalloc.start()
        ingest_path(agent.parent)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < peaks[0] * 1.5, peaks  # 4x the rows in one file, about the same memory
