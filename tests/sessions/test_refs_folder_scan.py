"""A full pass costs what changed in refs folders, not how many refs they hold (issue 20).

(The full pass: an ingest asked with ``full``, or any once MEMVIZ_FULL_CHECK_SECONDS passed.)
An unchanged folder is neither listed nor are its refs statted; a changed one is listed once and
checked against the index's names, without a stat per indexed ref. New refs (with or without a
row) and deleted ones are still found.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from intake.ingest import ingest_agent_dir, ingest_path
from sessions.models import Agent, Ref
from tests.sessions.test_incremental import append_row, assert_ref_figures, write_ref

pytestmark = pytest.mark.django_db


class Spy:
    """Counts listings of the refs folder and stats of the files in it."""

    def __init__(self, refs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.refs = os.path.abspath(refs)
        self.listed = 0
        self.statted: list[str] = []
        real_lstat, real_stat = os.lstat, os.stat

        def lister(real):
            def spy(path=".", *args, **kwargs):
                if os.path.abspath(os.fspath(path)) == self.refs:
                    self.listed += 1
                return real(path, *args, **kwargs)

            return spy

        def note(real):
            def spy(path, *args, **kwargs):
                named = isinstance(path, (str, os.PathLike))
                if named and os.path.dirname(os.path.abspath(os.fspath(path))) == self.refs:
                    self.statted.append(os.path.basename(os.fspath(path)))
                return real(path, *args, **kwargs)

            return spy

        monkeypatch.setattr(os, "scandir", lister(os.scandir))
        monkeypatch.setattr(os, "listdir", lister(os.listdir))
        monkeypatch.setattr(os, "lstat", note(real_lstat))
        monkeypatch.setattr(os, "stat", note(real_stat))


def age(path: Path, seconds: float = 3600) -> None:
    """Date a folder back, as one last written before this ingest (not within a clock tick)."""
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.fixture
def agent_dir(fixtures_root: Path) -> Path:
    path = fixtures_root / "fixture-a-upstream" / "main"
    for i in range(20):
        write_ref(path, f"old-{i}.md", f"c-old-{i}")
    age(path / "refs")
    ingest_path(path)
    return path


def test_an_unchanged_refs_folder_is_neither_listed_nor_statted(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = Spy(agent_dir / "refs", monkeypatch)
    report = ingest_path(agent_dir, full=True)
    assert report.refs_indexed == 0
    assert spy.listed == 0 and spy.statted == []


def test_after_the_watcher_an_explicit_ingest_stats_no_indexed_ref(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The watcher indexes a row and its ref: the folder's mtime moves, its last scan is older.
    ref = write_ref(agent_dir, "live.md", "c-live")
    ingest_agent_dir(agent_dir, changed=[ref, append_row(agent_dir, "c-live", "live.md")])
    assert Ref.objects.filter(name="refs/live.md").exists()
    # Meanwhile a ref is written with no row (spec §3: orphans), and an old one is reclaimed.
    write_ref(agent_dir, "orphan.md", "c-orphan")
    (agent_dir / "refs" / "old-3.md").unlink()
    age(agent_dir / "refs")
    spy = Spy(agent_dir / "refs", monkeypatch)
    [delta] = ingest_path(agent_dir, full=True).deltas
    assert spy.listed == 1
    # Only the new file is read; the indexed ones are not statted one by one.
    assert set(spy.statted) <= {"orphan.md", "old-3.md"}, spy.statted
    assert delta.new_refs == ["refs/orphan.md"]
    assert not Ref.objects.filter(name="refs/old-3.md").exists()
    assert_ref_figures(agent_dir)
    # Nothing changed since: the next explicit ingest does not look at the folder.
    again = Spy(agent_dir / "refs", monkeypatch)
    ingest_path(agent_dir, full=True)
    assert again.listed == 0 and again.statted == []


def test_a_folder_scanned_right_after_it_changed_is_listed_again(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A ref written in the same clock tick as the scan's listing would leave the folder's mtime
    # as the scan saw it: a scan that recent is not trusted.
    write_ref(agent_dir, "fresh.md", "c-fresh")
    ingest_path(agent_dir, full=True)
    stamp = os.stat(agent_dir / "refs").st_mtime_ns
    late = write_ref(agent_dir, "late.md", "c-late")
    os.utime(late.parent, ns=(stamp, stamp))  # the same mtime as the scan saw
    spy = Spy(agent_dir / "refs", monkeypatch)
    [delta] = ingest_path(agent_dir, full=True).deltas
    assert spy.listed == 1 and delta.new_refs == ["refs/late.md"]
    assert Agent.objects.get(slug="main").refs_count == len(list((agent_dir / "refs").glob("*.md")))
