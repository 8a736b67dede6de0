"""The JSON the pages answer has the shape their typed contexts declare (sessions/selectors.py):
what a script reads is what the page shows, key for key."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from intake.ingest import ingest_path
from sessions.home_selectors import HomePage, JobItem
from sessions.models import IngestJob
from sessions.selectors import AgentSummary, Compression

pytestmark = pytest.mark.django_db


def test_the_home_page_json_is_its_typed_context(fixtures_root: Path, settings) -> None:
    settings.MEMVIZ_DATA_ROOT = fixtures_root / "fixture-a-upstream"
    ingest_path(settings.MEMVIZ_DATA_ROOT)
    IngestJob.objects.create(path=str(settings.MEMVIZ_DATA_ROOT))
    home = Client().get("/?format=json").json()
    assert set(home) >= HomePage.__required_keys__
    assert home["agents"] and home["jobs"]
    for agent in home["agents"]:
        assert set(agent) == AgentSummary.__required_keys__, sorted(set(agent) ^ AgentSummary.__required_keys__)
        assert set(agent["compression"]) == Compression.__required_keys__
        assert isinstance(agent["rows"], int) and isinstance(agent["slug"], str)
    for job in home["jobs"]:
        assert set(job) == JobItem.__required_keys__, sorted(set(job) ^ JobItem.__required_keys__)


def test_a_job_page_json_is_a_job_item(settings) -> None:
    job = IngestJob.objects.create(path=str(settings.MEMVIZ_DATA_ROOT))
    answer = Client().get(f"/jobs/{job.pk}/?format=json").json()
    assert set(answer["job"]) == JobItem.__required_keys__
    assert answer["job"]["id"] == job.pk and answer["job"]["status"] == "pending"
