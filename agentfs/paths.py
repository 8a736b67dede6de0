"""Confines any path taken from a memory folder to that folder, and opens its files without links."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import re
import stat
from io import BufferedReader
from pathlib import Path, PurePosixPath

from agentfs.wording import TEXTS, words

__all__ = [
    "READ_LIMIT",
    "FileTooLarge",
    "LinkRefused",
    "UnsafePath",
    "check_relative",
    "confine",
    "confine_file",
    "is_link",
    "open_append",
    "open_regular",
    "open_regular_fd",
    "read_regular",
]

# The most bytes read whole from one memory-folder file (state, registry, a canvas, a ref page);
# streamed readers (JSONL rows) read in bounded blocks instead. MEMVIZ_FILE_MAX_BYTES sets it.
READ_LIMIT = int(os.environ.get("MEMVIZ_FILE_MAX_BYTES", 64 * 1024 * 1024))

_DRIVE = re.compile(r"^[A-Za-z]:")


class UnsafePath(ValueError):
    """A path from a memory folder that would leave it: a code of `wording.TEXTS` and its
    values (the message is its English sentence; the pages translate the code). Given a
    sentence that is no code, that sentence is the message and the code is empty."""

    def __init__(self, code: str, **values: object) -> None:
        known = code in TEXTS
        super().__init__(words(code, values) if known else code)
        self.code, self.values = (code, values) if known else ("", {})


def check_relative(relative: str) -> PurePosixPath:
    """Validate the text of a relative path without touching the disk.

    Refuses what the plugin never writes but a hostile folder could: empty names, NUL,
    backslashes (Windows separators would be read differently elsewhere), absolute paths,
    drive letters and any `..` component.
    """
    if not isinstance(relative, str) or not relative.strip():
        raise UnsafePath("path_empty")
    if "\x00" in relative:
        raise UnsafePath("path_nul", path=relative)
    if "\\" in relative:
        raise UnsafePath("path_backslash", path=relative)
    if relative.startswith("/") or _DRIVE.match(relative):
        raise UnsafePath("path_absolute", path=relative)
    pure = PurePosixPath(relative)
    if ".." in pure.parts:
        raise UnsafePath("path_dotdot", path=relative)
    return pure


def _within(root: Path, resolved: Path, relative: str) -> Path:
    if resolved != root and not resolved.is_relative_to(root):
        raise UnsafePath("path_leaves", path=relative)
    return resolved


def confine(base: Path, relative: str) -> Path:
    """Resolve `relative` under `base`, refusing anything that escapes it, links included.

    Never opens the target: it only resolves names, so a missing file is fine.
    """
    pure = check_relative(relative)
    root = Path(base).resolve()
    return _within(root, (root / pure).resolve(), relative)


def confine_file(base: Path, relative: str) -> Path:
    """Like `confine`, but the file's own name is not resolved: a file swapped for a link
    stays the link, which every opener refuses, so nothing is written through it into another
    file of the folder (a canvas or state.json linked to an offload file would have been
    written there). Its folders are resolved and confined as by `confine`, and a link at the
    end that leaves the folder is refused here already."""
    pure = check_relative(relative)
    root = Path(base).resolve()
    folder = _within(root, (root / pure.parent).resolve(), relative)
    _within(root, (folder / pure.name).resolve(), relative)
    return folder / pure.name


class LinkRefused(OSError):
    """A symbolic link (or a non-regular file) met inside a memory folder; memviz never follows it.

    An OSError with errno ELOOP, so code that already handles unreadable files handles it too.
    """

    def __init__(self, code: str, **values: object) -> None:
        super().__init__(errno.ELOOP, words(code, values))
        self.code, self.values = code, values  # of wording.TEXTS: the pages translate it

    def __str__(self) -> str:
        return self.strerror or "link refused"


_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


def _shown(parts: list[str] | tuple[str, ...]) -> str:
    return "/".join(parts)


def open_regular(path: Path | str, *, folders: int = 0) -> BufferedReader:
    """`open_regular_fd` as a binary file object."""
    return os.fdopen(open_regular_fd(path, folders=folders), "rb")


def open_regular_fd(path: Path | str, *, folders: int = 0) -> int:
    """Open a file of a memory folder for reading, following no link on its way in.

    Neither the last component nor the ``folders`` folders above it (``1`` for
    ``<agent>/state.json``, ``2`` for ``<agent>/refs/x.md``) may be a link; everything above them
    (the data root the operator chose) is resolved normally. Race-free: the file is opened with
    ``O_NOFOLLOW`` and then the kernel is asked where the open descriptor really is
    (``/proc/self/fd``), so a folder swapped for a link between any check and the open is caught
    after the fact, before a byte is read. Where /proc is missing the components are opened one
    by one relative to each other, each with ``O_NOFOLLOW``. FIFOs and devices are refused without
    blocking (``O_NONBLOCK``, then ``fstat``). Raises ``LinkRefused`` (an OSError) or the OSError
    of the open.
    """
    text = os.fspath(path)
    anchor, *parts = text.rsplit("/", folders + 1)
    if folders < 0 or len(parts) != folders + 1 or ".." in parts or "" in parts:
        raise ValueError(f"cannot open {folders} folder(s) above {text!r} without links")
    try:
        fd = os.open(text, _READ_FLAGS)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise LinkRefused("is_link", name=_shown(parts)) from None
        if error.errno == errno.ENXIO:  # a socket (or a device without its driver)
            raise LinkRefused("not_regular", name=_shown(parts)) from None
        raise
    try:
        where = _descriptor_path(fd)
        if where is None:
            os.close(fd)
            fd = _open_walk(anchor or "/", parts)
        elif where != _expected(anchor, parts, fresh=False) and where != _expected(
            anchor, parts, fresh=True
        ):
            if where.endswith(" (deleted)"):
                raise FileNotFoundError(errno.ENOENT, "deleted while opened", parts[-1])
            raise LinkRefused("folder_link", name=_shown(parts))
        _require_regular(fd, _shown(parts))
        return fd
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise


def _require_regular(fd: int, shown: str) -> None:
    """Refuse a FIFO, device or socket (opened without blocking), then make reads blocking again."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise LinkRefused("not_regular", name=shown)
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)


