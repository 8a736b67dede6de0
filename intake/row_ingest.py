"""Ingest of one agent's offload JSONLs: new rows appended to the index, or a file re-read
after a rewrite.

Each file is checked first (what was read before, sessions created, a rewrite's old rows
forgotten), then the rows of every file are streamed in batches (``RowStream``) into the row
sink (``intake.row_sink``: an executemany on SQLite, one COPY on PostgreSQL), then each
file's session and read position are recorded. Per-session figures (rows, summary bytes,
first/last timestamp) move with each batch; per-node counts move with the rows through the
database's triggers. Nothing here reads all of a session's rows.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agentfs.jsonl import ROW_FIELDS, RowStream
from agentfs.jsonl import Row as FileRow
from agentfs.layout import AgentFolder, SessionFile
from agentfs.row_fields import offloaded_text
from agentfs.wording import words
from intake.row_sink import SUMMARY, RowSink
from intake.tracked import prefix_digest, quick_digest
from memviz.fields import NUL, nul_free
from sessions import search_index
from sessions.counters import PlacedLookup
from sessions.models import Agent, AgentSession, Row, TrackedFile

if TYPE_CHECKING:
    from intake.ingest_report import IngestReport
    from memviz.broadcast import AgentDelta

KNOWN_ROW_KEYS = frozenset(ROW_FIELDS)
ROW_BATCH = 5000
SETTLE_SECONDS = 0.5
# Past this many bytes to read, the drawn node ids are read once instead of per batch.
WHOLE_LOOKUP_BYTES = 4 << 20


class Tick(Protocol):
    """Progress: a step done, or a batch of ``rows`` read, ``read`` bytes of the file further
    (after each batch, so a long file is not taken for a stalled ingest; see intake/jobs.py
    JobBeat, and intake/ingest_progress.py for the figures)."""

    def __call__(self, message: str, rows: int = 0, read: int = 0) -> None: ...


@dataclass
class SessionsContext:
    """What one agent's ingest knows before reading its session files (one query each)."""

    agent: Agent
    folder: AgentFolder
    keys_by_session: dict[str, str]
    placed: PlacedLookup
    # False on a full pass (intake/ingest.py): the bytes read before are verified whole;
    # True otherwise: the quick check (see intake/tracked.py), refs found from new rows
    live: bool
    report: IngestReport
    delta: AgentDelta
    sessions: dict[str, AgentSession] = field(default_factory=dict)
    tracked: dict[str, TrackedFile] = field(default_factory=dict)
    announce: bool = True  # collect new rows' ids for the live broadcast
    # result_ref values of new rows, by the folder they are relative to (``live`` only)
    result_refs: dict[Path, set[str]] = field(default_factory=dict)
    sink: RowSink = field(default_factory=RowSink)


def sessions_context(ctx: SessionsContext) -> SessionsContext:
    ctx.placed.before_query = ctx.sink.close
    ctx.placed.whole = not ctx.live
    ctx.sessions = {s.session_id: s for s in AgentSession.objects.filter(agent=ctx.agent)}
    ctx.tracked = {t.relpath: t for t in TrackedFile.objects.filter(agent=ctx.agent, kind="jsonl")}
    return ctx


def folder_relpath(folder: AgentFolder, path: Path) -> str:
    return os.path.relpath(path, folder.path)


def sessions_ingest(ctx: SessionsContext, files: list[SessionFile], tick: Tick) -> None:
    """Ingest the given session files: check each, stream all their rows, record each.

    The rows of every file go through one sink, so on PostgreSQL one COPY carries them all
    unless a query in between (a live append's node lookup) closes it.
    """
    reads = []
    for session_file in files:
        if (read := session_file_check(ctx, session_file)) is not None:
            reads.append(read)
        else:
            tick(f"{ctx.agent.slug}: {session_file.path.name}")
    pending = sum(read.st.st_size - read.stream.start_offset for read in reads)
    ctx.placed.whole = ctx.placed.whole or pending > WHOLE_LOOKUP_BYTES
    with ctx.sink:
        for read in reads:
            session_file_rows(ctx, read, tick)
            tick(f"{ctx.agent.slug}: {read.session_file.path.name}")
    for read in reads:
        session_file_record(ctx, read)


