"""What an ingest job says of itself: one code each, its English words here and only here.

A job row keeps the English ``message`` (the ingest command and the logs print it) beside the
code and its values; the pages translate the code (``job_message``). A progress note names an
agent and a file, and a failure is the error's own text: those are data, kept as they are
(``job_note``).
"""

from __future__ import annotations

from typing import Any, TypedDict

from django.utils.translation import pgettext, pgettext_lazy

from canvases.mermaid.code_words import CodeWords, gettext_noop
from memviz.public_errors import scrub_paths
from memviz.said import said_or
from sessions.models import IngestJob

TEXTS = CodeWords(
    "sessions/job_words.py",
    {
        "done": gettext_noop("every file read"),
        "queued_again": gettext_noop("queued again"),
        "worker_died_queued": gettext_noop("interrupted (the worker died); queued again"),
        "worker_died_failed": gettext_noop(
            "interrupted %(attempts)s times (the worker died); press retry"
        ),
        "stalled": gettext_noop("no progress for %(seconds)s s; stopped, press retry"),
        "stalled_at": gettext_noop(
            "no progress for %(seconds)s s (at: %(at)s); stopped, press retry"
        ),
    },
)


# What a finished job's report counts (intake/ingest_report.py IngestReport.as_dict()).
REPORT_LABELS = {
    "agents": pgettext_lazy("ingest report", "agents"),
    "files_read": pgettext_lazy("ingest report", "session files read"),
    "files_skipped": pgettext_lazy("ingest report", "session files unchanged"),
    "rows_added": pgettext_lazy("ingest report", "rows added"),
    "sessions_reread": pgettext_lazy("ingest report", "session files read again from the start"),
    "refs_indexed": pgettext_lazy("ingest report", "refs indexed"),
    "canvases_changed": pgettext_lazy("ingest report", "canvases changed"),
    "problems": pgettext_lazy("ingest report", "lines that are not rows"),
    "seconds": pgettext_lazy("ingest report", "seconds"),
}


class ReportLine(TypedDict):
    key: str
    label: str  # in the reader's language
    value: str


class JobSaid(TypedDict):
    """The fields of a job row that say what it is doing (an ``update()``'s keywords)."""

    message: str
    message_code: str
    message_values: dict[str, Any]


def job_said(code: str, **values: Any) -> JobSaid:
    """The row's fields that say ``code`` with ``values`` (English in ``message``)."""
    return {"message": TEXTS.words(code, values), "message_code": code, "message_values": values}


def job_note(text: str) -> JobSaid:
    """The row's fields for a free note (a progress note, an error's text): no code."""
    return {"message": text, "message_code": "", "message_values": {}}


def job_message(job: IngestJob) -> str:
    """What the job says, in the reader's language; a note reads as it is, paths scrubbed."""
    return scrub_paths(said_or(TEXTS, job.message_code, job.message_values, job.message))


def status_words(status: str) -> str:
    """A job's status as the pages name it."""
    if status == IngestJob.PENDING:
        return pgettext("ingest job", "pending")
    if status == IngestJob.RUNNING:
        return pgettext("ingest job", "running")
    if status == IngestJob.DONE:
        return pgettext("ingest job", "finished")
    if status == IngestJob.FAILED:
        return pgettext("ingest job", "failed")
    return status


def report_lines(report: dict[str, Any]) -> list[ReportLine]:
    """A finished job's report as the job page lists it, in the order of ``REPORT_LABELS``
    (PostgreSQL's jsonb keeps no key order); a key memviz does not know reads as it is, last."""
    keys = [k for k in REPORT_LABELS if k in report] + [k for k in report if k not in REPORT_LABELS]
    lines: list[ReportLine] = []
    for key in keys:
        value = report[key]
        shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        lines.append({"key": key, "label": str(REPORT_LABELS.get(key, key)), "value": shown})
    return lines
