"""The one atomic writer: temp file beside the target, fsync, rename, mode kept, hash precondition.

Every memviz write into an agent's memory folder goes through here (or, for offload JSONL, through
`remap.py`, which uses the same temp/lock/fsync helpers). A crash at any point leaves either the old
or the new file: the new bytes are fsynced in a temp file of the same folder, then `os.replace`
swaps the name in one step, then the folder is fsynced so the rename itself is durable.

Temp names look like `.<name>.memviz-tmp-<pid>-<hex>`: a dotfile (the plugin and our readers skip
dotfiles) that never ends in `.mmd`, `.jsonl` or `.json`. A temp left by a killed process is removed
by `remove_stale_temps` once its pid is gone.

Memviz's own writers serialise on an advisory `flock` of the target's folder, so the hash
precondition is a real compare-and-swap between memviz processes. The agent does not take that
lock; against the agent the precondition is re-checked right before the rename, which leaves only
the gap between that check and `os.replace` (microseconds) in which an agent write would be
replaced. The plugin writes `.mmd` and `state.json` with plain `writeFile`, so no design that keeps
the rename atomic can close that gap entirely.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from agentfs.paths import open_regular

TEMP_MARKER = ".memviz-tmp-"


class PreconditionFailed(Exception):
    """The file changed (or vanished) since the caller read it; nothing was written."""

    def __init__(self, path: Path, expected_hash: str | None, current_hash: str | None) -> None:
        self.path = Path(path)
        self.expected_hash = expected_hash
        self.current_hash = current_hash
        if current_hash is None:
            message = f"{self.path.name} vanished from disk since it was read; nothing was written"
        else:
            message = (
                f"{self.path.name} changed on disk since it was read "
                f"(expected {str(expected_hash)[:12]}, found {current_hash[:12]}); "
                "nothing was written"
            )
        super().__init__(message)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_hash(path: Path) -> str | None:
    """SHA-256 hex of the file's bytes, or None when it does not exist."""
    try:
        with open_regular(path) as handle:  # a FIFO is refused at once, never waited on
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except FileNotFoundError:
        return None


def write_atomic(
    path: Path, data: bytes, *, expect_hash: str | None = None, must_exist: bool = True
) -> str:
    """Replace `path` with `data` atomically and return the new content hash.

    `expect_hash` is the hash of the content the caller based its edit on; if the file no longer
    has it (or is gone) `PreconditionFailed` is raised and nothing is written. With `must_exist`
    (the default) a missing file is also a `PreconditionFailed`, so an edit never resurrects a
    file the agent deleted. The file's mode (and owner, where permitted) is kept.
    """
    path = Path(path)
    with lock_folder(path.parent):
        prepared = prepare_write(path, data, expect_hash=expect_hash, must_exist=must_exist)
        return prepared.commit()


class PreparedWrite:
    """The first half of an atomic replace: the new bytes are in an fsynced temp file beside.

    Several files can be prepared before any is committed, so a multi-file edit that runs out
    of disk (or meets a read-only folder) fails before it has changed anything. `commit`
    re-checks the precondition, renames and fsyncs the folder; `abort` removes the temp.
    The caller holds the folder lock (`lock_folder`) across both halves.
    """

    def __init__(
        self,
        path: Path,
        temp: Path,
        data: bytes,
        expect_hash: str | None,
        must_exist: bool,
        create: bool = False,
    ) -> None:
        self.path = path
        self.temp: Path | None = temp
        self.data = data
        self.expect_hash = expect_hash
        self.must_exist = must_exist
        self.create = create

    def commit(self) -> str:
        if self.temp is None:
            raise RuntimeError(f"{self.path.name}: this prepared write was already used")
        temp, self.temp = self.temp, None
        try:
            if self.create:
                # unlike a rename, a link never replaces a file that appeared meanwhile
                os.link(temp, self.path)
                os.unlink(temp)
            else:
                _check_hash(self.path, self.expect_hash, self.must_exist)
                os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            raise
        fsync_folder(self.path.parent)
        return sha256_bytes(self.data)

    def abort(self) -> None:
        temp, self.temp = self.temp, None
        if temp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)


