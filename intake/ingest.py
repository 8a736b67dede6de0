"""The ingest service: index a data root (or one agent folder) into the database, incrementally.

A file whose size and mtime are unchanged is skipped; an offload JSONL that only grew is read from
its last byte offset (checked against what was read before); anything else is re-read. Work is
proportional to what changed: figures move by deltas, refs are found from new rows and watcher
events (``changed``), and whole prefixes are checksummed and refs folders listed only by a full
pass, every ``MEMVIZ_FULL_CHECK_SECONDS`` per agent or when asked for (see ``ingest_agent``,
intake/ref_index.py and intake/tracked.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import time
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Sum
from django.utils import timezone

from agentfs.layout import AgentFolder, discover_agents
from agentfs.paths import UnsafePath
from agentfs.refs import resolve_ref
from agentfs.state import active_mmd_file, read_registry, read_state
from canvases import reverts
from canvases.indexing import canvas_index_file, canvas_remove_missing
from canvases.write_path import intents_recover
from intake.ingest_progress import IngestProgress, ProgressFn, RowsProgress, bytes_to_read
from intake.ingest_report import IngestReport
from intake.ref_index import RefsChange, ref_name_for, refs_full_scan, refs_named
from intake.row_ingest import (
    SessionsContext,
    Tick,
    folder_relpath,
    session_rows_forget,
    sessions_context,
    sessions_ingest,
)
from memviz.broadcast import AgentDelta, broadcast_delta
from sessions import counters
from sessions.locks import agent_locked
from sessions.models import Agent, TrackedFile

log = logging.getLogger(__name__)

# The paths a caller knows changed (the watcher's events, as absolute paths): None means
# "unknown, check everything".
_changed: ContextVar[frozenset[str] | None] = ContextVar("memviz_ingest_changed", default=None)
# True: verify everything now (``manage.py ingest --full``), whenever the last full pass was.
_full: ContextVar[bool] = ContextVar("memviz_ingest_full", default=False)
# On the live path, past this many new rows a full refs scan is cheaper than per-row lookups.
LIVE_REF_LOOKUPS = 10_000


__all__ = ["IngestProgress", "ProgressFn", "ingest_agent_dir", "ingest_path"]


def agent_slug_for(folder_name: str, path: Path) -> str:
    """The stable URL slug of an agent folder.

    The folder name, unless another folder of that name is indexed already: then the name plus
    "--" and the first 6 hex digits of the SHA-1 of the folder's absolute path. An uploaded agent
    always gets the second form, so an upload can never take the bare name of an agent of the
    data root that is not indexed yet.
    """
    uploaded = path.is_relative_to(Path(settings.MEMVIZ_UPLOAD_ROOT).resolve())
    taken = Agent.objects.filter(slug=folder_name).exclude(path=str(path)).exists()
    if not taken and not uploaded:
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


def ingest_path(
    path: Path,
    *,
    progress: ProgressFn | None = None,
    changed: Iterable[str | Path] | None = None,
    full: bool = False,
) -> IngestReport:
    """Index every agent folder found at ``path`` (a data root or one agent folder).

    ``changed``: the files the caller saw change (the watcher); reads then check only those,
    cheaply. Without it every file is statted and what changed is read (see ``ingest_agent``
    for when the bytes read before are verified too; ``full``: now). ``progress`` is told the
    rows read and the rows estimated (``intake.ingest_progress``).
    """
    started = time.perf_counter()
    report = IngestReport()
    folders = discover_agents(path)
    rows = RowsProgress(progress, *bytes_to_read(folders)) if progress is not None else None
    tick = rows.tick if rows is not None else _no_tick
    full_token = _full.set(full)
    try:
        with _changed_paths(changed):
            for folder in folders:
                agent = ingest_folder(folder, path, report, tick)
                report.agents.append(agent.slug)
    finally:
        _full.reset(full_token)
    if report.rows_added >= 1000:
        statistics_refresh(report.rows_added)
    report.seconds = round(time.perf_counter() - started, 3)
    if rows is not None:
        rows.finish()
    return report


def statistics_refresh(rows_added: int) -> None:
    """PostgreSQL: once an ingest added a tenth of the rows, refresh the statistics plans are
    made from (sessions.search_postgres, and every page's joins) and vacuum the tables it
    filled, instead of waiting for autovacuum to notice.

    Every table a large ingest fills is included: without statistics the planner takes
    100,000 refs or canvas nodes for a few dozen and scans them (the status filter of search,
    the ref lookups of every row list: 10-100x slower until autovacuum ran). Without the
    vacuum, autovacuum's first pass over a freshly loaded table (visibility map, hint bits, the
    search index's pending list) ran during the first minute of page views on the same 2
    cores: PostgreSQL's p95s after a 1M-row ingest rose from 30-38 to 49-79 ms. VACUUM cannot
    run inside a transaction (an ingest called in one gets ANALYZE alone)."""
    if connection.vendor != "postgresql":
        return
    total = Agent.objects.aggregate(n=Sum("rows_count"))["n"] or 0
    if rows_added * 10 < total:
        return
    command = "ANALYZE" if connection.in_atomic_block else "VACUUM (ANALYZE)"
    with connection.cursor() as cursor:
        cursor.execute(
            f"{command} agent_sessions_row, agent_sessions_nodesearch, agent_sessions_ref, "
            "agent_sessions_noderowcount, agent_sessions_agentsession, canvases_canvas, "
            "canvases_canvasnode"
        )


@contextlib.contextmanager
def _changed_paths(changed: Iterable[str | Path] | None) -> Iterator[None]:
    token = _changed.set(
        None if changed is None else frozenset(os.path.abspath(p) for p in changed)
    )
    try:
        yield
    finally:
        _changed.reset(token)


def ingest_folder(
    folder: AgentFolder,
    root: Path,
    report: IngestReport,
    tick: Tick | None = None,
) -> Agent:
    """Ingest one agent folder in one transaction; what changed is broadcast after commit.

    Runs under the agent's write lock (`sessions.locks`), like every other write to the agent:
    two ingests (the watcher and a push, or two processes) and memviz's own edits run one after
    the other, so bytes are never read twice and an edit is never mistaken for the agent's.
    """
    agent = agent_for_folder(folder, root)
    with agent_locked(agent.pk) as agent:
        intents_recover(agent)  # a memviz change left unfinished is completed before reading
        delta = ingest_agent(agent, folder, report, tick or _no_tick)
        reverts.note(agent)  # rows a person dropped that the agent re-marked (spec §4.8.5)
        if not delta.empty:
            report.deltas.append(delta)
            transaction.on_commit(lambda: broadcast_delta(delta))
    return agent


def _no_tick(message: str, rows: int = 0, read: int = 0) -> None:
    pass


def ingest_agent(agent: Agent, folder: AgentFolder, report: IngestReport, tick: Tick) -> AgentDelta:
    """Bring the index of one agent in line with its folder.

    Three depths. The watcher's (``changed``): only the files it named. An explicit ingest: a
    stat of every file, and what changed is read; a file that grew is checked with the quick
    digest and read from where it was left (intake/tracked.py), and new refs are those new
    rows name, so one appended row costs the same at any size. A full pass, every
    ``MEMVIZ_FULL_CHECK_SECONDS`` per agent on either path (and with ``full``): the bytes read
    before are checksummed whole and changed refs folders listed, catching what nothing
    announces (a same-length rewrite far from the end, a ref written without a row or deleted).
    """
    delta = AgentDelta(agent_pk=agent.pk, agent_slug=agent.slug)
    changed = _changed.get()
    now = time.time()
    full = _full.get() or now - agent.checked_at >= settings.MEMVIZ_FULL_CHECK_SECONDS
    if full:
        changed = None  # the periodic full pass: catch what no event named
        agent.checked_at = now
    state = read_state(folder.state_path)
    agent.state_data = state.data
    agent.state_error = state.error or ""
    agent.state_problem = state.problem.as_json() if state.problem else {}
    previous_active = agent.active_mmd_file
    agent.active_mmd_file = active_mmd_file(state) or ""
    if agent.active_mmd_file != previous_active and agent.ingested_at is not None:
        delta.active_canvas = agent.active_mmd_file
    entries, registry_problem = read_registry(folder.registry_path, folder.path)
    agent.registry_error = registry_problem.reason if registry_problem else ""
    agent.registry_problem = registry_problem.as_json() if registry_problem else {}
    agent.refused_links = [refusal.as_json() for refusal in folder.refused]
    tick(f"{agent.slug}: state.json")

    # Canvases first: the rows inserted below are flagged "placed" against their nodes.
    canvases_changed = canvases_sync(agent, folder, report, delta, tick, changed)

    ctx = sessions_context(
        SessionsContext(
            agent=agent,
            folder=folder,
            keys_by_session={e.session_id: e.session_key for e in entries},
            placed=counters.PlacedLookup(agent.pk),
            live=not full,
            report=report,
            delta=delta,
            # A new agent's first rows have no page open to announce them to (and a 1M-row
            # first ingest would hold every id until commit).
            announce=agent.ingested_at is not None,
        )
    )
    sessions_ingest(ctx, [f for f in folder.session_files if _named(changed, f.path)], tick)
    seen = {s.session_id for s in folder.session_files}
    gone = [s for sid, s in ctx.sessions.items() if sid not in seen]
    for session in gone:
        delta.sessions_removed.append(session.session_id)
        session_rows_forget(session)
        session.delete()
    relpaths = {folder_relpath(folder, s.path) for s in folder.session_files}
    stale = [t.pk for rel, t in ctx.tracked.items() if rel not in relpaths and t.pk]
    if stale:
        TrackedFile.objects.filter(pk__in=stale).delete()

    refs = refs_sync(agent, folder, ctx, changed, full)
    delta.new_refs = refs.new
    report.refs_indexed += refs.indexed
    agent.refs_count += refs.count
    agent.refs_bytes += refs.size
    tick(f"{agent.slug}: refs/")

    counters.agent_totals_refresh(agent, canvases=canvases_changed)
    agent.ingested_at = timezone.now()
    agent.save()
    return delta


def _named(changed: frozenset[str] | None, path: Path) -> bool:
    """Is ``path`` to be checked: every path is without hints, only the named ones with."""
    return changed is None or os.path.abspath(path) in changed


def refs_sync(
    agent: Agent,
    folder: AgentFolder,
    ctx: SessionsContext,
    changed: frozenset[str] | None,
    full: bool,
) -> RefsChange:
    """A full pass scans the refs folders that changed (see ref_index); otherwise only the
    refs named by new rows and by the watcher's events are looked at."""
    many = sum(len(refs) for refs in ctx.result_refs.values()) > LIVE_REF_LOOKUPS
    if full or many:
        return refs_full_scan(agent, folder, keep_names=ctx.announce)
    events = changed or frozenset()
    names = {n for p in events if (n := ref_name_for(folder, Path(p))) is not None}
    for layout_dir, result_refs in ctx.result_refs.items():
        for result_ref in result_refs:
            with contextlib.suppress(UnsafePath, ValueError):
                name = ref_name_for(folder, resolve_ref(layout_dir, result_ref))
                if name is not None:
                    names.add(name)
    return refs_named(agent, folder, names)


def canvases_sync(
    agent: Agent,
    folder: AgentFolder,
    report: IngestReport,
    delta: AgentDelta,
    tick: Tick,
    changed: frozenset[str] | None,
) -> bool:
    """Index new and changed canvases (one query for all; a stat per file), drop missing ones.

    With ``changed``, only the canvases named there. Returns whether any canvas changed.
    """
    if changed is not None:
        inside = os.path.abspath(folder.path) + os.sep
        if not any(p.endswith(".mmd") and p.startswith(inside) for p in changed):
            return False  # the watcher named no canvas: none was written or deleted
    known = {
        name: (size, mtime)
        for name, size, mtime in agent.canvases.values_list("filename", "size", "mtime_ns")
    }
    before = report.canvases_changed
    for mmd in folder.mmd_files:
        if not _named(changed, mmd):
            continue
        with contextlib.suppress(FileNotFoundError):
            st = mmd.stat()
            if known.get(mmd.name) != (st.st_size, st.st_mtime_ns) and canvas_index_file(
                agent, mmd
            ):
                report.canvases_changed += 1
                delta.canvases_changed.append(canvas_version(agent, mmd.name))
        tick(f"{agent.slug}: {mmd.name}")
    missing = set(known) - {m.name for m in folder.mmd_files}
    if missing:
        delta.canvases_removed = sorted(missing)
        canvas_remove_missing(agent, sorted(missing))
    return bool(missing) or report.canvases_changed > before or agent.ingested_at is None


def canvas_version(agent: Agent, filename: str) -> tuple[int, str, int]:
    canvas = agent.canvases.get(filename=filename)
    number = canvas.revisions.order_by("-number").values_list("number", flat=True).first() or 0
    return canvas.pk, filename, number


def ingest_agent_dir(
    agent_dir: Path, *, root: Path | None = None, changed: Iterable[str | Path] | None = None
) -> IngestReport:
    """Re-ingest one agent folder (the watcher's and the push stream's entry point).

    ``root`` is the data root the folder belongs to (recorded for a new agent); by default its
    parent. Only what changed since the last ingest is read; ``changed`` as in ``ingest_path``.
    """
    started = time.perf_counter()
    report = IngestReport()
    with _changed_paths(changed):
        for folder in discover_agents(agent_dir):
            agent = ingest_folder(folder, root or agent_dir.parent, report)
            report.agents.append(agent.slug)
    report.seconds = round(time.perf_counter() - started, 3)
    return report
