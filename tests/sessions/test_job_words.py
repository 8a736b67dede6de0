"""What an ingest job says of itself is a code with its values (sessions/job_words.py): the row
keeps the English message for the ingest command and the logs, the job page reads in the
reader's language and its JSON carries the code; a progress note or an error's text is data
and reads as it is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone, translation

from intake.ingest_progress import IngestProgress
from intake.jobs import JobBeat, job_retry, jobs_recover
from sessions import job_board
from sessions.job_words import TEXTS, job_message, job_note, job_said
from sessions.models import IngestJob


def test_every_job_word_reads_in_both_languages_with_its_values() -> None:
    for code, text in TEXTS.items():
        names = re.findall(r"%\((\w+)\)s", text)
        values = {name: f"<{name}>" for name in names}
        job = IngestJob(**job_said(code, **values))
        with translation.override("en"):
            english = job_message(job)
        with translation.override("zh-hans"):
            chinese = job_message(job)
        assert english == job.message == text % values
        assert chinese != english, code
        assert all(f"<{name}>" in chinese for name in names), code


@pytest.mark.django_db
def test_a_job_failed_after_its_attempts_says_so_in_chinese_and_keeps_english(
    job_out_of_attempts: IngestJob, settings, django_user_model
) -> None:
    stuck = job_out_of_attempts
    jobs_recover()
    stuck.refresh_from_db()
    attempts = settings.MEMVIZ_JOB_MAX_ATTEMPTS
    english = f"interrupted {attempts} times (the worker died); press retry"
    assert (stuck.status, stuck.message, stuck.message_code) == (
        IngestJob.FAILED,
        english,
        "worker_died_failed",
    )
    client = Client(headers={"accept-language": "zh-hans"})
    shown = client.get(f"/jobs/{stuck.pk}/?format=json").json()["job"]
    assert shown["message_code"] == "worker_died_failed"
    assert shown["message"] != english and str(attempts) in shown["message"]
    assert shown["status_words"] != "failed"
    page = client.get(f"/jobs/{stuck.pk}/").content.decode()
    assert shown["message"] in page and shown["status_words"] in page
    assert "the worker died" not in page
    # the retry says "queued again" by its code too
    assert job_retry(stuck)
    stuck.refresh_from_db()
    assert (stuck.message, stuck.message_code) == ("queued again", "queued_again")


@pytest.mark.django_db
def test_a_progress_note_replaces_the_code_it_follows(tmp_path: Path, settings) -> None:
    """A retried job says "queued again" until its first progress note: the beat's write of
    the note, not the stale code, is what the page shows then."""
    settings.VAR_DIR = tmp_path  # the SQLite beat's progress file goes there
    job = IngestJob.objects.create(
        path="/x", status=IngestJob.RUNNING, worker="w:1", **job_said("queued_again")
    )
    beat = JobBeat(job.pk, "w:1")
    assert beat._write(IngestProgress(done=3, total=9, message="alpha: offload-s1.jsonl"))
    job.refresh_from_db()
    assert job_message(job) == "alpha: offload-s1.jsonl"
    assert (job.message_code, job.message_values) == ("", {})


@pytest.mark.django_db
def test_the_beats_file_on_sqlite_replaces_the_code_too(tmp_path: Path, settings) -> None:
    """On SQLite the beat writes its note to a file while the ingest holds the write lock;
    job_live shows that note, dropping the row's code with it."""
    if connection.vendor != "sqlite":
        pytest.skip("the beat's progress file is SQLite's (sessions/job_board.py)")
    settings.VAR_DIR = tmp_path
    job = IngestJob.objects.create(
        path="/x", status=IngestJob.RUNNING, worker="w:1", **job_said("queued_again")
    )
    path = job_board.board_path(job.pk)
    path.parent.mkdir(parents=True, exist_ok=True)
    at = timezone.now().isoformat()
    path.write_text(
        f'{{"worker": "w:1", "at": "{at}", "done": 5, "total": 9, "message": "alpha: refs/"}}'
    )
    live = job_board.job_live(job)
    with translation.override("en"):
        assert (live.done, job_message(live)) == (5, "alpha: refs/")


def test_an_error_note_has_its_paths_scrubbed(settings) -> None:
    job = IngestJob(**job_note(f"OSError: no such file: {settings.MEMVIZ_DATA_ROOT}/a/b.jsonl"))
    assert str(settings.MEMVIZ_DATA_ROOT) not in job_message(job)
    assert "<data root>" in job_message(job)


@pytest.mark.django_db
def test_a_finished_jobs_report_is_listed_in_the_readers_language() -> None:
    """The job page lists what the ingest counted, labelled in the reader's language (it
    showed the report as a Python dict)."""
    report = {"agents": ["main", "coder"], "rows_added": 9, "seconds": 0.03, "new_count": 1}
    job = IngestJob.objects.create(path="/x", status=IngestJob.DONE, report=report)
    client = Client(headers={"accept-language": "zh-hans"})
    lines = client.get(f"/jobs/{job.pk}/?format=json").json()["job"]["report_lines"]
    assert [(line["key"], line["label"], line["value"]) for line in lines] == [
        ("agents", "智能体", "main, coder"),
        ("rows_added", "新增行", "9"),
        ("seconds", "秒", "0.03"),
        ("new_count", "new_count", "1"),  # a count memviz does not know reads as it is
    ]
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "<th scope=\"row\">新增行</th><td>9</td>" in page and "{'agents'" not in page


def test_values_that_do_not_fit_the_words_read_as_the_english_kept_beside_them() -> None:
    """A row whose values no longer fit its code's words (an older memviz, a hand edit) shows
    its English message instead of failing the home and job pages."""
    job = IngestJob(message="no progress for 9 s", message_code="stalled_at", message_values={})
    assert job_message(job) == "no progress for 9 s"
