"""The ingest service: index a data root (or one agent folder) into the database, incrementally.

A file whose size and mtime are unchanged is skipped; an offload JSONL that only grew is read from
its last byte offset (checked by a hash of the prefix already read); anything else is re-read.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Func, IntegerField, Q, Sum
from django.utils import timezone

from canvases.indexing import canvas_index_file, canvas_remove_missing
from canvases.write_path import intents_recover
from memviz.broadcast import AgentDelta, broadcast_delta
from memviz.fields import NUL, nul_free
from sessions.locks import agent_locked
from sessions.memory.jsonl import JsonlChunk, file_head_hash, read_rows
from sessions.memory.layout import AgentFolder, SessionFile, discover_agents
from sessions.memory.refs import read_ref_header
from sessions.memory.row_fields import offloaded_text
from sessions.memory.state import active_mmd_file, read_registry, read_state
from sessions.models import Agent, AgentSession, Ref, Row, TrackedFile

log = logging.getLogger(__name__)

KNOWN_ROW_KEYS = frozenset(
    {
        "tool_call_id",
        "tool_call",
        "summary",
        "score",
        "node_id",
        "result_ref",
        "offloaded",
        "timestamp",
    }
)
ROW_BATCH = 5000
SETTLE_SECONDS = 0.5


@dataclass
class IngestReport:
    agents: list[str] = field(default_factory=list)
    files_read: int = 0
    files_skipped: int = 0
    rows_added: int = 0
    sessions_reread: int = 0
    refs_indexed: int = 0
    canvases_changed: int = 0
    problems: int = 0
    seconds: float = 0.0
    deltas: list[AgentDelta] = field(default_factory=list)

    def as_dict(self) -> dict:
        data = asdict(self)
        data.pop("deltas")
        return data


@dataclass
class IngestProgress:
    done: int
    total: int
    message: str


ProgressFn = Callable[[IngestProgress], None]


def agent_slug_for(folder_name: str, path: Path) -> str:
    """The stable URL slug of an agent folder.

    The folder name, unless another folder of that name is indexed already: then the name plus
    "--" and the first 6 hex digits of the SHA-1 of the folder's absolute path.
    """
    taken = Agent.objects.filter(slug=folder_name).exclude(path=str(path)).exists()
    if not taken:
        return folder_name
    return f"{folder_name}--{hashlib.sha1(str(path).encode()).hexdigest()[:6]}"


def agent_for_folder(folder: AgentFolder, root: Path) -> Agent:
    path = folder.path.resolve()
    agent = Agent.objects.filter(path=str(path)).first()
    if agent is None:
        try:
            with transaction.atomic():
                agent = Agent.objects.create(
                    slug=agent_slug_for(folder.name, path),
                    name=folder.name,
                    path=str(path),
                    root=str(root.resolve()),
                    variant=folder.variant,
                )
        except IntegrityError:  # another process indexed it first
            agent = Agent.objects.get(path=str(path))
    return agent


def ingest_path(path: Path, *, progress: ProgressFn | None = None) -> IngestReport:
    """Index every agent folder found at ``path`` (a data root or one agent folder)."""
    started = time.perf_counter()
    report = IngestReport()
    folders = discover_agents(path)
    total = sum(len(f.session_files) + len(f.mmd_files) + 2 for f in folders)
    done = 0

    def tick(message: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(IngestProgress(done=done, total=total, message=message))

    for folder in folders:
        agent = ingest_folder(folder, path, report, tick)
        report.agents.append(agent.slug)
    report.seconds = round(time.perf_counter() - started, 3)
    if progress is not None:
        progress(IngestProgress(done=total, total=total, message="done"))
    return report


def ingest_folder(
    folder: AgentFolder,
    root: Path,
    report: IngestReport,
    tick: Callable[[str], None] | None = None,
) -> Agent:
    """Ingest one agent folder in one transaction; what changed is broadcast after commit.

    Runs under the agent's write lock (`sessions.locks`), like every other write to the agent:
    two ingests (the watcher and a push, or two processes) and memviz's own edits run one after
    the other, so bytes are never read twice and an edit is never mistaken for the agent's.
    """
    agent = agent_for_folder(folder, root)
    with agent_locked(agent.pk) as agent:
        intents_recover(agent)  # a memviz change left unfinished is completed before reading
        delta = ingest_agent(agent, folder, report, tick or (lambda _m: None))
        if not delta.empty:
            report.deltas.append(delta)
            transaction.on_commit(lambda: broadcast_delta(delta))
    return agent


def ingest_agent(
    agent: Agent, folder: AgentFolder, report: IngestReport, tick: Callable[[str], None]
) -> AgentDelta:
    delta = AgentDelta(agent_pk=agent.pk, agent_slug=agent.slug)
    state = read_state(folder.state_path)
    agent.state_data = state.data
    agent.state_error = state.error or ""
    previous_active = agent.active_mmd_file
    agent.active_mmd_file = active_mmd_file(state) or ""
    if agent.active_mmd_file != previous_active and agent.ingested_at is not None:
        delta.active_canvas = agent.active_mmd_file
    entries, registry_error = read_registry(folder.registry_path, folder.path)
    agent.registry_error = registry_error or ""
    keys_by_session = {e.session_id: e.session_key for e in entries}
    tick(f"{agent.slug}: state")

    seen_sessions: set[str] = set()
    for session_file in folder.session_files:
        seen_sessions.add(session_file.session_id)
        ingest_session_file(agent, folder, session_file, keys_by_session, report, delta)
        tick(f"{agent.slug}: {session_file.path.name}")
    gone_sessions = AgentSession.objects.filter(agent=agent).exclude(session_id__in=seen_sessions)
    delta.sessions_removed = list(gone_sessions.values_list("session_id", flat=True))
    gone_sessions.delete()
    TrackedFile.objects.filter(agent=agent, kind="jsonl").exclude(
        relpath__in=[_relpath(folder, s.path) for s in folder.session_files]
    ).delete()

    delta.new_refs = refs_apply(agent, refs_scan(refs_plan(agent, folder)), report)
    tick(f"{agent.slug}: refs")

    for mmd in folder.mmd_files:
        if canvas_index_file(agent, mmd):
            report.canvases_changed += 1
            delta.canvases_changed.append(canvas_version(agent, mmd.name))
        tick(f"{agent.slug}: {mmd.name}")
    present = [m.name for m in folder.mmd_files]
    delta.canvases_removed = list(
        agent.canvases.exclude(filename__in=present).values_list("filename", flat=True)
    )
    canvas_remove_missing(agent, present)

    agent_refresh_counts(agent)
    agent.ingested_at = timezone.now()
    agent.save()
    return delta


def canvas_version(agent: Agent, filename: str) -> tuple[int, str, int]:
    canvas = agent.canvases.get(filename=filename)
    number = canvas.revisions.order_by("-number").values_list("number", flat=True).first() or 0
    return canvas.pk, filename, number


def _relpath(folder: AgentFolder, path: Path) -> str:
    return os.path.relpath(path, folder.path)


def ingest_session_file(
    agent: Agent,
    folder: AgentFolder,
    session_file: SessionFile,
    keys_by_session: dict[str, str],
    report: IngestReport,
    delta: AgentDelta | None = None,
) -> None:
    relpath = _relpath(folder, session_file.path)
    tracked = TrackedFile.objects.filter(agent=agent, relpath=relpath).first()
    st = _settled_stat(session_file.path, tracked.offset if tracked else 0)
    if st is None:
        return
    session, _ = AgentSession.objects.get_or_create(
        agent=agent,
        session_id=session_file.session_id,
        defaults={"relpath": relpath},
    )
    session.relpath = relpath
    session.session_key = keys_by_session.get(session_file.session_id, session.session_key)
    if tracked and tracked.size == st.st_size and tracked.mtime_ns == st.st_mtime_ns:
        report.files_skipped += 1
        session.save()
        return

    appended = (
        tracked is not None
        and st.st_size >= tracked.offset
        and file_head_hash(session_file.path, tracked.offset) == tracked.prefix_hash
    )
    if appended:
        assert tracked is not None
        chunk = read_rows(
            session_file.path, start_offset=tracked.offset, start_line_no=tracked.line_no
        )
        problems = [p for p in session.problems if p.get("kind") != "partial"]
        new_ids = [r.tool_call_id for r in chunk.rows]
    else:
        # A rewrite in place: rows already indexed are not news, only ids never seen before are.
        old_ids = set(Row.objects.filter(session=session).values_list("tool_call_id", flat=True))
        Row.objects.filter(session=session).delete()
        chunk = read_rows(session_file.path)
        problems = []
        new_ids = [r.tool_call_id for r in chunk.rows if r.tool_call_id not in old_ids]
        if tracked is not None:
            report.sessions_reread += 1
            if delta is not None:
                delta.sessions_reread.append(session_file.session_id)
    if delta is not None and new_ids:
        delta.new_rows.setdefault(session_file.session_id, []).extend(new_ids)
    report.files_read += 1
    rows_insert(agent, session, chunk)
    report.rows_added += len(chunk.rows)
    problems.extend(
        {
            "line_no": p.line_no,
            "offset": p.offset,
            "kind": p.kind,
            "reason": p.reason,
            "excerpt": p.excerpt,
        }
        for p in chunk.problems
    )
    if chunk.end_offset < st.st_size:
        problems.append(
            {
                "line_no": chunk.next_line_no,
                "offset": chunk.end_offset,
                "kind": "partial",
                "reason": "incomplete last line (no newline): corrupt, unless the agent is still writing it",
                "excerpt": "",
            }
        )
    report.problems += len(chunk.problems)
    session.problems = problems
    _session_refresh(session)
    if tracked is None:
        tracked = TrackedFile(agent=agent, relpath=relpath, kind="jsonl")
    tracked.size = st.st_size
    tracked.mtime_ns = st.st_mtime_ns
    tracked.offset = chunk.end_offset
    tracked.line_no = chunk.next_line_no
    tracked.prefix_hash = file_head_hash(session_file.path, chunk.end_offset)
    tracked.save()


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


def _session_refresh(session: AgentSession) -> None:
    rows = Row.objects.filter(session=session)
    session.rows_count = rows.count()
    first = rows.order_by("line_no").values_list("timestamp", flat=True).first()
    last = rows.order_by("-line_no").values_list("timestamp", flat=True).first()
    session.first_timestamp = first or ""
    session.last_timestamp = last or ""
    session.save()


def rows_insert(agent: Agent, session: AgentSession, chunk: JsonlChunk) -> None:
    """Bulk-insert rows with one executemany per batch: the ORM's per-object cost dominates at 100k."""
    if not chunk.rows:
        return
    table = Row._meta.db_table
    columns = (
        "agent_id",
        "session_id",
        "line_no",
        "offset",
        "tool_call_id",
        "normalized_id",
        "tool_call",
        "summary",
        "score",
        "node_id",
        "result_ref",
        "offloaded",
        "timestamp",
        "extra",
    )
    quoted = ", ".join(connection.ops.quote_name(c) for c in columns)
    sql = f"INSERT INTO {connection.ops.quote_name(table)} ({quoted}) VALUES ({', '.join(['%s'] * len(columns))})"
    batch: list[tuple] = []
    with connection.cursor() as cursor:
        for row in chunk.rows:
            extra = {k: v for k, v in row.data.items() if k not in KNOWN_ROW_KEYS}
            extra_json = json.dumps(extra, ensure_ascii=False)
            values = (
                agent.pk,
                session.pk,
                row.line_no,
                row.offset,
                row.tool_call_id,
                row.normalized_id,
                row.tool_call,
                row.summary,
                row.score,
                row.node_id,
                row.result_ref,
                offloaded_text(row.offloaded),
                row.timestamp,
                extra_json,
            )
            # JSON can carry NUL only as the \u0000 escape, which dumps writes back the same way.
            if "\\u0000" in extra_json or any(isinstance(v, str) and NUL in v for v in values):
                values = (*nul_free(values[:-1]), json.dumps(nul_free(extra), ensure_ascii=False))
            batch.append(values)
            if len(batch) >= ROW_BATCH:
                cursor.executemany(sql, batch)
                batch.clear()
        if batch:
            cursor.executemany(sql, batch)


