"""Did a file only grow since we read it up to ``offset``? Quick and full checks (no database).

The plugin appends rows, but L2 backfill and status updates rewrite a whole offload file in
place, so "it grew" is not enough: the bytes already read must be unchanged.

* ``quick_digest``: the first 4 KB and the 64 KB before ``offset`` (about 200 rows). L2 rewrites
  the rows it just claimed, near the end; any change of length anywhere before ``offset``
  shifts the bytes of that window too. Constant cost, for every ingest but a full pass.
* ``prefix_digest``: a checksum of all of ``[0, offset)``. CRC-32 and Adler-32 both extend with
  new bytes, so it is kept current by reading only what was appended, and a full pass (every
  ``MEMVIZ_FULL_CHECK_SECONDS`` per agent, or ``manage.py ingest --full``) re-reads the prefix
  once to compare.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from pathlib import Path

from agentfs.paths import LinkRefused, open_regular

HEAD = 4096
TAIL = 64 * 1024
_BLOCK = 1 << 20


def _refused() -> str:
    # A file the opener refuses (a link or FIFO swapped in) matches no stored digest, so the
    # next look re-reads it whole and meets the refusal there.
    return "refused-" + os.urandom(8).hex()


def quick_digest(path: Path, offset: int) -> str:
    try:
        handle = open_regular(path, folders=1)  # an offload file: no link or FIFO
    except LinkRefused:
        return _refused()
    with handle:
        head = handle.read(min(offset, HEAD))
        tail_start = max(len(head), offset - TAIL)
        handle.seek(tail_start)
        tail = handle.read(offset - tail_start)
    if len(head) + len(tail) < min(offset, HEAD + TAIL):
        return "short"  # the file is shorter than offset now: never equal to a stored digest
    return hashlib.sha256(head + b"|" + tail).hexdigest()


def _pack(crc: int, adler: int) -> str:
    return f"{crc:08x}{adler:08x}"


def _unpack(digest: str) -> tuple[int, int]:
    return int(digest[:8], 16), int(digest[8:16], 16)


def prefix_digest(path: Path, end: int, *, start: int = 0, base: str | None = None) -> str:
    """Checksum of ``[0, end)``: computed from ``base`` (the digest of ``[0, start)``) by
    reading only ``[start, end)``."""
    crc, adler = _unpack(base) if base else (0, 1)
    try:
        handle = open_regular(path, folders=1)  # an offload file: no link or FIFO
    except LinkRefused:
        return _refused()
    with handle:
        handle.seek(start)
        left = end - start
        while left > 0:
            block = handle.read(min(_BLOCK, left))
            if not block:
                return "short"
            crc, adler = zlib.crc32(block, crc), zlib.adler32(block, adler)
            left -= len(block)
    return _pack(crc, adler)