def prepare_write(
    path: Path,
    data: bytes,
    *,
    expect_hash: str | None = None,
    must_exist: bool = True,
    create: bool = False,
) -> PreparedWrite:
    """Check the precondition and write `data` to an fsynced temp file beside `path`.

    With `create` the file must not exist, now or at commit (`FileExistsError`): the commit
    hard-links the temp into place, so the file appears whole and never over another one.
    Raises `PreconditionFailed`, `ValueError` for a symlink or a non-regular file, or the
    `OSError` of the write (ENOSPC, EROFS, EACCES) — in every case with no temp left behind.
    """
    path = Path(path)
    if create:
        if os.path.lexists(path):
            raise FileExistsError(f"{path.name} already exists; nothing was written")
        fd, temp = open_temp_beside(path, like=None)
        _fill(fd, temp, data)
        return PreparedWrite(path, temp, data, None, False, create=True)
    if path.is_symlink():
        raise ValueError(f"refusing to replace {path.name}: it is a symlink")
    before = _stat_or_none(path)
    if before is None and (must_exist or expect_hash is not None):
        raise PreconditionFailed(path, expect_hash, None)
    if before is not None and not stat.S_ISREG(before.st_mode):
        raise ValueError(f"refusing to replace {path.name}: not a regular file")
    _check_hash(path, expect_hash, must_exist)
    fd, temp = open_temp_beside(path, like=before)
    _fill(fd, temp, data)
    return PreparedWrite(path, temp, data, expect_hash, must_exist)


def _fill(fd: int, temp: Path, data: bytes) -> None:
    """Write and fsync the new bytes into a fresh temp; on any error the temp is removed."""
    try:
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def _check_hash(path: Path, expect_hash: str | None, must_exist: bool) -> None:
    if expect_hash is None:
        if must_exist and not path.exists():
            raise PreconditionFailed(path, None, None)
        return
    current = file_hash(path)
    if current != expect_hash:
        raise PreconditionFailed(path, expect_hash, current)


def open_temp_beside(path: Path, *, like: os.stat_result | None) -> tuple[int, Path]:
    """Create an empty temp file in `path`'s folder with the mode/owner of `like` (or the umask's).

    The temp starts at 0600 so its content is never more visible than the original's.
    """
    path = Path(path)
    for _ in range(8):
        temp = path.with_name(f".{path.name}{TEMP_MARKER}{os.getpid()}-{secrets.token_hex(4)}")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            continue
        break
    else:  # pragma: no cover - eight random collisions in a row
        raise FileExistsError(f"could not create a temp file beside {path.name}")
    try:
        mode = stat.S_IMODE(like.st_mode) if like is not None else 0o666 & ~_current_umask()
        if like is not None and (like.st_uid != os.geteuid() or like.st_gid != os.getegid()):
            # Keep the agent's ownership when we are allowed to (root, or a shared group).
            with contextlib.suppress(PermissionError):
                os.fchown(fd, like.st_uid, like.st_gid)
        os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        os.unlink(temp)
        raise
    return fd, temp


def fsync_folder(folder: Path) -> None:
    """Make a rename inside `folder` durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as error:  # some filesystems refuse fsync on a directory
        if error.errno not in (errno.EINVAL, errno.EBADF):
            raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def lock_folder(folder: Path) -> Iterator[int]:
    """Advisory exclusive lock on a folder, shared by every memviz writer (the agent ignores it).

    flock locks belong to the open file description, so nesting two `lock_folder` calls on the
    same folder in one process would deadlock; callers take it once per operation.
    """
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


def remove_stale_temps(folder: Path) -> list[str]:
    """Delete memviz temp files in `folder` whose writer process no longer exists."""
    removed = []
    for entry in Path(folder).iterdir():
        name = entry.name
        if not name.startswith(".") or TEMP_MARKER not in name:
            continue
        pid_text = name.rsplit(TEMP_MARKER, 1)[1].split("-", 1)[0]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and not _pid_alive(int(pid_text)):
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
                removed.append(name)
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _stat_or_none(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _current_umask() -> int:
    # /proc avoids os.umask's set-and-restore, which is not thread-safe.
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
