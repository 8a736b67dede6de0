"""Reading just enough of a ref to diagnose it: its result size and the first error marker.

Only the head and the tail of the result are read (errors and exit codes sit at either end),
so a multi-megabyte log costs two small reads. Results are remembered per (path, size, mtime).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path
from threading import Lock

from agentfs.refs import read_ref_info, read_ref_page, split_ref
from debugging.diagnostics import RefFacts, error_line

HEAD_BYTES = 16 * 1024
TAIL_BYTES = 4 * 1024
_MEMO: OrderedDict[tuple[str, int, int], RefFacts] = OrderedDict()
_MEMO_SIZE = 200_000
_LOCK = Lock()


def scan_ref(path: Path) -> RefFacts | None:
    """Facts of the ref at ``path`` (already confined to its agent folder); None if unreadable."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (str(path), st.st_size, st.st_mtime_ns)
    with _LOCK:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            return _MEMO[key]
    try:
        facts = _read(path, st.st_size)
    except OSError:
        return None
    with _LOCK:
        _MEMO[key] = facts
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)
    return facts


def _read(path: Path, size: int) -> RefFacts:
    head = read_ref_page(path, offset=0, limit=HEAD_BYTES)
    if head.next_offset is None:
        _, result = split_ref(head.text)
        return RefFacts(error_line=error_line(result), result_chars=len(result))
    info = read_ref_info(path)
    start = info.result_offset or 0
    _, head_result = split_ref(head.text)
    tail = read_ref_page(path, offset=max(start, size - TAIL_BYTES), limit=TAIL_BYTES)
    marker = error_line(head_result) or error_line(tail.text)
    # Large results: bytes stand in for characters (only "summary longer than ref" uses it,
    # and a summary is never near 16 KB).
    return RefFacts(error_line=marker, result_chars=size - start)