def _ref_dirs(folder: AgentFolder) -> list[Path]:
    return sorted({d for d in [folder.refs_dir, *folder.refs_dirs] if d.is_dir()})


# The header of every ref variant fits well within this; the body is never read at ingest.
REF_HEAD_BYTES = 2048


@dataclass
class RefsDirScan:
    """One refs folder: what the index knew, and (after the scan) what is on disk now."""

    tracked: TrackedFile
    path: Path
    prefix: str
    mtime_ns: int
    known: dict[str, tuple[int, int]]
    seen: set[str] = field(default_factory=set)
    new: list[tuple] = field(default_factory=list)
    changed: list[tuple] = field(default_factory=list)


def refs_plan(agent: Agent, folder: AgentFolder) -> list[RefsDirScan]:
    """The refs folders to scan (database reads only).

    A refs folder whose mtime is unchanged since the last ingest gained or lost no file and is
    not scanned (refs are written once; the plugin never edits one in place later).
    """
    plan = []
    for refs_dir in _ref_dirs(folder):
        rel_dir = os.path.relpath(refs_dir, folder.path)
        try:
            dir_mtime = refs_dir.stat().st_mtime_ns
        except FileNotFoundError:
            continue
        tracked, _ = TrackedFile.objects.get_or_create(
            agent=agent, relpath=rel_dir, defaults={"kind": "refs-dir", "mtime_ns": -1}
        )
        if tracked.mtime_ns == dir_mtime:
            continue
        prefix = f"{rel_dir}/"
        known = {
            name: (size, mtime)
            for name, size, mtime in Ref.objects.filter(agent=agent, name__startswith=prefix)
            .values_list("name", "size", "mtime_ns")
            .iterator(chunk_size=ROW_BATCH)
        }
        plan.append(RefsDirScan(tracked, refs_dir, prefix, dir_mtime, known))
    return plan


