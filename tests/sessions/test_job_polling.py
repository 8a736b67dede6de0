"""A job's partial asks for news while the job runs and stops once it is finished (done or
failed, the model's `finished`) or stalled: the template reads the job's own rule."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from sessions.models import IngestJob

pytestmark = pytest.mark.django_db
POLL = 'hx-trigger="every 700ms"'


@pytest.mark.parametrize(
    ("status", "polls"),
    [
        (IngestJob.PENDING, True),
        (IngestJob.RUNNING, True),
        (IngestJob.DONE, False),
        (IngestJob.FAILED, False),
    ],
)
def test_the_job_partial_polls_only_while_the_job_is_unfinished(status: str, polls: bool) -> None:
    job = IngestJob.objects.create(path="/x", status=status, heartbeat_at=timezone.now())
    page = Client().get(f"/jobs/{job.pk}/").content.decode()
    assert (POLL in page) is polls
