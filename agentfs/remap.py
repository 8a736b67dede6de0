"""Rewrites `node_id` / `offloaded` of rows in place in every offload JSONL, safe against appends.

Rows are edited in place: never deleted, never reordered. Only the lines that change are
re-serialised (compactly, as the plugin does); every other byte, including corrupt and invalid
lines, unknown keys and a partial last line (an append in flight), is copied unchanged.

Concurrency design. The agent appends to these files at any moment with a non-atomic
`appendFile` (open O_APPEND, write, close), and we replace the file by rename, so an append can
land in the *old* inode after we read it. Per file:

1. Read the file through a descriptor `fd` that we keep open, and build the new content.
2. Write it to a temp file beside it and fsync. Just before the rename, stat the path: if it
   grew (an append) the new rows are spliced in; if it was replaced or rewritten in place, start
   over (bounded; `RemapConflict`, nothing written, when retries run out).
3. `os.replace` the temp over the path, fsync the folder.
4. Recovery: wait until no process still has the *old* inode open for writing (a Linux read lease
   on `fd` is only granted then; it is released at once), then compare the old inode's full
   content with what step 1-2 were based on. Anything an appender wrote there after our last look
   (it opened the file before the rename) is found here, and the file is rewritten once more as
   `rebuild(old inode content) + whatever was appended to the new file since the rename`, which
   keeps the order of a sequential appender. That rewrite goes through the same steps.

Two phases. `prepare_remap` does steps 1-2 up to the fsynced temp file and `PreparedRemap.commit`
the rest, so a multi-file edit can prepare every file (where a full disk or a read-only folder
fails) before it renames any; `remap_rows` and `rewrite_file` do both at once.

Residual window: none for appenders that open-write-close (the plugin, Node's appendFile), as the
lease proves the old inode has no writer left before we read it for the last time. Where leases
are unavailable (file owned by another user, a filesystem without leases), step 4 waits a fixed
settle time instead, and an append whose open-to-write gap straddles the rename *and* outlasts
that wait is lost. When renames keep racing a fast appender (more than
RECOVERY_DEPTH rounds, or BUDGET_SECONDS of wall clock), the late bytes are appended to the new
file instead: nothing is lost, but rows the agent appended meanwhile then precede them (logged
as a warning). A half-written last line is never renamed into the new file (its writer finishes
it in the old inode, and the recovery brings it over whole), so those late lines always start a
line. Only when they cannot be put back at all (the old inode was rewritten in place, or the new
file never ends with a whole line) are they saved to `.memviz-recovered/` beside the file, and
`RemapConflict` says where: nothing is dropped with the old inode. A writer that replaces the file by rename (variant E) in the microseconds
between our final stat and our rename is not seen. Memviz's own writers serialise on an advisory
`flock` of the agent folder. The proof is `tests/agentfs/test_remap.py`: a separate
process appends thousands of rows per second, some split in two writes, while merges run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentfs import inode_io
from agentfs.atomic import fsync_folder, lock_folder, open_temp_beside, write_all
from agentfs.layout import offload_files
from agentfs.paths import open_regular, open_regular_fd
from agentfs.row_edits import RowEditor

MAX_RETRIES = 20
PRECHECK_ROUNDS = 50
RECOVERY_DEPTH = 16
# Wall-clock bound of one file's rewrite, recoveries included: past it, a rewrite not yet renamed
# gives up (RemapConflict, nothing written) and a recovery stops renaming and appends instead.
BUDGET_SECONDS = 10.0
log = logging.getLogger(__name__)


class Editor(Protocol):
    """Turns a file's bytes (whose first line is number `first_line`) into new bytes + rows."""

    def apply(self, data: bytes, first_line: int = 1) -> tuple[bytes, int]: ...


Build = Callable[[bytes, int], tuple[bytes, int]]


class RemapConflict(RuntimeError):
    """A file kept changing under the rewrite; that file was left as it was."""


@dataclass
class RemapResult:
    files_changed: list[str] = field(default_factory=list)
    rows_changed: int = 0
    per_file: dict[str, int] = field(default_factory=dict)  # changed files only
    retries: int = 0