class FileTooLarge(OSError):
    """A memory-folder file larger than memviz reads whole: a problem of that file, not a crash."""

    def __init__(self, shown: str, limit: int) -> None:
        super().__init__(errno.EFBIG, words("too_large", name=shown, limit=limit))
        self.code, self.values = "too_large", {"name": shown, "limit": limit}

    def __str__(self) -> str:
        return self.strerror or "file too large"


def read_regular(path: Path | str, *, folders: int = 0, limit: int | None = None) -> bytes:
    """The whole of a memory-folder file, opened by `open_regular`; at most ``limit`` bytes
    (default `READ_LIMIT`), else `FileTooLarge` (an OSError, like every other refusal)."""
    cap = READ_LIMIT if limit is None else limit
    with open_regular(path, folders=folders) as handle:
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise FileTooLarge(os.path.basename(os.fspath(path)), cap)
    return data


def open_append(
    path: Path | str, mode: int = 0o644, *, readable: bool = False, create: bool = True
) -> int:
    """A descriptor appending to a memory-folder file (created if missing), refusing a link, FIFO
    or device without blocking: a plain O_WRONLY open of a FIFO waits for a reader forever."""
    access = os.O_RDWR if readable else os.O_WRONLY
    flags = access | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    flags |= os.O_CREAT if create else 0
    try:
        fd = os.open(path, flags, mode)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENXIO):
            raise LinkRefused("not_regular", name=os.path.basename(os.fspath(path))) from None
        raise
    try:
        _require_regular(fd, os.path.basename(os.fspath(path)))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _descriptor_path(fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


@functools.lru_cache(maxsize=256)
def _real_anchor(anchor: str) -> str:
    return os.path.realpath(anchor or "/")


def _expected(anchor: str, parts: list[str], *, fresh: bool) -> str:
    if fresh:  # the operator may have moved the data root: look again, forget the old answer
        _real_anchor.cache_clear()
    real = _real_anchor(anchor)
    return ("" if real == "/" else real) + "/" + "/".join(parts)


def _open_walk(anchor: str, parts: list[str]) -> int:
    """The portable way: each component opened relative to the previous, with O_NOFOLLOW."""
    fd = os.open(anchor, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for depth, name in enumerate(parts):
            last = depth == len(parts) - 1
            try:
                child = os.open(name, _READ_FLAGS if last else _DIR_FLAGS, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    where = _shown(parts[: depth + 1])
                    raise LinkRefused("is_link", name=where) from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    return fd


def is_link(path: Path | str) -> bool:
    """True for a symbolic link (never followed), False for anything else or nothing."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False
