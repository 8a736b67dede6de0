"""Confines any relative path taken from a memory folder to that folder (hazard 10 of the spec)."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

__all__ = ["UnsafePath", "check_relative", "confine"]

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