def remap_rows(
    agent_dir: Path,
    *,
    node_map: dict[str, str] | None = None,
    mark_deleted: set[str] | None = None,
    files: list[Path] | None = None,
) -> RemapResult:
    """Point rows of merged nodes at the kept node and/or mark pruned nodes' rows deleted.

    `node_map`: a row whose `node_id` equals a key gets the value. `mark_deleted`: a row whose
    (original) `node_id` is in the set gets `"offloaded": "deleted"`. Only rows the plugin would
    read (objects with a non-empty string `tool_call_id`) are touched. Idempotent, so a call that
    failed part-way (`RemapConflict` names the file) can simply be repeated.
    """
    agent_dir = Path(agent_dir)
    editor = RowEditor(node_map or {}, mark_deleted or set())
    result = RemapResult()
    if not editor.active:
        return result
    targets = [agent_dir / f for f in files] if files is not None else offload_files(agent_dir)
    with lock_folder(agent_dir):
        for path in targets:
            rows, retries = rewrite_file(path, editor)
            result.retries += retries
            if rows:
                result.files_changed.append(path.name)
                result.per_file[path.name] = rows
                result.rows_changed += rows
    return result


def rows_with_nodes(agent_dir: Path, node_ids: set[str]) -> int:
    """How many rows across the agent's offload files have a `node_id` in `node_ids`."""
    editor = RowEditor({}, set(node_ids))
    if not editor.active:
        return 0
    count = 0
    for path in offload_files(agent_dir):
        with contextlib.suppress(OSError), open_regular(path, folders=1) as handle:
            data = handle.read()
            count += sum(1 for line in editor.candidate_lines(data) if editor.matches(line))
    return count


class _Restart(Exception):
    """The file was replaced or rewritten in place under us; read it again."""


def rewrite_file(path: Path, editor: Editor) -> tuple[int, int]:
    """Apply `editor` to one file safely, in one go; returns (rows changed, retries).

    The caller holds the agent folder's lock. A recording editor may see a line twice (a
    restart re-reads the file); it keeps the first sighting, which is the original value.
    """
    return _rewrite_file(path, editor.apply, editor.apply)


class PreparedRemap:
    """Steps 1-2 of the rewrite done for one file: the new content sits in an fsynced temp.

    `commit` splices appends made since, renames, and folds in late appends (steps 2-4);
    `abort` leaves the file as it is. The descriptor on the original stays open in between.
    """

    def __init__(
        self,
        path: Path,
        fd: int,
        temp_fd: int,
        temp: Path,
        data: bytes,
        seen: os.stat_result,
        out: bytes,
        rows: int,
        build: Build,
    ) -> None:
        self.path, self.fd, self.temp_fd, self.temp = path, fd, temp_fd, temp
        self.data, self.seen, self.out, self.rows, self.build = data, seen, out, rows, build
        self.open = True

    def commit(self) -> int:
        """Rename the new content into place; returns the rows changed (appends included).

        Raises `RemapConflict` when the file keeps changing under the rewrite.
        """
        if not self.open:
            raise RuntimeError(f"{self.path.name}: this prepared rewrite was already used")
        self.open = False
        try:
            try:
                rows, _ = _commit_prepared(self)
            except _Restart:
                self.close_temp()
                inode_io.unlink_quietly(self.temp)
                rows, _ = _rewrite_file(self.path, self.build, self.build)
        finally:
            self.close_temp()
            inode_io.close_quietly(self.fd)
        return rows

    def close_temp(self) -> None:
        """Close the temp's descriptor once (a number closed twice may be another file's by then)."""
        if self.temp_fd >= 0:
            inode_io.close_quietly(self.temp_fd)
            self.temp_fd = -1

    def abort(self) -> None:
        if self.open:
            self.open = False
            self.close_temp()
            inode_io.close_quietly(self.fd)
            inode_io.unlink_quietly(self.temp)


