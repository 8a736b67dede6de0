"""Unpack an uploaded .zip or .tar.gz of memory folders safely: no escapes, no links, bounded size.

Refusing costs little: the members are counted (and their names and kinds checked) in a first
pass that holds one member at a time, before anything is written, so an archive of a million
empty entries is refused in the time it takes to read its headers and in constant memory.
``zipfile.ZipFile`` builds an object for every central-directory entry when it opens, so a zip's
directory is counted from the raw records first.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shutil
import stat
import struct
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO

from agentfs.layout import CANVAS_DIR, REFS_DIR, STATE_FILE
from canvases.mermaid.code_words import CodeWords, gettext_noop

CHUNK = 1 << 20
DEFAULT_MAX_FILES = 100_000
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")  # zipfile's structCentralDir: 46 bytes

# Why an archive is refused: one code each, the English words here and only here (the upload
# view translates them).
TEXTS = CodeWords(
    "intake/archive.py",
    {
        "member_name": gettext_noop("refused member name %(name)r"),
        "member_escapes": gettext_noop("member %(name)r would escape the upload folder"),
        "too_large": gettext_noop("archive unpacks to more than the size limit"),
        "not_archive": gettext_noop("not a .zip or .tar.gz archive"),
        "unreadable": gettext_noop("unreadable archive: %(error)s"),
        "no_zip_directory": gettext_noop("unreadable archive: no zip directory"),
        "bad_zip_directory": gettext_noop("unreadable archive: bad zip directory"),
        "too_many_files": gettext_noop("archive holds more than %(limit)s files"),
        "link": gettext_noop("links are refused: %(name)r"),
        "special_file": gettext_noop("special files are refused: %(name)r"),
        "unreadable_member": gettext_noop("unreadable member %(name)r"),
        "not_stored": gettext_noop("the upload could not be stored (%(error)s)"),
    },
)


class ArchiveError(ValueError):
    """The archive is refused; nothing of it is kept. Its message is the English words of its
    code (``TEXTS``); the upload page says them in the reader's language."""

    def __init__(self, code: str, **values: object) -> None:
        super().__init__(TEXTS.words(code, values))
        self.code, self.values = code, values


def _check_name(name: str) -> PurePosixPath:
    """The member's relative path; refuses absolute names, ``..`` and odd characters.

    Lexical only: nothing in ``dest`` can be a link (links are refused and ``dest`` is new), so
    no part of a member's path needs resolving on disk.
    """
    if "\x00" in name or "\\" in name:
        raise ArchiveError("member_name", name=name[:200])
    posix = PurePosixPath(name)
    if posix.is_absolute() or any(part == ".." for part in posix.parts):
        raise ArchiveError("member_escapes", name=name[:200])
    return posix


def _copy_limited(source: IO[bytes], target: Path, budget: list[int], made: set[Path]) -> None:
    if target.parent not in made:
        target.parent.mkdir(parents=True, exist_ok=True)
        made.add(target.parent)
    with open(target, "wb") as out:
        while block := source.read(CHUNK):
            budget[0] -= len(block)
            if budget[0] < 0:
                raise ArchiveError("too_large")
            out.write(block)


def unpack_archive(
    archive: Path, dest: Path, *, max_bytes: int, max_files: int = DEFAULT_MAX_FILES
) -> Path:
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
            raise ArchiveError("not_archive")
    except (
        ArchiveError,
        OSError,
        zipfile.BadZipFile,
        tarfile.TarError,
        EOFError,
        lzma.LZMAError,
    ) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        if isinstance(exc, ArchiveError):
            raise
        raise ArchiveError("unreadable", error=str(exc)) from exc
    return ingest_root_of(dest)


def _zip_central_names(archive: Path) -> Iterator[tuple[str, int]]:
    """(name, external attributes) of each central-directory record, read one at a time."""
    with open(archive, "rb") as handle:
        end = zipfile._EndRecData(handle)  # type: ignore[attr-defined]  # EOCD (zip64 aware)
        if end is None:
            raise ArchiveError("no_zip_directory")
        size = end[zipfile._ECD_SIZE]  # type: ignore[attr-defined]
        start = end[zipfile._ECD_LOCATION] - size  # type: ignore[attr-defined]  # as zipfile does
        if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:  # type: ignore[attr-defined]
            start -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator  # type: ignore[attr-defined]
        handle.seek(max(0, start))
        left = size
        while left > 0:
            head = handle.read(_CENTRAL.size)
            if len(head) < _CENTRAL.size or head[:4] != zipfile.stringCentralDir:  # type: ignore[attr-defined]
                raise ArchiveError("bad_zip_directory")
            fields = _CENTRAL.unpack(head)
            name_len, extra_len, comment_len = fields[12], fields[13], fields[14]
            name = handle.read(name_len).decode("utf-8" if fields[5] & 0x800 else "cp437")
            handle.seek(extra_len + comment_len, os.SEEK_CUR)
            left -= _CENTRAL.size + name_len + extra_len + comment_len
            yield name, fields[17]