def refs_scan(plan: list[RefsDirScan]) -> list[RefsDirScan]:
    """Read the header of every new or changed ref (filesystem only, no database)."""
    for scan in plan:
        with os.scandir(scan.path) as entries:
            for entry in entries:
                if entry.name.startswith(".") or not entry.name.endswith(".md"):
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
                name = scan.prefix + entry.name
                scan.seen.add(name)
                st = entry.stat(follow_symlinks=False)
                if scan.known.get(name) == (st.st_size, st.st_mtime_ns):
                    continue
                tool, call_id, timestamp = read_ref_header(entry.path, head_bytes=REF_HEAD_BYTES)
                values = (
                    st.st_size,
                    st.st_mtime_ns,
                    (tool or "")[:200],
                    (call_id or "")[:300],
                    (timestamp or "")[:64],
                )
                (scan.changed if name in scan.known else scan.new).append((name, *values))
    return plan


def refs_apply(agent: Agent, plan: list[RefsDirScan], report: IngestReport) -> list[str]:
    """Write a scan to the index (database writes only); returns the new refs' names."""
    new_names: list[str] = []
    for scan in plan:
        _refs_insert(agent, scan.new)
        for name, size, mtime_ns, tool, call_id, timestamp in scan.changed:
            Ref.objects.filter(agent=agent, name=name).update(
                size=size, mtime_ns=mtime_ns, tool=tool, call_id=call_id, timestamp=timestamp
            )
        gone = set(scan.known) - scan.seen
        if gone:
            Ref.objects.filter(agent=agent, name__in=gone).delete()
        scan.tracked.mtime_ns = scan.mtime_ns
        scan.tracked.save(update_fields=["mtime_ns"])
        report.refs_indexed += len(scan.new) + len(scan.changed)
        new_names += [item[0] for item in scan.new]
    return new_names


