"""An ingest's progress in rows: rows read so far, and the total estimated from bytes.

Before reading, the bytes still to read are known from one stat per session file and what was
read of it before (``TrackedFile``): a cheap, exact figure. Rows are not known until parsed, so
the total is the rows read plus the bytes left divided by the bytes per row seen so far (before
the first batch: the average of what was read before, else ``BYTES_PER_ROW``). The estimate is
never below the rows read, and it converges on the true count as the ingest goes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from agentfs.layout import AgentFolder
from sessions.models import TrackedFile

BYTES_PER_ROW = 400  # a typical offload row (the plugin's rows are 250-600 bytes)


@dataclass
class IngestProgress:
    """What a job shows: ``done`` of ``total`` rows (``total`` an estimate while running)."""

    done: int
    total: int
    message: str

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0


ProgressFn = Callable[[IngestProgress], None]


def bytes_to_read(folders: list[AgentFolder]) -> tuple[int, float]:
    """(bytes of session files not read yet, bytes per row of what was read before).

    One stat per session file and one query: a file whose size and mtime are those recorded
    adds nothing, one that grew adds what it grew by, anything else its whole size.
    """
    paths = [os.path.abspath(f.path) for f in folders]
    tracked = {
        (path, relpath): (size, mtime_ns, offset, line_no)
        for path, relpath, size, mtime_ns, offset, line_no in TrackedFile.objects.filter(
            kind="jsonl", agent__path__in=paths
        ).values_list("agent__path", "relpath", "size", "mtime_ns", "offset", "line_no")
    }
    read_bytes = sum(t[2] for t in tracked.values())
    read_rows = sum(max(0, t[3] - 1) for t in tracked.values())
    total = 0
    for folder, path in zip(folders, paths, strict=True):
        for session_file in folder.session_files:
            try:
                st = os.stat(session_file.path)
            except OSError:
                continue
            known = tracked.get((path, os.path.relpath(session_file.path, path)))
            if known is None:
                total += st.st_size
            elif (st.st_size, st.st_mtime_ns) != known[:2]:
                total += st.st_size - known[2] if st.st_size >= known[2] else st.st_size
    per_row = read_bytes / read_rows if read_rows >= 100 else BYTES_PER_ROW
    return total, per_row


class RowsProgress:
    """Counts rows and bytes as batches are read; reports ``IngestProgress`` to ``report``."""

    def __init__(self, report: ProgressFn | None, total_bytes: int, per_row: float) -> None:
        self.report = report
        self.total_bytes = total_bytes
        self.per_row = per_row
        self.rows = 0
        self.bytes = 0
        self.note = ""  # the last step's (an agent and a file)

    def total_rows(self) -> int:
        per_row = self.bytes / self.rows if self.rows >= 100 else self.per_row
        left = max(0, self.total_bytes - self.bytes)
        return self.rows + int(left / max(per_row, 1.0))

    def tick(self, message: str, rows: int = 0, read: int = 0) -> None:
        self.note = message
        self.rows += rows
        self.bytes += read
        if self.report is not None:
            self.report(IngestProgress(done=self.rows, total=self.total_rows(), message=message))

    def finish(self) -> None:
        if self.report is not None:
            # the figures made exact; the note stays the last file's (the job's end says "done")
            self.report(IngestProgress(done=self.rows, total=self.rows, message=self.note))
