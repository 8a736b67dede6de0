"""After a large ingest on PostgreSQL the tables it filled are vacuumed and analyzed by ingest
itself, so the first page views do not share the cores with autovacuum's first pass (and plan
from real statistics); a small ingest leaves that to autovacuum, and an ingest run inside a
transaction, where VACUUM cannot run, still analyzes."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from django.db import connection, transaction

from intake.ingest import ingest_path

pytestmark = pytest.mark.django_db(transaction=True)
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no VACUUM to do after an ingest (nor autovacuum to race)")


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_root", REPO / "bench/generate_root.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _maintenance() -> tuple[int, int]:
    """(manual VACUUMs, manual ANALYZEs) of the row table so far (autovacuum's not counted)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT vacuum_count, analyze_count FROM pg_stat_user_tables "
            "WHERE relname = 'agent_sessions_row'"
        )
        vacuums, analyzes = cursor.fetchone()
    return vacuums, analyzes


def test_a_large_ingest_vacuums_and_analyzes_a_small_one_does_not(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _generator().generate_root(root, 1200, agents=1, sessions_per_agent=2, ref_bytes=200)
    before = _maintenance()
    assert ingest_path(root).rows_added == 1200
    after = _maintenance()
    assert after[0] == before[0] + 1 and after[1] == before[1] + 1
    session = next(root.glob("*/offload-*.jsonl"))
    line = session.read_text().splitlines()[-1]
    with session.open("a") as handle:  # 10 rows more: far below a tenth of what is indexed
        for i in range(10):
            handle.write(line.replace('"tool_call_id":"', f'"tool_call_id":"extra{i}-') + "\n")
    assert ingest_path(root).rows_added == 10
    assert _maintenance() == after


def test_a_large_ingest_inside_a_transaction_analyzes(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _generator().generate_root(root, 1200, agents=1, sessions_per_agent=2, ref_bytes=200)
    vacuums, analyzes = _maintenance()
    with transaction.atomic():
        assert ingest_path(root).rows_added == 1200
    assert _maintenance() == (vacuums, analyzes + 1)
