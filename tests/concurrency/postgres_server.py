"""The PostgreSQL server the concurrency tests run against (scripts/run_tests.sh starts one)."""

from __future__ import annotations

import os

import pytest


def postgres_server_url() -> str:
    """``MEMVIZ_TEST_POSTGRES_URL``; skips the test without it, fails it in CI."""
    server = os.environ.get("MEMVIZ_TEST_POSTGRES_URL")
    if not server:
        if os.environ.get("CI"):
            pytest.fail("MEMVIZ_TEST_POSTGRES_URL is not set (scripts/run_tests.sh starts PostgreSQL)")
        pytest.skip("no PostgreSQL server (set MEMVIZ_TEST_POSTGRES_URL)")
    return server
