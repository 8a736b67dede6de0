"""The refs index: which ref files an agent folder holds, with their header fields.

Bodies stay on disk (unless ``MEMVIZ_INDEX_REF_TEXT``). Two ways to learn what changed:

* ``refs_named``, the live path: the refs that new rows point at (``result_ref``) and that the
  watcher saw written; a stat and a header read each, whatever the size of the folder.
* ``refs_full_scan``: lists a refs folder whose mtime or size moved since its last full scan
  and checks the names against the index's (no stat per indexed ref: refs are written once),
  catching what the live path cannot know of: refs written without a row, and refs deleted.
  It runs on a full pass (every MEMVIZ_FULL_CHECK_SECONDS per agent, or ``manage.py ingest
  --full``); an unchanged folder costs one stat.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import connection

from agentfs.layout import AgentFolder, is_ignored_name
from agentfs.paths import open_regular
from agentfs.refs import read_ref_header
from intake.copy_stream import CopyStream
from memviz.fields import nul_free
from sessions import search_index
from sessions.models import Agent, Ref, TrackedFile
from sessions.search_terms import tsvector_literal

# The header of every ref variant fits well within this; the body is not read at ingest.
REF_HEAD_BYTES = 2048
BATCH = 2000


@dataclass
class RefsChange:
    """What one pass changed: names of new refs, and the deltas of the agent's ref figures.

    ``keep_names`` False keeps counts only: a first ingest of a million refs would otherwise
    hold every name until commit, for a broadcast no page is waiting for.
    """

    new: list[str] = field(default_factory=list)
    indexed: int = 0
    count: int = 0
    size: int = 0
    keep_names: bool = True

    def add(self, other: RefsChange) -> None:
        if self.keep_names:
            self.new += other.new
        self.indexed += other.indexed
        self.count += other.count
        self.size += other.size


def ref_dirs(folder: AgentFolder) -> list[Path]:
    return sorted({d for d in [folder.refs_dir, *folder.refs_dirs] if d.is_dir()})


def ref_name_for(folder: AgentFolder, path: Path) -> str | None:
    """The index name (``refs/x.md``, or ``<session>/refs/x.md``) of a file, if it is a ref."""
    if not path.name.endswith(".md") or is_ignored_name(path.name):
        return None
    parent = os.path.abspath(path.parent)
    if parent not in {os.path.abspath(d) for d in [folder.refs_dir, *folder.refs_dirs]}:
        return None
    rel_dir = os.path.relpath(parent, os.path.abspath(folder.path))
    return f"{Path(rel_dir).as_posix()}/{path.name}"


def _read(path: Path) -> tuple[int, int, str, str, str] | None:
    """(size, mtime_ns, tool, call id, timestamp) of a regular file, or None when it is not one."""
    try:
        st = path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    tool, call_id, timestamp = read_ref_header(path, head_bytes=REF_HEAD_BYTES)
    return (
        st.st_size,
        st.st_mtime_ns,
        (tool or "")[:200],
        (call_id or "")[:300],
        (timestamp or "")[:64],
    )


def _chunks(items: list[str], size: int = BATCH) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _known(agent: Agent, names: list[str]) -> list[tuple[int, str, int, int]]:
    """(pk, name, size, mtime_ns) of the indexed refs among ``names``."""
    if connection.vendor == "postgresql":
        # one array parameter: a client-side cursor parses an IN list of 2,000 placeholders
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, name, size, mtime_ns FROM agent_sessions_ref "
                "WHERE agent_id = %s AND name = ANY(%s)",
                [agent.pk, names],
            )
            return cursor.fetchall()
    return list(
        Ref.objects.filter(agent=agent, name__in=names).values_list(
            "pk", "name", "size", "mtime_ns"
        )
    )


def refs_named(
    agent: Agent,
    folder: AgentFolder,
    names: Iterable[str],
    *,
    none_known: bool = False,
    copies: CopyStream | None = None,
) -> RefsChange:
    """Bring the index in line with the disk for these ref names only. ``none_known``: the
    caller knows none of them is indexed (the first scan of a folder), so none is looked up.
    New refs go to ``copies`` (on PostgreSQL a COPY the caller may keep open across calls;
    it is closed before any lookup)."""
    if copies is None:
        with CopyStream() as own:
            return refs_named(agent, folder, names, none_known=none_known, copies=own)
    change = RefsChange()
    for chunk in _chunks(sorted(set(names))):
        if none_known:
            known = {}
        else:
            copies.close()
            known = {name: (pk, size, mtime) for pk, name, size, mtime in _known(agent, chunk)}
        new, changed, gone = [], [], []
        for name in chunk:
            entry = known.get(name)
            path = folder.path / name
            if entry is not None:
                try:
                    st = path.lstat()
                    if (st.st_size, st.st_mtime_ns) == entry[1:]:
                        continue
                except (FileNotFoundError, NotADirectoryError):
                    pass
            found = _read(path)
            if found is None:
                if entry is not None:
                    gone.append((entry[0], entry[1]))
            elif entry is None:
                new.append((name, *found))
            else:
                changed.append((entry[0], entry[1], name, *found))
        change.add(_apply(agent, folder, new, changed, gone, copies))
    return change


def refs_full_scan(agent: Agent, folder: AgentFolder, *, keep_names: bool = True) -> RefsChange:
    """List every refs folder that changed since its last full scan (see the module doc).

    A folder whose mtime and size are those of its last scan gained or lost no file: it is
    neither listed nor are its files statted, so an unchanged re-ingest costs the same at any
    number of refs.
    """
    change = RefsChange(keep_names=keep_names)
    tracked_by_rel = {
        t.relpath: t for t in TrackedFile.objects.filter(agent=agent, kind="refs-dir")
    }
    for refs_dir in ref_dirs(folder):
        rel_dir = os.path.relpath(refs_dir, folder.path)
        try:
            st = refs_dir.stat()
        except FileNotFoundError:
            continue
        tracked = tracked_by_rel.get(rel_dir) or TrackedFile(
            agent=agent, relpath=rel_dir, kind="refs-dir", mtime_ns=-1
        )
        if (tracked.mtime_ns, tracked.size) == (st.st_mtime_ns, st.st_size):
            continue
        prefix = f"{Path(rel_dir).as_posix()}/"
        change.add(_scan_dir(agent, folder, refs_dir, prefix, keep_names))
        # Timestamps come from a coarse clock (a jiffy; a second or two on some filesystems):
        # a ref added after the listing within the same tick leaves the mtime as it was. A
        # folder changed that recently is listed again next time instead of trusted.
        racy = time.time_ns() - st.st_mtime_ns < RACY_SECONDS * 1e9
        tracked.mtime_ns = -1 if racy else st.st_mtime_ns
        tracked.size = st.st_size
        tracked.save()
    return change


# How recent a folder's mtime may be for a scan of it to be trusted (see refs_full_scan).
RACY_SECONDS = 2.0


def _scan_dir(
    agent: Agent, folder: AgentFolder, refs_dir: Path, prefix: str, keep_names: bool
) -> RefsChange:
    """Index the refs a changed folder gained and drop those it lost.

    Refs are written once (spec §3: the plugin never rewrites one), so a name already indexed
    is not statted again: a folder scan costs one listing and one pass over the index's names,
    not a stat and a lookup per ref. A ref rewritten in place anyway is re-read when the
    watcher names it (``refs_named``).
    """
    # A folder none of whose refs is indexed yet (a first ingest) needs no lookups: the listing
    # names each file once, and the agent's lock keeps other writers out. It is indexed a batch
    # at a time as it is listed, so a first scan of a million refs holds no list of them.
    if not Ref.objects.filter(agent=agent, name__startswith=prefix).exists():
        with CopyStream() as copies:
            return _first_scan(agent, folder, refs_dir, prefix, keep_names, copies)
    # Names only (the types of new files are checked when they are read: ``_read``), and the
    # index's names as plain tuples from the (agent, name) index alone: a changed folder of
    # 250k refs costs a fraction of a second.
    listed = {prefix + n for n in os.listdir(refs_dir) if n.endswith(".md") and n[0] != "."}
    indexed = Ref.objects.filter(agent=agent, name__startswith=prefix).order_by()
    sql, params = indexed.values_list("name").query.sql_with_params()
    missing = []
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        while chunk := cursor.fetchmany(BATCH):
            for (name,) in chunk:
                if name in listed:
                    listed.discard(name)  # what is left once the index is read: the new refs
                elif not os.path.lexists(folder.path / name):
                    missing.append(name)
    gone = [(pk, size) for part in _chunks(missing) for pk, _n, size, _m in _known(agent, part)]
    change = RefsChange(keep_names=keep_names)
    with CopyStream() as copies:
        change.add(_apply(agent, folder, [], [], gone, copies))
        change.add(refs_named(agent, folder, listed, none_known=True, copies=copies))
    return change


def _ref_names(refs_dir: Path) -> Iterator[str]:
    """The names of the ref files in a folder (the listing's file types: no stat per file)."""
    with os.scandir(refs_dir) as entries:
        for entry in entries:
            if entry.name.startswith(".") or not entry.name.endswith(".md"):
                continue
            if entry.is_file(follow_symlinks=False):
                yield entry.name


def _first_scan(
    agent: Agent,
    folder: AgentFolder,
    refs_dir: Path,
    prefix: str,
    keep_names: bool,
    copies: CopyStream,
) -> RefsChange:
    change = RefsChange(keep_names=keep_names)
    batch: list[str] = []
    for name in _ref_names(refs_dir):
        batch.append(prefix + name)
        if len(batch) >= BATCH:
            change.add(refs_named(agent, folder, batch, none_known=True, copies=copies))
            batch = []
    change.add(refs_named(agent, folder, batch, none_known=True, copies=copies))
    return change


def _ref_text(base: Path, name: str) -> str:
    try:
        with open_regular(base / name, folders=len(Path(name).parts)) as handle:
            data = handle.read(settings.MEMVIZ_INDEX_REF_TEXT_BYTES)
    except OSError:  # gone, or refused (a link or FIFO swapped in): no text to search
        return ""
    return nul_free(data.decode("utf-8", errors="replace"))


def _apply(
    agent: Agent,
    folder: AgentFolder,
    new: list[tuple],
    changed: list[tuple],
    gone: list[tuple[int, int]],
    copies: CopyStream,
) -> RefsChange:
    """Write one batch to the index; returns its contribution to the agent's figures. New
    refs go to ``copies`` on PostgreSQL; anything else closes it first."""
    change = RefsChange(new=[item[0] for item in new], indexed=len(new) + len(changed))
    change.count = len(new) - len(gone)
    change.size = sum(item[1] for item in new) - sum(size for _pk, size in gone)
    with_text = settings.MEMVIZ_INDEX_REF_TEXT
    if gone or changed:
        copies.close()
    if gone:
        pks = [pk for pk, _size in gone]
        search_index.refs_unindex(pks)
        Ref.objects.filter(pk__in=pks).delete()
    for pk, old_size, _name, size, mtime_ns, tool, call_id, timestamp in changed:
        Ref.objects.filter(pk=pk).update(
            size=size, mtime_ns=mtime_ns, tool=tool, call_id=call_id, timestamp=timestamp
        )
        change.size += size - old_size
    if with_text and changed:
        search_index.refs_unindex([item[0] for item in changed])
        search_index.refs_index([(item[0], _ref_text(folder.path, item[2])) for item in changed])
    if new:
        _insert(agent, folder, new, with_text, copies)
    return change


def _insert(
    agent: Agent, folder: AgentFolder, refs: list[tuple], with_text: bool, copies: CopyStream
) -> None:
    """Insert new refs, one statement per batch (PostgreSQL: rows of the open COPY), texts
    indexed if asked."""
    columns = ["agent_id", "name", "size", "mtime_ns", "tool", "call_id", "timestamp"]
    values = [(agent.pk, *nul_free(r)) for r in refs]
    quote = connection.ops.quote_name
    table = quote(Ref._meta.db_table)
    if connection.vendor == "postgresql":
        if with_text:
            columns.append("search")
            values = [
                (*v, tsvector_literal(_ref_text(folder.path, r[0])))
                for v, r in zip(values, refs, strict=True)
            ]
        copies.write_rows(f"COPY {table} ({', '.join(columns)}) FROM STDIN", values)
        return
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {table} ({', '.join(quote(c) for c in columns)}) "
            f"VALUES ({', '.join(['%s'] * len(columns))})",
            values,
        )
        if not with_text:
            return
        # AUTOINCREMENT ids of one executemany under the write lock are consecutive.
        cursor.execute("SELECT last_insert_rowid()")
        (last,) = cursor.fetchone()
    first = last - len(refs) + 1
    search_index.refs_index(
        [(first + i, _ref_text(folder.path, r[0])) for i, r in enumerate(refs)]
    )