def prepare_remap(path: Path, editor: Editor) -> PreparedRemap | None:
    """Read `path`, apply `editor` and write the result to an fsynced temp file beside it.

    None when no row changes (or the file is gone). An `OSError` while writing the temp
    (ENOSPC, EROFS, EACCES) propagates with nothing left behind.
    """
    try:
        fd = open_regular_fd(path, folders=1)  # no link, FIFO or device
    except FileNotFoundError:
        return None
    try:
        data, seen = inode_io.read_settled(fd)
        out, rows = editor.apply(data, 1)
        if not rows:
            os.close(fd)
            return None
        temp_fd, temp = open_temp_beside(path, like=seen)
    except BaseException:
        inode_io.close_quietly(fd)
        raise
    try:
        write_all(temp_fd, out)
        os.fsync(temp_fd)
    except BaseException:
        inode_io.close_quietly(temp_fd)
        inode_io.close_quietly(fd)
        inode_io.unlink_quietly(temp)
        raise
    return PreparedRemap(path, fd, temp_fd, temp, data, seen, out, rows, editor.apply)


def _rewrite_file(
    path: Path, build: Build, extend: Build, depth: int = 0, deadline: float | None = None
) -> tuple[int, int]:
    """Apply `build` to one file safely; returns (rows changed, retries).

    `build(content, first_line)` gives the new content and a count of changed rows (0: leave
    the file alone). `extend(chunk, first_line)` does the same for bytes appended after the
    last complete line, so that rows appended while we work are spliced into the temp file
    instead of redoing the whole file.
    """
    retries = 0
    deadline = deadline or time.monotonic() + BUDGET_SECONDS
    for _ in range(MAX_RETRIES):
        if retries and time.monotonic() > deadline:
            if depth:
                raise _Diverged  # a recovery out of time: the caller appends instead
            break
        try:
            fd = open_regular_fd(path, folders=1)  # no link, FIFO or device
        except FileNotFoundError:
            return 0, retries  # the reclaimer deleted it: nothing to remap
        try:
            data, seen = inode_io.read_settled(fd)
            out, rows = build(data, 1)
            if not rows:
                return 0, retries
            temp_fd, temp = open_temp_beside(path, like=seen)
            prepared = PreparedRemap(path, fd, temp_fd, temp, data, seen, out, rows, extend)
            try:
                write_all(temp_fd, out)
                os.fsync(temp_fd)
                rows, more = _commit_prepared(prepared, depth, build, deadline)
            finally:
                prepared.close_temp()
                inode_io.unlink_quietly(temp)  # already renamed on success
            return rows, retries + more
        except _Restart:
            retries += 1
        finally:
            os.close(fd)
    if depth:
        raise _Diverged
    raise RemapConflict(
        f"{path.name} kept being rewritten by another process; it was left unchanged "
        f"after {retries} attempts. Run the remap again (it is idempotent)."
    )


