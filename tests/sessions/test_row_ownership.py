"""Rows and refs keep no database foreign keys on PostgreSQL (migrations 0005 and 0006: each was
a deferred check per row at commit, 7 % of an ingest for rows): they must still go with their
session and their agent, and the schema must be what the migrations say on each database."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection

from intake.ingest import ingest_path
from sessions.models import Agent, AgentSession, Ref, Row

pytestmark = pytest.mark.django_db


def orphans() -> int:
    return (
        Row.objects.exclude(session__in=AgentSession.objects.all()).count()
        + Row.objects.exclude(agent__in=Agent.objects.all()).count()
    )


def test_rows_go_with_a_session_that_left_the_folder_and_with_their_agent(
    fixtures_root: Path,
) -> None:
    path = fixtures_root / "fixture-a-upstream" / "main"
    ingest_path(path)
    agent = Agent.objects.get(slug="main")
    session = agent.sessions.order_by("pk").first()
    assert session is not None and Row.objects.filter(session=session).exists()
    (path / session.relpath).unlink()
    ingest_path(path)
    assert not AgentSession.objects.filter(pk=session.pk).exists()
    assert not Row.objects.filter(session_id=session.pk).exists()
    assert Row.objects.filter(agent=agent).exists()  # the other session's rows stay
    agent_pk = agent.pk
    agent.delete()
    assert not Row.objects.filter(agent_id=agent_pk).exists()
    assert orphans() == 0


def test_refs_go_with_a_file_that_left_the_folder_and_with_their_agent(
    fixtures_root: Path,
) -> None:
    path = fixtures_root / "fixture-a-upstream" / "main"
    ingest_path(path)
    agent = Agent.objects.get(slug="main")
    refs = list(Ref.objects.filter(agent=agent).order_by("name"))
    assert len(refs) >= 2
    (path / refs[0].name).unlink()
    ingest_path(path, full=True)  # a deleted ref: found by a full pass
    assert list(Ref.objects.filter(agent=agent).order_by("name")) == refs[1:]
    agent_pk = agent.pk
    agent.delete()
    assert not Ref.objects.filter(agent_id=agent_pk).exists()
    assert not Ref.objects.exclude(agent__in=Agent.objects.all()).exists()


def _checked_keys(table: str) -> list[str]:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return sorted(c["columns"][0] for c in constraints.values() if c["foreign_key"])


def test_row_and_ref_foreign_keys_are_checked_by_sqlite_only() -> None:
    postgres = connection.vendor == "postgresql"
    assert _checked_keys(Row._meta.db_table) == ([] if postgres else ["agent_id", "session_id"])
    assert _checked_keys(Ref._meta.db_table) == ([] if postgres else ["agent_id"])
