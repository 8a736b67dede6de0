"""Unpack an uploaded .zip or .tar.gz of memory folders safely: no escapes, no links, bounded size."""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import BinaryIO

CHUNK = 1 << 20


class ArchiveError(ValueError):
    """The archive is refused; nothing of it is kept."""


def _safe_member_path(dest: Path, name: str) -> Path:
    if "\x00" in name or "\\" in name:
        raise ArchiveError(f"refused member name {name!r}")
    posix = PurePosixPath(name)
    if posix.is_absolute() or any(part == ".." for part in posix.parts):
        raise ArchiveError(f"member {name!r} would escape the upload folder")
    target = (dest / posix).resolve()
    if target != dest and dest not in target.parents:
        raise ArchiveError(f"member {name!r} would escape the upload folder")
    return target


def _copy_limited(source: BinaryIO, target: Path, budget: list[int]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "wb") as out:
        while block := source.read(CHUNK):
            budget[0] -= len(block)
            if budget[0] < 0:
                raise ArchiveError("archive unpacks to more than the size limit")
            out.write(block)


def unpack_archive(archive: Path, dest: Path, *, max_bytes: int, max_files: int = 500_000) -> Path:
    """Unpack ``archive`` into the new folder ``dest`` and return the folder to ingest.

    Raises ArchiveError (and removes ``dest``) for links, devices, path escapes, too many files
    or more than ``max_bytes`` unpacked — counted while writing, so a lying header cannot pass.
    """
    dest.mkdir(parents=True, exist_ok=False)
    dest = dest.resolve()
    budget = [max_bytes]
    try:
        if zipfile.is_zipfile(archive):
            _unpack_zip(archive, dest, budget, max_files)
        elif tarfile.is_tarfile(archive):
            _unpack_tar(archive, dest, budget, max_files)
        else:
            raise ArchiveError("not a .zip or .tar.gz archive")
    except (ArchiveError, OSError, zipfile.BadZipFile, tarfile.TarError, EOFError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        if isinstance(exc, ArchiveError):
            raise
        raise ArchiveError(f"unreadable archive: {exc}") from exc
    return ingest_root_of(dest)


def _unpack_zip(archive: Path, dest: Path, budget: list[int], max_files: int) -> None:
    with zipfile.ZipFile(archive) as zf:
        members = zf.infolist()
        if len(members) > max_files:
            raise ArchiveError(f"archive holds more than {max_files} files")
        for info in members:
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise ArchiveError(f"links are refused: {info.filename!r}")
            target = _safe_member_path(dest, info.filename)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            with zf.open(info) as source:
                _copy_limited(source, target, budget)


def _unpack_tar(archive: Path, dest: Path, budget: list[int], max_files: int) -> None:
    with tarfile.open(archive, "r:*") as tf:
        count = 0
        for member in tf:
            count += 1
            if count > max_files:
                raise ArchiveError(f"archive holds more than {max_files} files")
            if member.issym() or member.islnk():
                raise ArchiveError(f"links are refused: {member.name!r}")
            if not (member.isfile() or member.isdir()):
                raise ArchiveError(f"special files are refused: {member.name!r}")
            target = _safe_member_path(dest, member.name)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            source = tf.extractfile(member)
            if source is None:
                raise ArchiveError(f"unreadable member {member.name!r}")
            with source:
                _copy_limited(source, target, budget)


def ingest_root_of(folder: Path) -> Path:
    """Step into single wrapping folders (``export/`` around ``main/``) down to what holds data."""
    current = folder
    while True:
        entries = [e for e in os.listdir(current) if not e.startswith(".")]
        only = current / entries[0] if len(entries) == 1 else None
        if only is None or not only.is_dir():
            return current
        children = set(os.listdir(only))
        if {"mmds", "refs", "state.json"} & children or any(
            c.startswith("offload-") for c in children
        ):
            return current
        current = only
