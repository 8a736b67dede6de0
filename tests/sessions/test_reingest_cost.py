"""An explicit re-ingest reads what changed, not what the folder holds (issue 20).

`manage.py ingest` of an unchanged agent opens none of its session files, refs or canvases and
lists no refs folder; after one appended row and its ref it opens those two and reads the
appended bytes (and the quick check's window), not the file from its start. The full pass
that catches the rest (a ref written without a row, a same-length rewrite far from the end)
still runs once MEMVIZ_FULL_CHECK_SECONDS passed, or when asked for.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentfs import paths
from intake.ingest import ingest_path
from sessions.models import Ref, Row
from tests.debug.memory_factory import canvas, node, write_agent
from tests.sessions.test_incremental import write_ref
from tests.sessions.test_refs_folder_scan import Spy, age

pytestmark = pytest.mark.django_db
ROWS = 1500
SUMMARY = "x" * 2000  # 1,500 rows of ~2.2 KB: a 3.3 MB session file


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    rows = [
        {
            "minutes": i / 10,
            "tool": "exec:ls",
            "node": "001-N1",
            "summary": f"{SUMMARY}{i}",
            "ref": i % 300 == 0,
        }
        for i in range(ROWS)
    ]
    folder = write_agent(
        tmp_path / "root",
        "big",
        {"s1": rows},
        {"001-task.mmd": canvas("a task", [node("001-N1", "step", "done", 1)])},
    )
    ingest_path(folder)
    age(folder / "refs")
    return folder


class Opens:
    """The files of ``folder`` opened through memviz's opener (every read of a memory file)."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: list[str] = []
        real = paths.open_regular_fd

        def spy(path, *args, **kwargs):
            relative = os.path.relpath(os.fspath(path), folder)
            if not relative.startswith(".."):
                self.names.append(relative)
            return real(path, *args, **kwargs)

        monkeypatch.setattr(paths, "open_regular_fd", spy)

    def of_memory(self) -> set[str]:
        """Opened session files, refs and canvases (state.json is read on every ingest)."""
        return {n for n in self.names if n.endswith((".jsonl", ".md", ".mmd"))}


def read_bytes() -> int:
    """Bytes this process read through read(2) and friends so far (Linux)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def test_an_unchanged_reingest_opens_no_memory_file(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opens = Opens(agent_dir, monkeypatch)
    listing = Spy(agent_dir / "refs", monkeypatch)
    report = ingest_path(agent_dir)
    assert report.files_read == 0 and report.rows_added == 0 and report.refs_indexed == 0
    assert opens.of_memory() == set()
    assert listing.listed == 0 and listing.statted == []


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts bytes read on Linux")
def test_one_appended_row_costs_its_bytes_not_the_file(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    [session_file] = agent_dir.glob("offload-*.jsonl")
    write_ref(agent_dir, "appended.md", "c-appended")
    with session_file.open("a", encoding="utf-8") as handle:
        handle.write(
            '{"tool_call_id": "c-appended", "summary": "one more", "node_id": "001-N1", '
            '"result_ref": "refs/appended.md"}\n'
        )
    opens = Opens(agent_dir, monkeypatch)
    listing = Spy(agent_dir / "refs", monkeypatch)
    before = read_bytes()
    report = ingest_path(agent_dir)
    read = read_bytes() - before
    assert report.rows_added == 1 and report.refs_indexed == 1
    assert Row.objects.get(tool_call_id="c-appended").result_ref == "refs/appended.md"
    assert Ref.objects.filter(name="refs/appended.md").exists()
    assert opens.of_memory() == {session_file.name, "refs/appended.md"}
    assert listing.listed == 0  # the new ref came from its row
    size = session_file.stat().st_size
    assert read < size / 4, f"read {read:,} bytes for one row appended to {size:,}"


def test_the_full_pass_is_due_after_its_interval(agent_dir: Path, settings) -> None:
    """A ref written without a row is found by the next explicit ingest once the full pass is
    due (and by ``full`` at once), not by one in between."""
    write_ref(agent_dir, "orphan.md", "c-orphan")
    ingest_path(agent_dir)
    assert not Ref.objects.filter(name="refs/orphan.md").exists()
    settings.MEMVIZ_FULL_CHECK_SECONDS = 0
    ingest_path(agent_dir)
    assert Ref.objects.filter(name="refs/orphan.md").exists()
