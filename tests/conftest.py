"""Shared fixtures: copies of the spec's example data roots, eager Celery, markers."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

# Property tests draw the same examples on every run, so CI's verdict does not depend on luck;
# HYPOTHESIS_PROFILE=explore draws new ones (run it by hand to hunt for more cases).
hypothesis_settings.register_profile("suite", derandomize=True, database=None)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

REPO = Path(__file__).resolve().parent.parent
# The spec's three example data roots (§9), carried by the tests themselves: a clone tests itself.
FIXTURE_ROOTS = REPO / "tests" / "fixtures" / "roots"
# ../shared/fixtures, when a workplace has it beside the clone: an extra corpus, never required.
EXTRA_FIXTURE_ROOTS = REPO.parent / "shared" / "fixtures"
ARTIFACTS = REPO / "artifacts"  # screenshots of the browser tests (git-ignored)
# The browser tests' screenshots of pages worth looking at, beside the curated ones in
# docs/screenshots/ (git-ignored: a test run never rewrites a tracked file).
SCREENSHOTS = REPO / "docs" / "screenshots" / "latest"
CHROMIUM = Path("/usr/bin/chromium")  # Debian's; never a downloaded browser
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
MERMAID_JS = REPO / "static" / "vendor" / "mermaid" / "mermaid.min.js"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that touches the database, so CI can re-run them on PostgreSQL."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if item.get_closest_marker("django_db") or {"db", "transactional_db", "live_server"} & set(
            fixtures
        ):
            item.add_marker(pytest.mark.database)


@pytest.fixture
def fixtures_root(tmp_path: Path) -> Path:
    """A writable copy of tests/fixtures/roots (three data roots, spec §9)."""
    target = tmp_path / "fixtures"
    shutil.copytree(FIXTURE_ROOTS, target)
    # Old mtimes, whatever the checkout's are: a folder written in the
    # last minutes means "the agent is live" to memviz, and these example agents are not.
    long_ago = time.time() - 86_400
    for path in sorted(target.rglob("*"), reverse=True):
        path.chmod(0o755 if path.is_dir() else 0o644)
        os.utime(path, (long_ago, long_ago))
    return target


@pytest.fixture
def job_out_of_attempts(fixtures_root: Path, settings, db):
    """An ingest job a dead worker left running: silent for longer than the stall limit, on
    another host, its attempts used up (recovery fails it; retry queues it again)."""
    from datetime import timedelta

    from django.utils import timezone

    from sessions.models import IngestJob

    return IngestJob.objects.create(
        path=str(fixtures_root / "fixture-a-upstream"),
        status=IngestJob.RUNNING,
        heartbeat_at=timezone.now() - timedelta(seconds=settings.MEMVIZ_JOB_STALE_SECONDS + 5),
        worker="another-host:4242",
        attempts=settings.MEMVIZ_JOB_MAX_ATTEMPTS,
    )


def fixture_canvases() -> dict[str, Path]:
    """`<root>/<file>` → path of every example canvas: the carried roots, then any canvas of
    ../shared/fixtures whose text they do not already hold (keyed `shared:<root>/<file>`)."""
    found = {f"{p.parents[2].name}/{p.name}": p for p in sorted(FIXTURE_ROOTS.glob("*/*/mmds/*.mmd"))}
    known = {p.read_bytes() for p in found.values()}
    for path in sorted(EXTRA_FIXTURE_ROOTS.glob("*/*/mmds/*.mmd")):
        if path.read_bytes() not in known:
            found[f"shared:{path.parents[2].name}/{path.name}"] = path
    return found


@pytest.fixture(autouse=True)
def _own_journal(tmp_path: Path, settings) -> None:
    """Each test gets its own intent journal (a rolled-back test never clears its intents)."""
    settings.MEMVIZ_JOURNAL_DIR = tmp_path / "intents"


@pytest.fixture(autouse=True)
def _language_of_the_settings():
    """Each test starts in the settings' language: a request with `Accept-Language: zh-hans`
    activates Chinese in the thread that served it (the test client runs it in the test's own
    thread), and a later test in the same worker would otherwise read its messages in Chinese."""
    from django.utils import translation

    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _celery_eager():
    from memviz.celery import app

    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager = False


def require_browser() -> None:
    """Skip a browser test where chromium or the npm assets are missing; in CI that is a failure."""
    missing = [str(p) for p in (CHROMIUM, MERMAID_JS) if not p.exists()]
    if missing:
        message = f"missing {', '.join(missing)}: run `make test-deps setup`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def chromium_launch() -> dict:
    """Keyword arguments for ``playwright.chromium.launch`` (Debian's chromium, no network)."""
    require_browser()
    ARTIFACTS.mkdir(exist_ok=True)
    return {"executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS}


@pytest.fixture
def page(chromium_launch: dict):
    """A chromium tab; ``page.errors`` collects uncaught page errors."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium_launch)
        tab = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.errors = errors  # type: ignore[attr-defined]
        yield tab
        browser.close()