@dataclass
class FileRead:
    """One session file between its check and its record."""

    session_file: SessionFile
    relpath: str
    session: AgentSession
    tracked: TrackedFile
    st: os.stat_result
    stream: RowStream
    problems: list[dict]
    old_ids: set[str]  # tool_call_ids indexed before a rewrite: not news when read again
    digest_from: int
    digest_base: str


def session_file_check(ctx: SessionsContext, session_file: SessionFile) -> FileRead | None:
    """Everything before the rows: is there anything new, from which offset, for which
    session (created or updated here; a rewrite's old rows are forgotten here)."""
    folder, agent, report = ctx.folder, ctx.agent, ctx.report
    relpath = folder_relpath(folder, session_file.path)
    tracked = ctx.tracked.get(relpath)
    st = _settled_stat(session_file.path, tracked.offset if tracked else 0)
    if st is None:
        return None
    session = ctx.sessions.get(session_file.session_id)
    key = ctx.keys_by_session.get(session_file.session_id)
    if session is None:
        session = AgentSession.objects.create(
            agent=agent, session_id=session_file.session_id, relpath=relpath, session_key=key or ""
        )
        ctx.sessions[session.session_id] = session
    elif session.relpath != relpath or (key is not None and session.session_key != key):
        session.relpath = relpath
        session.session_key = key if key is not None else session.session_key
        session.save(update_fields=["relpath", "session_key"])
    if tracked and tracked.size == st.st_size and tracked.mtime_ns == st.st_mtime_ns:
        report.files_skipped += 1
        return None
    if tracked is None:
        tracked = TrackedFile(agent=agent, relpath=relpath, kind="jsonl", offset=0)
    report.files_read += 1
    path = session_file.path
    old_ids: set[str] = set()
    if tracked.pk is not None and _only_grew(path, st, tracked, ctx.live):
        stream = RowStream(
            path, start_offset=tracked.offset, start_line_no=tracked.line_no, batch_rows=ROW_BATCH
        )
        problems = [p for p in session.problems if p.get("kind") != "partial"]
        digest_from, digest_base = tracked.offset, tracked.prefix_hash
    else:
        if tracked.pk is not None:
            # A rewrite in place: rows already indexed are not news, only ids never seen before.
            old_ids = set(
                Row.objects.filter(session=session).values_list("tool_call_id", flat=True)
            )
            report.sessions_reread += 1
            ctx.delta.sessions_reread.append(session_file.session_id)
        session_rows_forget(session)
        stream = RowStream(path, batch_rows=ROW_BATCH)
        problems, digest_from, digest_base = [], 0, ""
    return FileRead(
        session_file,
        relpath,
        session,
        tracked,
        st,
        stream,
        problems,
        old_ids,
        digest_from,
        digest_base,
    )


def session_file_rows(ctx: SessionsContext, read: FileRead, tick: Tick) -> None:
    """Stream the file's new rows into the sink (no query unless the node lookup needs one)."""
    new_ids: list[str] = []
    old_ids = read.old_ids
    name = f"{ctx.agent.slug}: {read.session_file.path.name}"
    position = read.stream.start_offset
    for batch in read.stream:
        rows_insert(ctx, read.session, batch)
        ctx.report.rows_added += len(batch)
        tick(name, rows=len(batch), read=read.stream.end_offset - position)
        position = read.stream.end_offset
        if ctx.announce:
            new_ids += [r.tool_call_id for r in batch if r.tool_call_id not in old_ids]
        if ctx.live:
            refs = ctx.result_refs.setdefault(read.session_file.layout_dir, set())
            refs.update(r.result_ref for r in batch if r.result_ref)
    if new_ids:
        ctx.delta.new_rows.setdefault(read.session_file.session_id, []).extend(new_ids)


