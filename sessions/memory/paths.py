"""Confines any path taken from a memory folder to that folder, and opens its files without links."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from pathlib import Path, PurePosixPath
from typing import BinaryIO

__all__ = [
    "LinkRefused",
    "UnsafePath",
    "check_relative",
    "confine",
    "is_link",
    "open_regular",
]

_DRIVE = re.compile(r"^[A-Za-z]:")


class UnsafePath(ValueError):
    """A path from a memory folder that would leave it; the message says why."""


def check_relative(relative: str) -> PurePosixPath:
    """Validate the text of a relative path without touching the disk.

    Refuses what the plugin never writes but a hostile folder could: empty names, NUL,
    backslashes (Windows separators would be read differently elsewhere), absolute paths,
    drive letters and any `..` component.
    """
    if not isinstance(relative, str) or not relative.strip():
        raise UnsafePath("empty path")
    if "\x00" in relative:
        raise UnsafePath(f"path contains a NUL byte: {relative!r}")
    if "\\" in relative:
        raise UnsafePath(f"path contains a backslash: {relative!r}")
    if relative.startswith("/") or _DRIVE.match(relative):
        raise UnsafePath(f"absolute path refused: {relative!r}")
    pure = PurePosixPath(relative)
    if ".." in pure.parts:
        raise UnsafePath(f"path contains '..': {relative!r}")
    return pure


def confine(base: Path, relative: str) -> Path:
    """Resolve `relative` under `base`, refusing anything that escapes it, links included.

    Never opens the target: it only resolves names, so a missing file is fine.
    """
    pure = check_relative(relative)
    root = Path(base).resolve()
    candidate = (root / pure).resolve()
    if candidate != root and not candidate.is_relative_to(root):
        raise UnsafePath(f"path leaves the folder through a link: {relative!r}")
    return candidate


class LinkRefused(OSError):
    """A symbolic link (or a non-regular file) met inside a memory folder; memviz never follows it.

    An OSError with errno ELOOP, so code that already handles unreadable files handles it too.
    """

    def __init__(self, message: str) -> None:
        super().__init__(errno.ELOOP, message)

    def __str__(self) -> str:
        return self.strerror or "link refused"


_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


def _shown(parts: tuple[str, ...]) -> str:
    return "/".join(parts)


def open_regular(path: Path | str, *, folders: int = 0) -> BinaryIO:
    """Open a file of a memory folder for reading, following no link on its way in.

    The last component and the ``folders`` folders above it (``1`` for ``<agent>/state.json``,
    ``2`` for ``<agent>/refs/x.md``) are opened one by one relative to the previous one with
    ``O_NOFOLLOW``, so a link swapped in between a check and the open cannot redirect it: there
    is no check-then-open window. Everything above them (the data root the operator chose) is
    resolved normally. A FIFO or device is refused without blocking (``O_NONBLOCK``) and the
    result must be a regular file. Raises ``LinkRefused`` (an OSError) or the OSError of the open.
    """
    path = Path(path)
    parts = path.parts[len(path.parts) - folders - 1 :]
    if folders < 0 or len(parts) != folders + 1 or ".." in parts:
        raise ValueError(f"cannot open {folders} folder(s) above {path.name!r} without links")
    anchor = path.parents[folders]
    fd = os.open(anchor, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for depth, name in enumerate(parts):
            last = depth == len(parts) - 1
            try:
                child = os.open(name, _READ_FLAGS if last else _DIR_FLAGS, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    where = _shown(parts[: depth + 1])
                    raise LinkRefused(
                        f"{where} is a symbolic link or not a folder: memviz does not follow "
                        "links inside memory folders"
                    ) from None
                raise
            os.close(fd)
            fd = child
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise LinkRefused(f"{_shown(parts)} is not a regular file")
        handle = os.fdopen(fd, "rb")
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    return handle


def is_link(path: Path | str) -> bool:
    """True for a symbolic link (never followed), False for anything else or nothing."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False
