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
from django.db import close_old_connections, connection

from sessions.ingest import IngestReport, ingest_agent_dir, ingest_path
from sessions.memory.layout import AGENT_SUBDIRS, is_agent_folder, is_ignored_name

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
    def __init__(self, root: Path, *, stdout: IO[str] | Any | None = None) -> None:
        self.root = Path(root).resolve()
        self.stdout = stdout
        self.batches = 0
        self.ready = threading.Event()

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

    def run(self, stop_event: threading.Event | None = None) -> None:
        from watchfiles import watch

        lower_thread_priority(settings.MEMVIZ_WATCH_NICE)
        # Catch up first: anything written before the watch started is read once, here; and
        # once more at the first idle tick, which closes the gap before the watch was set up.
        self._safe(lambda: ingest_path(self.root))
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
            if not changes:
                if not self.ready.is_set():
                    self._safe(lambda: ingest_path(self.root))
                    self.ready.set()
                continue
            self._safe(lambda changes=changes: self.ingest_changes(p for _c, p in changes))

    def _safe(self, fn: Any) -> None:
        for attempt in range(3):
            try:
                fn()
                return
            except Exception:  # noqa: BLE001 - the watcher must outlive one bad pass
                log.exception("watch: ingest failed (attempt %d)", attempt + 1)
                close_old_connections()
                time.sleep(0.2)


def watch_forever(
    path: Path,
    *,
    stdout: IO[str] | Any | None = None,
    stop_event: threading.Event | None = None,
    watcher: Watcher | None = None,
) -> None:
    if stdout is not None:
        stdout.write(f"watching {path} (Ctrl-C to stop)")
    watcher = watcher or Watcher(path, stdout=stdout)
    try:
        watcher.run(stop_event)
    finally:
        connection.close()


def start_watch_thread(path: Path, *, stdout: IO[str] | Any | None = None):  # type: ignore[no-untyped-def]
    """Run the watcher in a daemon thread of this process; returns (watcher, thread, stop_event)."""
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
