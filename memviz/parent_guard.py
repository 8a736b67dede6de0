"""A child process of ``manage.py run`` (its worker, its watcher) ends when ``run`` dies.

``run`` names itself in MEMVIZ_EXIT_WITH_PARENT; the child asks Linux for SIGTERM when its
parent dies (``PR_SET_PDEATHSIG``), elsewhere it polls its parent's pid. A ``run`` killed with
``kill -9`` then leaves no watcher holding the watch lock, nor a worker nobody supervises. The
variable is removed once read, so the child's own children (Celery's pool) do not follow it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading

PARENT_ENV = "MEMVIZ_EXIT_WITH_PARENT"
PR_SET_PDEATHSIG = 1


def child_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a child that must end with this process."""
    return {**(os.environ if env is None else env), PARENT_ENV: str(os.getpid())}


def follow_parent() -> None:
    """In a child started with ``child_env``: end when the parent ends (called at start-up)."""
    wanted = os.environ.pop(PARENT_ENV, "")
    if not wanted.isdigit():
        return
    parent = int(wanted)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    else:
        threading.Thread(target=_poll, args=(parent,), name="memviz-parent", daemon=True).start()
    if os.getppid() != parent:  # it died before we asked
        os.kill(os.getpid(), signal.SIGTERM)


def _poll(parent: int) -> None:
    while os.getppid() == parent:
        threading.Event().wait(1.0)
    os.kill(os.getpid(), signal.SIGTERM)
