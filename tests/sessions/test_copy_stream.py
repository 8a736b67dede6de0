"""The COPY that ingest keeps open on PostgreSQL (intake.copy_stream): what it was sent is in
the table once closed, a COPY of another statement ends the first, and an error inside the
block leaves none of its rows behind."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from intake.copy_stream import CopyStream
from sessions.models import Agent, Ref

pytestmark = pytest.mark.django_db

COLUMNS = "size, mtime_ns, tool, call_id, timestamp"
BY_AGENT = f"COPY agent_sessions_ref (agent_id, name, {COLUMNS}) FROM STDIN"
BY_NAME = f"COPY agent_sessions_ref (name, agent_id, {COLUMNS}) FROM STDIN"


@pytest.fixture(autouse=True)
def postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no COPY: ingest inserts there one statement a batch")


def _agent(slug: str) -> Agent:
    return Agent.objects.create(slug=slug, name=slug, path=f"/data/{slug}", root="/data")


def _names() -> list[str]:
    return list(Ref.objects.order_by("name").values_list("name", flat=True))


def test_rows_sent_through_two_statements_are_in_the_table_once_closed() -> None:
    a, b = _agent("a"), _agent("b")
    with CopyStream() as copies:
        copies.write_rows(BY_AGENT, [(a.pk, "refs/1.md", 1, 1, "", "", "")])
        copies.write_rows(BY_AGENT, [(a.pk, "refs/2.md", 1, 1, "", "", "")])  # the same COPY
        copies.close()  # a query needs the connection: end the COPY first
        assert _names() == ["refs/1.md", "refs/2.md"]
        copies.write_rows(BY_AGENT, [(b.pk, "refs/3.md", 1, 1, "", "", "")])
        copies.write_rows(BY_NAME, [("refs/4.md", b.pk, 1, 1, "", "", "")])  # ends the first
    assert _names() == ["refs/1.md", "refs/2.md", "refs/3.md", "refs/4.md"]
    assert Ref.objects.filter(agent=b).count() == 2


def test_an_error_inside_the_block_ends_the_copy_and_leaves_none_of_its_rows() -> None:
    agent = _agent("a")
    with (
        pytest.raises(RuntimeError, match="parse failed"),
        transaction.atomic(),
        CopyStream() as copies,
    ):
        copies.write_rows(BY_AGENT, [(agent.pk, "refs/lost.md", 1, 1, "", "", "")])
        raise RuntimeError("parse failed")
    assert _names() == []
    Ref.objects.create(agent=agent, name="refs/after.md")  # the connection is usable again
    assert _names() == ["refs/after.md"]