def session_file_record(ctx: SessionsContext, read: FileRead) -> None:
    """Save the session's figures and problems, and how far the file was read."""
    stream, session, tracked = read.stream, read.session, read.tracked
    problems = read.problems + [
        {
            "line_no": p.line_no,
            "offset": p.offset,
            "kind": p.kind,
            "code": p.code,
            "values": dict(p.values),
            "reason": p.reason,
            "excerpt": p.excerpt,
        }
        for p in stream.problems
    ]
    if stream.end_offset < stream.file_size:
        problems.append(
            {
                "line_no": stream.next_line_no,
                "offset": stream.end_offset,
                "kind": "partial",
                "code": "incomplete_last_line",
                "values": {},
                "reason": words("incomplete_last_line"),
                "excerpt": "",
            }
        )
    ctx.report.problems += len(stream.problems)
    session.problems = problems
    session.save(
        update_fields=[
            "problems",
            "rows_count",
            "summary_bytes",
            "first_timestamp",
            "last_timestamp",
        ]
    )
    path = read.session_file.path
    tracked.size = read.st.st_size
    tracked.mtime_ns = read.st.st_mtime_ns
    tracked.offset = stream.end_offset
    tracked.line_no = stream.next_line_no
    tracked.prefix_hash = prefix_digest(
        path, stream.end_offset, start=read.digest_from, base=read.digest_base
    )
    tracked.quick_hash = quick_digest(path, stream.end_offset)
    tracked.save()
    ctx.tracked[read.relpath] = tracked


def _only_grew(path: Path, st: os.stat_result, tracked: TrackedFile, live: bool) -> bool:
    """Are the bytes read before unchanged? The quick check on the live path, the whole
    prefix otherwise (see intake/tracked.py)."""
    if st.st_size < tracked.offset:
        return False
    if live:
        return quick_digest(path, tracked.offset) == tracked.quick_hash
    return prefix_digest(path, tracked.offset) == tracked.prefix_hash


def session_rows_forget(session: AgentSession) -> None:
    """Delete a session's rows (search entries first: they are forgotten by their text)."""
    search_index.rows_unindex_session(session.pk)
    Row.objects.filter(session=session).delete()
    session.rows_count = 0
    session.summary_bytes = 0
    session.first_timestamp = session.last_timestamp = ""


def _settled_stat(path: Path, known_offset: int) -> os.stat_result | None:
    """Stat ``path``; if it shrank below what was read, wait briefly for a rewrite to finish.

    The plugin rewrites offload files with a plain truncate-and-write: a reader in that window
    sees a short or empty file, and taking it at face value would drop rows and re-announce them.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    waited = 0.0
    while st.st_size < known_offset and waited < SETTLE_SECONDS:
        time.sleep(0.02)
        waited += 0.02
        try:
            again = path.stat()
        except FileNotFoundError:
            return None
        if (again.st_size, again.st_mtime_ns) == (st.st_size, st.st_mtime_ns) and waited >= 0.1:
            return again
        st = again
    return st


def _values(
    agent: Agent, session: AgentSession, row: FileRow, placed: PlacedLookup, offloaded: Callable
) -> tuple:
    extra = {k: v for k, v in row.data.items() if k not in KNOWN_ROW_KEYS}
    extra_json = json.dumps(extra, ensure_ascii=False)
    values = (
        agent.pk,
        session.pk,
        row.line_no,
        row.offset,
        row.normalized_id,
        row.tool_call_id,
        row.tool_call,
        row.summary,
        row.score,
        row.node_id,
        row.result_ref,
        offloaded(row.offloaded),
        row.timestamp,
        extra_json,
        row.node_id in placed,
    )
    # JSON can carry NUL only as the \u0000 escape, which dumps writes back the same way.
    if "\\u0000" in extra_json or any(isinstance(v, str) and NUL in v for v in values):
        values = (
            *nul_free(values[:-2]),
            json.dumps(nul_free(extra), ensure_ascii=False),
            values[-1],
        )
    return values


def rows_insert(ctx: SessionsContext, session: AgentSession, rows: list[FileRow]) -> None:
    """Send one batch to the sink and move the session's figures."""
    if not rows:
        return
    placed = ctx.placed
    placed.prepare(row.node_id for row in rows)
    batch = [_values(ctx.agent, session, row, placed, offloaded_text) for row in rows]
    ctx.sink.write(batch)
    if not session.rows_count:
        session.first_timestamp = rows[0].timestamp[:64]
    session.last_timestamp = rows[-1].timestamp[:64]
    session.rows_count += len(rows)
    session.summary_bytes += sum(len(values[SUMMARY].encode("utf-8")) for values in batch)
