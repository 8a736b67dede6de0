"""memviz's own writes to an agent folder, recognised by what was written (not by when).

Every memviz write to a file the liveness check watches (a canvas, an offload file, state.json)
is recorded with the fingerprint of the file it produced: inode, size and mtime (an atomic rename
makes a new inode, and the agent's plain `writeFile` keeps the inode but changes size or mtime).
A file still matching its fingerprint was last written by memviz; any other file was written by
someone else since, which is what "the agent shows activity" means. Because memviz's rename
replaces the agent's own mtime, the record carries that mtime forward (`prior_mtime_ns`): a merge
that rewrote every offload file a second after the agent appended does not hide the append.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from canvases.models import OwnWrite
from sessions.models import Agent

Fingerprint = tuple[int, int, int]  # inode, size, mtime_ns


def _stat(path: Path) -> os.stat_result | None:
    with contextlib.suppress(OSError):
        return path.stat()
    return None


def relpath(agent: Agent, path: Path) -> str:
    """The key of a file of the agent folder (as written, or as the folder resolves)."""
    with contextlib.suppress(ValueError):
        return path.relative_to(agent.path).as_posix()
    with contextlib.suppress(ValueError, OSError):
        return path.resolve().relative_to(Path(agent.path).resolve()).as_posix()
    return path.as_posix()


def fingerprint(st: os.stat_result) -> Fingerprint:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def records(agent: Agent) -> dict[str, OwnWrite]:
    return {r.relpath: r for r in OwnWrite.objects.filter(agent=agent)}


def foreign_mtime(record: OwnWrite | None, st: os.stat_result) -> float | None:
    """When someone other than memviz last wrote this file (None: never, as far as we know)."""
    if record is not None and fingerprint(st) == (record.inode, record.size, record.mtime_ns):
        return record.prior_mtime_ns / 1e9 if record.prior_mtime_ns is not None else None
    return st.st_mtime


def before(agent: Agent, paths: list[Path]) -> dict[Path, int | None]:
    """Call right before memviz replaces `paths`: the agent's last write time of each."""
    known = records(agent)
    out: dict[Path, int | None] = {}
    for path in paths:
        st = _stat(path)
        if st is None:
            out[path] = None
            continue
        mtime = foreign_mtime(known.get(relpath(agent, path)), st)
        out[path] = int(mtime * 1e9) if mtime is not None else None
    return out


def record(agent: Agent, priors: dict[Path, int | None]) -> None:
    """Call right after memviz wrote `priors`' paths (under the agent's write lock)."""
    for path, prior in priors.items():
        st = _stat(path)
        if st is None:
            continue
        inode, size, mtime_ns = fingerprint(st)
        OwnWrite.objects.update_or_create(
            agent=agent,
            relpath=relpath(agent, path),
            defaults={"inode": inode, "size": size, "mtime_ns": mtime_ns, "prior_mtime_ns": prior},
        )
