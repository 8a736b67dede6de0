"""``manage.py run``: the embedded default — migrate, a Celery worker, the watcher, the server.

Everything runs on this machine with no external server: SQLite, the filesystem Celery broker and
an in-memory Channels layer (Redis and PostgreSQL take over when REDIS_URL / DATABASE_URL are set).
Without Redis the watcher runs as a thread of the web server process, so its broadcasts reach the
browsers connected to it; with Redis it runs as ``manage.py watch`` in its own process.

The server listens at once: the first ingest of the data root is the watcher's catch-up pass,
run as a job in the background (its progress shows on the home page). Any number of ``run``s may
share a database (docs/deploy.md): ``migrate`` runs under a lock, and only one watcher watches
(elected, intake/watch.py); the others stand by and one takes over when it dies.

Who may read is decided here, from the address actually bound: anonymous viewing only on loopback.
A worker (or watcher process) that dies is started again, so queued uploads do not wait for a
restart; the new worker re-queues the job the dead one was running (intake/jobs.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from memviz.local_state import anonymous_view_allowed, cookie_names
from memviz.parent_guard import child_env
from memviz.process_lock import lock_held
from memviz.public_errors import public_message

RESTART_DELAYS = (0.5, 1.0, 2.0, 5.0, 10.0)  # a child that keeps dying is restarted more slowly


def celery_worker_command(
    *, concurrency: int = 0, name: str = "", loglevel: str = "WARNING"
) -> list[str]:
    """A Celery worker: by default the one of the embedded default (one process, solo pool:
    the filesystem broker serves one); `make worker` asks for a pool and a name."""
    pool = [f"--concurrency={concurrency}"] if concurrency else ["--pool=solo", "--concurrency=1"]
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "memviz",
        "--quiet",  # no banner: the console shows the URL and errors
        "worker",
        *pool,
        f"--loglevel={loglevel}",
        *(["-n", f"{name}@%h"] if name else []),
    ]


class Supervisor:
    """Child processes kept running: one that exits is started again until ``stop``."""

    def __init__(self, stdout: Any, poll: float = 0.5) -> None:
        self.stdout = stdout
        self.poll = poll
        self.children: dict[str, subprocess.Popen] = {}
        self.commands: dict[str, list[str]] = {}
        self.restarts: dict[str, int] = {}
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._watch, name="memviz-supervisor", daemon=True)

    def start(self, name: str, command: list[str]) -> None:
        with self.lock:
            self.commands[name] = command
            self.children[name] = subprocess.Popen(command, cwd=settings.BASE_DIR, env=child_env())
        if not self.thread.is_alive():
            self.thread.start()

    def _watch(self) -> None:
        while not self.stopping.wait(self.poll):
            for name, child in list(self.children.items()):
                code = child.poll()
                if code is None or self.stopping.is_set():
                    continue
                count = self.restarts.get(name, 0)
                delay = RESTART_DELAYS[min(count, len(RESTART_DELAYS) - 1)]
                self.stdout.write(f"{name} (pid {child.pid}) exited with {code}; restarting")
                if self.stopping.wait(delay):
                    return
                with self.lock:
                    self.children[name] = subprocess.Popen(
                        self.commands[name], cwd=settings.BASE_DIR, env=child_env()
                    )
                    self.restarts[name] = count + 1

    def stop(self) -> None:
        self.stopping.set()
        with self.lock:
            children = list(self.children.values())
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()


class Command(BaseCommand):
    help = "Start memviz: migrate, ingest the data root, start a Celery worker and the web server."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=settings.BIND_HOST)
        parser.add_argument("--port", type=int, default=int(os.environ.get("MEMVIZ_PORT", 8000)))
        parser.add_argument("--no-worker", action="store_true", help="do not start a Celery worker")
        parser.add_argument("--no-watch", action="store_true", help="do not follow the data root")
        parser.add_argument(
            "--access-log", action="store_true", help="print every request (and websocket)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        host = options["host"]
        self.expose(host)
        if settings.MEMVIZ_KEY_MAY_DIFFER:
            self.stderr.write(
                "PostgreSQL without MEMVIZ_SECRET_KEY or MEMVIZ_SHARED_DIR: every memviz process "
                "on this database must share one secret key, or logins fail on the others "
                "(docs/deploy.md)"
            )
        # cookies of this port only: another program on this host never gets or sets them.
        # Several web processes behind one plain-HTTP address share the proxy's port's names
        # (MEMVIZ_COOKIE_PORT, docs/deploy.md); behind TLS the names carry no port.
        port = int(os.environ.get("MEMVIZ_COOKIE_PORT") or options["port"])
        settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME = cookie_names(
            port, tls=settings.MEMVIZ_BEHIND_TLS_PROXY
        )
        with lock_held("migrate"):  # several `run`s starting together migrate once
            call_command("migrate", verbosity=0)
            from canvases.write_path import intents_recover_all

            if pending := intents_recover_all():  # changes a killed process left half done
                self.stdout.write(f"finished or dropped {pending} interrupted change(s)")
        root = Path(settings.MEMVIZ_DATA_ROOT)
        supervisor = Supervisor(self.stdout)
        if not options["no_worker"]:
            supervisor.start("celery worker", celery_worker_command())
        if not options["no_watch"] and root.is_dir() and not settings.REDIS_URL:
            # The in-memory channel layer only reaches browsers of this process, so the watcher
            # runs here, in a thread; with Redis it may live in its own process.
            from intake.watch import start_watch_thread

            start_watch_thread(root, stdout=self.stdout)
        elif not options["no_watch"] and root.is_dir():
            supervisor.start("watcher", [sys.executable, "manage.py", "watch", str(root)])
        elif root.is_dir():
            threading.Thread(
                target=self.first_ingest, args=(root,), name="memviz-first-ingest", daemon=True
            ).start()
        self.stdout.write(f"memviz on http://{host}:{options['port']}/")
        try:
            from daphne.cli import CommandLineInterface

            # Verbosity 0: warnings and errors only, no line per request unless asked for.
            quiet = ["-v", "0"] + (["--access-log", "-"] if options["access_log"] else [])
            CommandLineInterface().run(
                [*quiet, "-b", host, "-p", str(options["port"]), "memviz.asgi:application"]
            )
        finally:
            supervisor.stop()

    def first_ingest(self, root: Path) -> None:
        """Without a watcher: the data root ingested once, as a job, while pages are served."""
        from django.db import connection

        from intake.jobs import job_run_here

        try:
            job_run_here(root)
        except Exception as exc:  # noqa: BLE001 - pages serve what is indexed; retry offered
            self.stderr.write(f"first ingest failed: {public_message(exc)}")
        finally:
            connection.close()

    def expose(self, host: str) -> None:
        """Decide anonymous viewing from the address really bound, for this process and children."""
        settings.BIND_HOST = host
        os.environ["MEMVIZ_HOST"] = host
        settings.MEMVIZ_ANONYMOUS_VIEW = anonymous_view_allowed(
            host,
            published=settings.MEMVIZ_PUBLISHED,
            wanted=settings.MEMVIZ_ANONYMOUS_VIEW_WANTED,
        )
        if not settings.MEMVIZ_ANONYMOUS_VIEW:
            self.stdout.write(f"listening on {host}: viewing needs a signed-in user")
        if settings.DEBUG and not settings.MEMVIZ_ANONYMOUS_VIEW:
            self.stderr.write("MEMVIZ_DEBUG is on while memviz is reachable from other hosts")