def _unpack_zip(archive: Path, dest: Path, budget: list[int], max_files: int) -> None:
    for count, (name, external) in enumerate(_zip_central_names(archive), start=1):
        if count > max_files:
            raise ArchiveError("too_many_files", limit=max_files)
        if stat.S_ISLNK(external >> 16):
            raise ArchiveError("link", name=name[:200])
        _check_name(name)
    made: set[Path] = set()
    with zipfile.ZipFile(archive) as zf:  # at most max_files entries: its directory is bounded
        if len(zf.infolist()) > max_files:  # the directory and our count disagree: refuse
            raise ArchiveError("too_many_files", limit=max_files)
        for info in zf.infolist():
            if stat.S_ISLNK(info.external_attr >> 16):
                raise ArchiveError("link", name=info.filename[:200])
            target = dest / _check_name(info.filename)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            with zf.open(info) as source:
                _copy_limited(source, target, budget, made)


def _tar_members(tf: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The members one at a time; tarfile's own list of them is emptied as we go."""
    while (member := tf.next()) is not None:
        tf.members.clear()  # type: ignore[attr-defined]  # tarfile's undocumented list, absent from typeshed
        yield member


def _check_tar_member(member: tarfile.TarInfo) -> PurePosixPath:
    if member.issym() or member.islnk():
        raise ArchiveError("link", name=member.name[:200])
    if not (member.isfile() or member.isdir()):
        raise ArchiveError("special_file", name=member.name[:200])
    return _check_name(member.name)


def _open_decompressed(archive: Path) -> BinaryIO:
    with open(archive, "rb") as handle:
        magic = handle.read(6)
    if magic.startswith(b"\x1f\x8b"):
        return gzip.open(archive, "rb")  # type: ignore[return-value]
    if magic.startswith(b"BZh"):
        return bz2.open(archive, "rb")  # type: ignore[return-value]
    if magic.startswith(b"\xfd7zXZ\x00"):
        return lzma.open(archive, "rb")  # type: ignore[return-value]
    return open(archive, "rb")


def _tar_count_within(archive: Path, max_files: int, max_bytes: int) -> None:
    """Refuse a tar of more than ``max_files`` headers or ``max_bytes`` of declared content,
    reading only the headers (the data skipped never adds up to more than ``max_bytes``).

    tarfile spends ~60 µs a member (a seek, a TarInfo, its checks); this reads 512-byte headers
    and skips the data, 20 times faster, so counting to the limit takes a fraction of a second.
    Extended headers (pax, GNU long names) count too: the limit errs on the side of refusing.
    """
    declared = 0
    with _open_decompressed(archive) as stream:
        for _count in range(max_files + 1):
            header = stream.read(512)
            if len(header) < 512 or header.count(0) == 512:
                return  # the end of the archive
            try:
                size = tarfile.nti(header[124:136])  # type: ignore[attr-defined]
            except tarfile.HeaderError as exc:
                raise ArchiveError("unreadable", error=str(exc)) from exc
            declared += max(size, 0)
            if declared > max_bytes:
                raise ArchiveError("too_large")
            if size > 0:
                stream.seek((size + 511) // 512 * 512, os.SEEK_CUR)
    raise ArchiveError("too_many_files", limit=max_files)


def _unpack_tar(archive: Path, dest: Path, budget: list[int], max_files: int) -> None:
    _tar_count_within(archive, max_files, budget[0])  # first pass: count, write nothing
    made: set[Path] = set()
    with tarfile.open(archive, "r:*") as tf:
        for member in _tar_members(tf):
            target = dest / _check_tar_member(member)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            source = tf.extractfile(member)
            if source is None:
                raise ArchiveError("unreadable_member", name=member.name[:200])
            with source:
                _copy_limited(source, target, budget, made)


def ingest_root_of(folder: Path) -> Path:
    """Step into single wrapping folders (``export/`` around ``main/``) down to what holds data."""
    current = folder
    while True:
        entries = [e for e in os.listdir(current) if not e.startswith(".")]
        only = current / entries[0] if len(entries) == 1 else None
        if only is None or not only.is_dir():
            return current
        children = set(os.listdir(only))
        if {CANVAS_DIR, REFS_DIR, STATE_FILE} & children or any(
            c.startswith("offload-") for c in children
        ):
            return current
        current = only
