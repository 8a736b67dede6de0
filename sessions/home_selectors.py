"""The home page's reads: the agents' list, the newest jobs, and the one shape of a job (its
page, the home page and their JSON)."""

from __future__ import annotations

from typing import Any, TypedDict

from django.conf import settings
from django.utils.translation import gettext as _

from sessions import counters
from sessions.job_board import job_is_stale, job_live
from sessions.job_words import ReportLine, job_message, report_lines, status_words
from sessions.models import Agent, IngestJob
from sessions.page_types import AgentSummary
from sessions.selectors import agent_summary


class JobItem(TypedDict):
    """An ingest job as its page, the home page and their JSON show it."""

    id: int
    path: str
    status: str
    status_words: str  # the status in the reader's language
    done: int  # rows read
    total: int  # rows estimated (exact once finished)
    percent: int
    progress: str
    message: str  # in the reader's language
    message_code: str  # sessions/job_words.py; "" for a progress note or an error's text
    report: dict[str, Any]
    report_lines: list[ReportLine]  # the report as the job page lists it
    attempts: int
    stale: bool
    finished: bool


class HomePage(TypedDict):
    """The home page's context, and its JSON."""

    agents: list[AgentSummary]
    data_root: str
    jobs: list[JobItem]  # the newest five, running or not: a first ingest shows its progress


def agents_list() -> list[AgentSummary]:
    unplaced = counters.unplaced_counts_all()
    return [agent_summary(a, unplaced.get(a.pk, counters.Unplaced())) for a in Agent.objects.all()]


def home_page() -> HomePage:
    return {
        "agents": agents_list(),
        "data_root": str(settings.MEMVIZ_DATA_ROOT),
        "jobs": [job_item(job) for job in IngestJob.objects.all()[:5]],
    }


def job_item(job: IngestJob) -> JobItem:
    job = job_live(job)  # SQLite: the figures its beat could not write yet
    return {
        "id": job.pk,
        "path": job.path,
        "status": job.status,
        "status_words": status_words(job.status),
        "done": job.done,
        "total": job.total,
        "percent": job.percent,
        "progress": _job_progress(job),
        "message": job_message(job),
        "message_code": job.message_code,
        "report": job.report,
        "report_lines": report_lines(job.report),
        "attempts": job.attempts,
        "stale": job_is_stale(job),
        "finished": job.finished,
    }


def _job_progress(job: IngestJob) -> str:
    figures = {"percent": job.percent, "done": f"{job.done:,}", "total": f"{job.total:,}"}
    if job.finished:
        return _("%(percent)d %%, %(done)s of %(total)s rows") % figures
    return _("indexing %(percent)d %%, %(done)s of %(total)s rows") % figures


