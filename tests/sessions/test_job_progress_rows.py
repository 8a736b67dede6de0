"""A job's progress counts rows, and shows while one big agent is being ingested (issue 20).

The page reads "indexing 25 %, 500 of 2,000 rows" (the total estimated from the bytes still to
read) while the ingest is inside its one agent: on SQLite the ingest holds the database's only
write lock for the whole agent, so the beat's row update waited (the page showed 0 % and,
after 30 s, called the worker dead); on PostgreSQL the rows COPY is open meanwhile. Runs on
SQLite and in CI's PostgreSQL pass.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client

from intake import row_ingest
from intake.jobs import ingest_start
from sessions.models import IngestJob
from tests.debug.memory_factory import write_big_agent

pytestmark = pytest.mark.django_db(transaction=True)
ROWS = 2_000  # 8 session files of 250 rows, read in batches of 100
HOLD_AT = 500


def wait_for(condition, what: str, seconds: float = 20):
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {seconds} s")
        time.sleep(0.05)
    return value


def test_progress_in_rows_shows_while_one_agent_is_ingested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    write_big_agent(root, "big", ROWS)
    monkeypatch.setattr(row_ingest, "ROW_BATCH", 100)
    held, release = threading.Event(), threading.Event()
    inserted = 0
    real_insert = row_ingest.rows_insert

    def insert_then_hold(ctx, session, rows):
        # The ingest stops inside its agent (its transaction, and on PostgreSQL its COPY,
        # open) once HOLD_AT rows were read and reported, until the test has seen the page.
        nonlocal inserted
        if inserted >= HOLD_AT and not held.is_set():
            held.set()
            release.wait(30)
        real_insert(ctx, session, rows)
        inserted += len(rows)

    monkeypatch.setattr(row_ingest, "rows_insert", insert_then_hold)
    outcome: dict = {}

    def ingest() -> None:
        try:
            outcome["job"] = ingest_start(root)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            outcome["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=ingest, daemon=True)
    thread.start()
    client = Client()
    try:
        assert held.wait(30), "the ingest never reached its hold"
        job = wait_for(lambda: IngestJob.objects.first(), "the job row")

        def shown() -> dict | None:
            # the beat writes moved progress every 0.25 s: on a busy machine an earlier batch's
            # figure may still be the one written when the ingest reaches its hold
            data = client.get(f"/jobs/{job.pk}/?format=json").json()["job"]
            return data if data["done"] >= HOLD_AT else None

        data = wait_for(shown, "progress on the job page while the agent is ingested")
        assert data["status"] == "running" and data["done"] == HOLD_AT
        # estimated from bytes: 1,500 rows' worth left at the bytes per row seen so far
        assert ROWS * 0.9 <= data["total"] <= ROWS * 1.1, data
        assert data["percent"] == int(100 * HOLD_AT / data["total"])
        assert data["progress"] == f"indexing {data['percent']} %, 500 of {data['total']:,} rows"
        assert not data["stale"]
        page = client.get(f"/jobs/{job.pk}/").content.decode()
        assert re.search(r"indexing \d+ %, 500 of 2,\d{3} rows", page), page[:2000]
    finally:
        release.set()
        thread.join(60)
    assert not thread.is_alive() and "error" not in outcome, outcome
    done = client.get(f"/jobs/{outcome['job'].pk}/?format=json").json()["job"]
    assert (done["status"], done["done"], done["total"], done["percent"]) == (
        "done",
        ROWS,
        ROWS,
        100,
    )
    assert done["progress"] == "100 %, 2,000 of 2,000 rows"
