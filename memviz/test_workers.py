"""Parallel test workers (pytest-xdist) each get their own var folder and Redis database.

Called by the settings before anything reads the environment. In a worker process of a parallel
test run it rewrites `MEMVIZ_VAR_DIR` and the Redis URLs in `os.environ`, so the worker's
settings and every process its tests start (servers, Celery workers) agree on them, and two
workers never share a SQLite file, a filesystem Celery broker or a Redis channel group. Outside
such a run it does nothing.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

REDIS_URLS = ("REDIS_URL", "MEMVIZ_TEST_REDIS_URL")


def separate_worker_state(base_dir: Path) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    match = re.fullmatch(r"gw(\d+)", worker)
    if match is None or "pytest" not in sys.modules or os.environ.get("MEMVIZ_WORKER_SPLIT") == worker:
        return
    # a second test run beside this one (the PostgreSQL pass of scripts/run_tests.sh) sets an
    # offset so that the two runs' workers never share a Redis database either
    number = int(match.group(1)) + int(os.environ.get("MEMVIZ_TEST_REDIS_DB_OFFSET", "0"))
    var = Path(os.environ.get("MEMVIZ_VAR_DIR", base_dir / "var"))
    os.environ["MEMVIZ_VAR_DIR"] = str(var / f"worker-{worker}")
    for name in REDIS_URLS:
        url = os.environ.get(name)
        if url:
            # databases 1..15 for workers gw0..gw14 (plus the offset); a URL without a database number gets one
            os.environ[name] = re.sub(r"(/\d*)?$", f"/{number + 1}", url, count=1)
    os.environ["MEMVIZ_WORKER_SPLIT"] = worker  # once: a second settings import changes nothing
