"""Descriptor-level reads and writes of a file another process appends to (for `remap`).

Reading an inode once its writers are gone (a Linux read lease), reading a file that is still
being written until it settles, appending only at a line boundary, and keeping bytes that
would otherwise leave with a replaced inode.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import signal
import time
from pathlib import Path

from agentfs.atomic import fsync_folder, write_all
from agentfs.paths import open_append

LEASE_WAIT_SECONDS = 2.0
SETTLE_SECONDS = 0.05
_F_SETSIG = getattr(fcntl, "F_SETSIG", 10)
log = logging.getLogger("agentfs.remap")  # what it logs is part of a remap
RECOVERED_DIR = ".memviz-recovered"  # a dot folder: ingest and the plugin never read it


def save_unplaced_bytes(path: Path, content: bytes) -> str:
    """Write `content` durably to `.memviz-recovered/<file>.<time>.rows` beside `path`.

    The last resort of a recovery that cannot rewrite the file again: the old inode is about to
    be dropped, and these bytes are in no other file. Returns the path relative to the folder.
    """
    folder = path.parent / RECOVERED_DIR
    folder.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    target = folder / f"{path.name}.{stamp}.{time.time_ns() % 10**9:09d}.rows"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        write_all(fd, content)
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_folder(folder)
    fsync_folder(path.parent)
    log.error("%s: %d bytes only the old file held were saved in %s", path.name, len(content), target)
    return f"{RECOVERED_DIR}/{target.name}"


def append_at_line_end(path: Path, content: bytes, wait: float = LEASE_WAIT_SECONDS) -> bool:
    """Append `content` once the file ends with a whole line; False if it never does in `wait`.

    The agent may be between the two halves of a split append: writing in between would join
    our lines to its half.
    """
    fd = open_append(path, readable=True, create=False)
    try:
        until = time.monotonic() + wait
        while True:
            size = os.fstat(fd).st_size
            if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
                write_all(fd, content)
                return True
            if time.monotonic() > until:
                return False
            time.sleep(SETTLE_SECONDS / 5)
    finally:
        os.close(fd)


def close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def unlink_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def wait_until_no_writer(fd: int) -> bool:
    """Block until no process has `fd`'s inode open for writing; False if that cannot be known.

    A read lease is granted only when nobody has the file open for writing. We release it at
    once; the lease-break signal is redirected to SIGURG (ignored by default) so that a writer
    opening the file in those microseconds cannot kill this process with SIGIO.
    """
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, _F_SETSIG, signal.SIGURG)
    deadline = time.monotonic() + LEASE_WAIT_SECONDS
    pause = 0.0002
    while True:
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        except OSError as error:
            if error.errno == errno.EAGAIN and time.monotonic() < deadline:
                time.sleep(pause)
                pause = min(pause * 2, 0.01)
                continue
            if error.errno != errno.EAGAIN:
                time.sleep(SETTLE_SECONDS)  # no leases here: give in-flight appends a moment
            return False
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        return True


def read_settled(fd: int) -> tuple[bytes, os.stat_result]:
    """The file's bytes and a stat taken after reading them, preferring a read nobody disturbed."""
    for _ in range(5):
        before = os.fstat(fd)
        data = pread_all(fd)
        after = os.fstat(fd)
        if len(data) == after.st_size and (before.st_size, before.st_mtime_ns) == (
            after.st_size,
            after.st_mtime_ns,
        ):
            return data, after
    # Still changing (a busy appender): the recovery step after the rename settles it.
    return data, after


def pread_all(fd: int, offset: int = 0) -> bytes:
    chunks: list[bytes] = []
    size = os.fstat(fd).st_size
    while True:
        chunk = os.pread(fd, max(size - offset, 0) + 65536, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)