def _refs_insert(agent: Agent, refs: list[tuple]) -> None:
    if not refs:
        return
    columns = ("agent_id", "name", "size", "mtime_ns", "tool", "call_id", "timestamp")
    quote = connection.ops.quote_name
    sql = (
        f"INSERT INTO {quote(Ref._meta.db_table)} ({', '.join(quote(c) for c in columns)}) "
        f"VALUES ({', '.join(['%s'] * len(columns))})"
    )
    with connection.cursor() as cursor:
        for start in range(0, len(refs), ROW_BATCH):
            cursor.executemany(
                sql, [(agent.pk, *nul_free(r)) for r in refs[start : start + ROW_BATCH]]
            )


class OctetLength(Func):
    """Size in UTF-8 bytes (the compression figures compare bytes on disk, not characters)."""

    function = "OCTET_LENGTH"
    output_field = IntegerField()

    def as_sqlite(self, compiler, connection, **extra):  # type: ignore[no-untyped-def]
        return self.as_sql(compiler, connection, template="LENGTH(CAST(%(expressions)s AS BLOB))")


def agent_refresh_counts(agent: Agent) -> None:
    rows = Row.objects.filter(agent=agent)
    agg = rows.aggregate(
        n=Count("id"),
        unmapped=Count("id", filter=Q(node_id__isnull=True) | Q(node_id="wait")),
        summary_bytes=Sum(OctetLength("summary")),
    )
    agent.rows_count = agg["n"] or 0
    agent.unmapped_count = agg["unmapped"] or 0
    agent.summary_bytes = agg["summary_bytes"] or 0
    refs = Ref.objects.filter(agent=agent).aggregate(n=Count("id"), size=Sum("size"))
    agent.refs_count = refs["n"] or 0
    agent.refs_bytes = refs["size"] or 0
    canvases = agent.canvases.aggregate(n=Count("id"), size=Sum("size"))
    agent.canvases_count = canvases["n"] or 0
    agent.canvas_bytes = canvases["size"] or 0
    sessions = agent.sessions.all()
    agent.sessions_count = sessions.count()
    agent.problems_count = sum(len(s.problems) for s in sessions)


def ingest_agent_dir(agent_dir: Path, *, root: Path | None = None) -> IngestReport:
    """Re-ingest one agent folder (the watcher's and the push stream's entry point).

    ``root`` is the data root the folder belongs to (recorded for a new agent); by default its
    parent. Only what changed since the last ingest is read.
    """
    started = time.perf_counter()
    report = IngestReport()
    for folder in discover_agents(agent_dir):
        agent = ingest_folder(folder, root or agent_dir.parent, report)
        report.agents.append(agent.slug)
    report.seconds = round(time.perf_counter() - started, 3)
    return report