def _commit_prepared(
    prepared: PreparedRemap, depth: int = 0, build: Build | None = None, deadline: float = 0.0
) -> tuple[int, int]:
    """Steps 2-4 for a prepared file: splice appends, rename, recover late writes.

    Appends are spliced into the (already fsynced) temp without an fsync each, so the loop
    settles quickly even under a fast appender and the rename happens while it is quiet; the
    spliced tail is fsynced once before the rename, and anything spliced after that fsync is
    fsynced right after the rename (same inode), before the folder.
    """
    path, fd, temp_fd, temp = prepared.path, prepared.fd, prepared.temp_fd, prepared.temp
    state = _Progress(prepared.data, prepared.seen, prepared.out, prepared.rows)
    extend = prepared.build
    build = build or extend
    deadline = deadline or time.monotonic() + BUDGET_SECONDS

    def splice_appends() -> bool:
        """Splice whatever was appended since the last look; False when nothing was."""
        data, seen, out = state.data, state.seen, state.out
        now = os.stat(path)
        if (now.st_ino, now.st_dev) != (seen.st_ino, seen.st_dev) or (now.st_size < len(data)):
            raise _Restart  # replaced or truncated: start over from a fresh read
        if now.st_size == len(data) and now.st_mtime_ns == seen.st_mtime_ns:
            return False
        tail = inode_io.pread_all(fd, len(data))
        state.seen = os.fstat(fd)
        complete = data.rfind(b"\n") + 1
        keep = len(out) - (len(data) - complete)
        chunk_out, chunk_rows = extend(data[complete:] + tail, data.count(b"\n") + 1)
        os.ftruncate(temp_fd, keep)
        os.pwrite(temp_fd, chunk_out, keep)
        state.data = data + tail
        state.out = out[:keep] + chunk_out
        state.rows += chunk_rows
        return True

    try:
        spliced = False
        for _ in range(PRECHECK_ROUNDS):
            if not splice_appends():
                break
            spliced = True
        late = False
        if spliced:
            os.fsync(temp_fd)
            late = splice_appends()  # one more look after the slow fsync
        # A half-written last line stays out of the new file: its writer still holds the old
        # inode and finishes it there, and the recovery brings the whole line over in order.
        # Renamed with it, its first half would be joined to whatever the agent appends next.
        half = len(state.data) - (state.data.rfind(b"\n") + 1)
        if half:
            state.out = state.out[: len(state.out) - half]
            os.ftruncate(temp_fd, len(state.out))
            late = True
        os.replace(temp, path)
        if late:
            os.fsync(temp_fd)
    except BaseException:
        inode_io.unlink_quietly(temp)
        raise
    # Closed before the recovery: a nested recovery waits for a lease on this very inode (now
    # the file), which nobody may hold open for writing, us included.
    prepared.close_temp()
    fsync_folder(path.parent)
    return _recover_late_writes(path, fd, build, state, depth, deadline)


@dataclass
class _Progress:
    """What the temp file holds so far: the original bytes it was built from, and the result."""

    data: bytes
    seen: os.stat_result
    out: bytes
    rows: int


class _Diverged(Exception):
    """The new file no longer starts with what we wrote."""


def _recover_late_writes(
    path: Path, fd: int, build: Build, state: _Progress, depth: int, deadline: float
) -> tuple[int, int]:
    """Fold in whatever reached the old inode after we last read it (see the module docstring).

    The new file holds `state.out`: the rewrite of `state.data` up to its last complete line.
    """
    data, out, rows = state.data, state.out, state.rows
    inode_io.wait_until_no_writer(fd)
    final = inode_io.pread_all(fd)
    complete = data.rfind(b"\n") + 1
    if final == data and complete == len(data):
        return rows, 0
    rebuilt, rows = build(final, 1)
    if not rows:
        rebuilt = final
    written = len(out)

    def splice(current: bytes, _first_line: int = 1) -> tuple[bytes, int]:
        if not current.startswith(out):
            raise _Diverged
        return rebuilt + current[written:], 1

    try:
        if depth >= RECOVERY_DEPTH or time.monotonic() > deadline:
            raise _Diverged  # appends keep racing each rename: stop renaming, append instead
        _, more = _rewrite_file(path, splice, _unchanged, depth + 1, deadline)
    except _Diverged:
        # The new file was rewritten by another writer meanwhile (or renames never settle):
        # append the late lines, which start at a line boundary of what we renamed; a row the
        # agent appended to the new file meanwhile then sits before them.
        late = final[complete:] if final.startswith(data) else b""
        if not late or not inode_io.append_at_line_end(path, late):
            # The bytes only the old inode holds would go with it: keep them on disk first.
            saved = inode_io.save_unplaced_bytes(path, late or final)
            raise RemapConflict(
                f"{path.name} kept changing while rows the agent appended during the rewrite "
                f"were being put back; those rows are saved in {saved} (append them to the "
                "file once the agent is idle)"
            ) from None
        log.warning(
            "%s: %d line(s) the agent appended during the rewrite were appended again at the "
            "end; lines it appended meanwhile now precede them",
            path.name,
            late.count(b"\n"),
        )
        more = 0
    return rows, 1 + more


def _unchanged(chunk: bytes, _first_line: int = 1) -> tuple[bytes, int]:
    return chunk, 0


