"""Follow a data root with watchfiles and re-ingest each agent folder that changed.

A burst of file events (the plugin's backfill rewrites every offload file of an agent) is
collected until ``MEMVIZ_WATCH_STEP_MS`` of quiet, then each touched agent folder is ingested
once, incrementally; the ingest broadcasts what changed after its commit.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections, connection

from agentfs.layout import AGENT_SUBDIRS, is_agent_folder, is_ignored_name
from intake.ingest import IngestReport, ingest_agent_dir, ingest_path

log = logging.getLogger(__name__)
# watchfiles logs every batch at INFO ("1 change detected"); our own line says more.
logging.getLogger("watchfiles.main").setLevel(logging.WARNING)


def _interesting(path: str) -> bool:
    return not is_ignored_name(Path(path).name)


def changed_agent_dirs(root: Path, paths: Iterable[str]) -> tuple[set[Path], bool]:
    """The agent folders under ``root`` touched by ``paths``; True when a full pass is needed.

    A full (still incremental) pass covers the layouts where agent folders are not the direct
    children of the root (the Go port's scopes, the server store) and a watched agent folder.
    """
    dirs: set[Path] = set()
    full = False
    for raw in paths:
        path = Path(raw)
        try:
            rel = path.relative_to(root)
        except ValueError:
            continue
        if not rel.parts or len(rel.parts) == 1 and not path.is_dir():
            # a file directly in the root: the root is an agent folder, or a legacy root log
            full = full or is_agent_folder(root)
            continue
        first = rel.parts[0]
        if first in AGENT_SUBDIRS:
            full = True
            continue
        candidate = root / first
        if is_agent_folder(candidate):
            dirs.add(candidate)
        else:
            full = True
    return dirs, full


def lower_thread_priority(steps: int) -> int | None:
    """Run the calling thread ``steps`` nice levels below where it was; its new nice value.

    Linux schedules threads on their own (``setpriority`` on a thread id touches that thread
    only), so the watcher thread of ``manage.py run`` yields to the page-serving threads of the
    same process. Elsewhere, or when the call is refused, nothing changes (None).
    """
    if steps <= 0 or not sys.platform.startswith("linux"):
        return None
    tid = threading.get_native_id()
    try:
        current = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, current + steps))
        return os.getpriority(os.PRIO_PROCESS, tid)
    except OSError:
        return None


class Watcher:
    """Ingests what the file events name; what a database outage kept it from ingesting is
    kept and ingested again once the database answers (a batch is never dropped for that)."""

    def __init__(self, root: Path, *, stdout: IO[str] | Any | None = None) -> None:
        self.root = Path(root).resolve()
        self.stdout = stdout
        self.batches = 0
        self.ready = threading.Event()
        self.missed: set[str] = set()  # changed paths not ingested yet
        self.full_pending = False  # a whole (incremental) pass of the root is owed
        self.failures = 0
        self.retry_at = 0.0

    def ingest_changes(self, paths: Iterable[str]) -> IngestReport | None:
        paths = [p for p in paths if _interesting(p)]
        if not paths:
            return None
        dirs, full = changed_agent_dirs(self.root, paths)
        close_old_connections()
        # The events name what changed: ingest checks those cheaply instead of whole folders.
        if full:
            report = ingest_path(self.root, changed=paths)
        else:
            report = IngestReport()
            for agent_dir in sorted(dirs):
                part = ingest_agent_dir(agent_dir, root=self.root, changed=paths)
                report.agents += part.agents
                report.rows_added += part.rows_added
                report.canvases_changed += part.canvases_changed
                report.refs_indexed += part.refs_indexed
                report.sessions_reread += part.sessions_reread
                report.deltas += part.deltas
        self.batches += 1
        if self.stdout is not None and (report.rows_added or report.canvases_changed):
            self.stdout.write(
                f"{', '.join(report.agents)}: +{report.rows_added} rows, "
                f"{report.canvases_changed} canvases, {report.refs_indexed} refs, "
                f"{report.sessions_reread} re-read"
            )
        return report

    def run(self, stop_event: Any = None) -> None:
        from watchfiles import watch

        from intake.jobs import job_run_here

        lower_thread_priority(settings.MEMVIZ_WATCH_NICE)
        # Catch up first: anything written before the watch started is read once, here, as a
        # job (its progress shows on the home page: the first ingest of a large root takes
        # minutes); and once more at the first idle tick, which closes the gap before the
        # watch was set up.
        self.full_pending = True
        self._flush(first=lambda: job_run_here(self.root))
        for changes in watch(
            self.root,
            step=settings.MEMVIZ_WATCH_STEP_MS,
            debounce=settings.MEMVIZ_WATCH_DEBOUNCE_MS,
            rust_timeout=300,
            yield_on_timeout=True,
            stop_event=stop_event,
            raise_interrupt=False,
            watch_filter=lambda _change, path: _interesting(path),
        ):
            self.missed.update(p for _c, p in changes if _interesting(p))
            if not changes and not self.ready.is_set():
                self.full_pending = True
                self._flush()
                self.ready.set()
                continue
            self._flush()

    def _flush(self, first: Any = None) -> None:
        """Ingest what is owed. A database error keeps it all for a later tick (with a growing
        pause): the outage ends and the same paths are ingested then. Any other error drops
        the batch after three tries (a file that breaks ingest must not stall the watcher)."""
        if not (self.full_pending or self.missed) or time.monotonic() < self.retry_at:
            return
        taken = set(self.missed)
        try:
            close_old_connections()
            if self.full_pending:
                (first or (lambda: ingest_path(self.root)))()
                self.full_pending = False
            elif taken:
                self.ingest_changes(sorted(taken))
        except Exception as exc:  # noqa: BLE001 - the watcher must outlive one bad pass
            self.failures += 1
            outage = isinstance(exc, (OperationalError, InterfaceError))
            log.log(
                logging.WARNING if self.failures == 1 else logging.DEBUG,
                "watch: ingest failed (attempt %d)%s",
                self.failures,
                "; kept for when the database is back" if outage else "",
                exc_info=True,
            )
            close_old_connections()
            if outage or self.failures < 3:
                self.retry_at = time.monotonic() + min(5.0, 0.2 * 2**self.failures)
                return
            self.full_pending = False  # a file that breaks ingest: give up on this batch
        else:
            if self.failures:
                log.warning("watch: ingest works again after %d failed attempts", self.failures)
        self.missed -= taken
        self.failures = 0
        self.retry_at = 0.0


class EitherEvent:
    """Set when either event is: watchfiles stops on the caller's stop or on a lost election."""

    def __init__(self, a: threading.Event, b: threading.Event) -> None:
        self.a, self.b = a, b

    def is_set(self) -> bool:
        return self.a.is_set() or self.b.is_set()


WATCH_LOCK = "watcher"
ELECTION_POLL_S = 1.0  # how often a standby asks for the lock, and the holder checks it


def watch_elected(
    path: Path,
    *,
    stdout: IO[str] | Any | None = None,
    stop_event: threading.Event | None = None,
    watcher: Watcher | None = None,
) -> None:
    """Watch ``path`` while this process holds the watch lock; otherwise stand by and take
    over within about a second of the holder's death. Any number of processes may run this:
    exactly one watches (on PostgreSQL across machines, on SQLite on this machine)."""
    from memviz.process_lock import Contender

    stop = stop_event or threading.Event()
    watcher = watcher or Watcher(path, stdout=stdout)
    contender = Contender(WATCH_LOCK)
    waiting_said = False
    while not stop.is_set():
        try:
            held = contender.attempt()
        except Exception:  # noqa: BLE001 - the database is down: ask again after it
            log.debug("watch: election failed", exc_info=True)
            stop.wait(ELECTION_POLL_S)
            continue
        if held is None:
            if stdout is not None and not waiting_said:
                stdout.write(f"another process watches {path}; standing by")
                waiting_said = True
            stop.wait(ELECTION_POLL_S)
            continue
        lost = threading.Event()
        keeper = threading.Thread(
            target=_keep, args=(held, stop, lost), name="memviz-watch-lock", daemon=True
        )
        keeper.start()
        try:
            if stdout is not None:
                stdout.write(f"watching {path} (Ctrl-C to stop)")
            watcher.run(EitherEvent(stop, lost))
        finally:
            lost.set()
            keeper.join(timeout=5)
            held.release()
            connection.close()
        waiting_said = False
    contender.close()


def _keep(held: Any, stop: threading.Event, lost: threading.Event) -> None:
    """Set ``lost`` when the lock's connection dies (a database restart frees the lock)."""
    while not (stop.wait(ELECTION_POLL_S) or lost.is_set()):
        if not held.alive():
            log.warning("watch: lost the watch lock (database connection gone); re-electing")
            lost.set()


def watch_forever(
    path: Path,
    *,
    stdout: IO[str] | Any | None = None,
    stop_event: threading.Event | None = None,
    watcher: Watcher | None = None,
) -> None:
    try:
        watch_elected(path, stdout=stdout, stop_event=stop_event, watcher=watcher)
    finally:
        connection.close()


def start_watch_thread(
    path: Path, *, stdout: IO[str] | Any | None = None
) -> tuple[Watcher, threading.Thread, threading.Event]:
    """Run the (elected) watcher in a daemon thread; returns (watcher, thread, stop_event)."""
    stop = threading.Event()
    watcher = Watcher(Path(path), stdout=stdout)
    thread = threading.Thread(
        target=watch_forever,
        args=(Path(path),),
        kwargs={"stdout": stdout, "stop_event": stop, "watcher": watcher},
        name="memviz-watch",
        daemon=True,
    )
    thread.start()
    return watcher, thread, stop
