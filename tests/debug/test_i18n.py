"""Chinese and English UI: every marked string translated, zh-hans pages free of English UI text."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from intake.ingest import ingest_path
from sessions.models import IngestJob
from tests.conftest import REPO
from tests.debug import diagnosis_fixture as dfx
from tests.debug import replay_fixture as rfx
from tests.pages import one

# translations do not depend on the database: run once (SQLite), not again on PostgreSQL
pytestmark = pytest.mark.any_backend
CANVAS = "002-migrate-orders-api.mmd"
PO = REPO / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
_ENTRY = re.compile(
    r'(?ms)^(#, fuzzy\n)?msgid ((?:".*?"\n)+)(?:msgid_plural (?:".*?"\n)+)?msgstr(?:\[0\])? ((?:".*?"\n?)+)'
)


def _joined(quoted: str) -> str:
    return "".join(re.findall(r'"(.*)"', quoted)).replace('\\"', '"').replace("\\n", "\n")


def po_entries(path: Path) -> dict[str, tuple[str, bool]]:
    """msgid → (msgstr, fuzzy) of a .po file."""
    out = {}
    for fuzzy, msgid, msgstr in _ENTRY.findall(path.read_text("utf-8") + "\n"):
        if _joined(msgid):
            out[_joined(msgid)] = (_joined(msgstr), bool(fuzzy))
    return out


def test_every_marked_string_has_a_chinese_translation(
    tmp_path: Path, settings, monkeypatch
) -> None:
    """Re-extract the msgids from the code as it is now; list those without a translation.

    The extraction runs on a copy of the code: run in the repository, makemessages finds its
    ``locale`` folder, merges into the committed .po (rewriting it) and leaves the copy this
    test reads untouched, so a new string without a translation went unnoticed."""
    if shutil.which("xgettext") is None:
        pytest.fail("gettext is missing: `make test-deps` installs it")
    skipped = (".*", "node_modules", "vendor", "var", "tests", "artifacts", "locale", "staticfiles")
    code = tmp_path / "code"
    shutil.copytree(REPO, code, ignore=shutil.ignore_patterns(*skipped))
    target = tmp_path / "locale" / "zh_Hans" / "LC_MESSAGES"
    target.mkdir(parents=True)
    # Without its "#:" source references, so the re-extraction shows by putting them back.
    bare = "\n".join(line for line in PO.read_text("utf-8").split("\n") if not line.startswith("#:"))
    (target / "django.po").write_text(bare, "utf-8")
    settings.LOCALE_PATHS = [tmp_path / "locale"]
    monkeypatch.chdir(code)
    call_command("makemessages", locale=["zh_Hans"], verbosity=0, no_obsolete=True)
    entries = po_entries(target / "django.po")
    missing = sorted(m for m, (text, fuzzy) in entries.items() if not text or fuzzy)
    assert missing == [], f"msgids without a zh-hans translation: {missing}"
    assert len(entries) > 100
    assert "\n#: " in (target / "django.po").read_text("utf-8")  # re-extracted from the code


def english_ui_strings() -> set[str]:
    """The English msgids whose Chinese text differs: none may show on a zh-hans page."""
    return {
        re.sub(r"<[^>]+>|%\(\w+\)s", "", m).strip()
        for m, (text, _) in po_entries(PO).items()
        if text != m and len(m) > 3
    } - {""}


def english_leaks(content: bytes, english: set[str]) -> list[str]:
    """The English UI strings a zh-hans page shows (data from the memory folder left out)."""
    page = BeautifulSoup(content, "html.parser")
    assert one(page, "html")["lang"] == "zh-hans"
    # Data from the memory folder (ids, titles, summaries, session keys). The engine's findings
    # (parse problems, what the agent will read) are codes read in the reader's language: checked.
    data = (
        "script, code, pre, .evidence, td a, time, .summary, .ref > summary, .node-ref, "
        ".node-link, .node-title, td.small, td.goal, .hits li:not(.empty):not(.more)"
    )
    for el in page.select(data):
        el.decompose()
    for option in page.select("option"):
        if option.get("value", option.get_text()) == option.get_text():
            option.decompose()  # a choice among data (agent, session, node ids), echoed back
    visible = " ".join(page.get_text(" ").split())
    attrs = " ".join(
        v
        for el in page.select("[title], [placeholder], [aria-label]")
        for k in ("title", "placeholder", "aria-label")
        if isinstance(v := el.get(k), str) and v
    )
    text = re.sub(r"\b[A-Za-z]+ 键", "", f"{visible} {attrs}")  # key names: the keyboard's labels
    return sorted(s for s in english if re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", text))


def assert_chinese(client: Client, urls: list[str]) -> None:
    english = english_ui_strings()
    for url in urls:
        response = client.get(url)
        assert response.status_code in (200, 404), url
        leaked = english_leaks(response.content, english)
        assert leaked == [], f"{url} shows English UI text: {leaked}"


@pytest.mark.django_db
def test_zh_hans_pages_show_no_untranslated_english(tmp_path: Path) -> None:
    dfx.build(tmp_path / "d")
    rfx.build(tmp_path / "r")
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    assert_chinese(
        client,
        [
            f"/a/troubled/s/{dfx.BAD}/diagnostics/",
            "/a/troubled/diagnostics/",
            "/a/troubled/review/",
            f"/a/troubled/s/{dfx.BAD}/ledger/",
            "/a/troubled/ledger/",
            f"/a/watched/s/{rfx.SESSION}/replay/",
            "/sessions/",
            f"/a/watched/c/{rfx.FILE}/compare/?a=1&b=3",
            f"/a/watched/c/{rfx.FILE}/history/",
            f"/a/watched/c/{rfx.FILE}/history/2/",
            "/no/such/page/",
        ],
    )


@pytest.mark.django_db
def test_zh_hans_main_pages_show_no_untranslated_english(fixtures_root: Path) -> None:
    """Every main page, signed in (so the editor's forms and the upload and token pages show)."""
    upstream = fixtures_root / "fixture-a-upstream" / "main"
    (upstream / "mmds" / "003-oneliner.mmd").write_text(
        '```mermaid\\nflowchart TD\\n    003-N1[\\"x\\"]\\n```', "utf-8"
    )
    (upstream / "mmds" / "005-unclosed.mmd").write_text(
        'flowchart TD\n  005-N1["never closed\n  A --> B\n', "utf-8"
    )
    long_ago = time.time() - 86_400  # files written now would make the agent look live
    for path in (upstream / "mmds").iterdir():
        os.utime(path, (long_ago, long_ago))
    os.utime(upstream / "mmds", (long_ago, long_ago))
    ingest_path(fixtures_root / "fixture-a-upstream")
    job = IngestJob.objects.create(path=str(upstream), status="failed", message="boom")
    anonymous = Client(HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    assert_chinese(anonymous, ["/", "/login/", f"/a/main/c/{CANVAS}/"])
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    client.force_login(User.objects.create_user("carol", password="pw"))
    token = client.post("/tokens/", {"agent": "main"})
    assert token.status_code == 200
    assert english_leaks(token.content, english_ui_strings()) == []
    session = "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90"
    assert_chinese(
        client,
        [
            "/",
            "/a/main/",
            f"/a/main/s/{session}/",
            f"/a/main/s/{session}/?unmapped=1",
            f"/a/main/c/{CANVAS}/",
            f"/a/main/c/{CANVAS}/n/002-N2/",
            "/a/main/c/003-oneliner.mmd/",
            "/a/main/c/005-unclosed.mmd/",
            f"/a/main/c/{CANVAS}/lint/",
            f"/a/main/c/{CANVAS}/preview/",
            f"/a/main/c/{CANVAS}/budget/?target=400",
            f"/a/main/c/{CANVAS}/history/",
            f"/a/main/c/{CANVAS}/history/1/",
            "/a/main/refs/2026-06-10T10-02-11-530p08-00.md",
            "/search/?q=orders",
            "/search/?q=zzzz-nothing",
            "/uploads/",
            "/tokens/",
            f"/jobs/{job.pk}/",
            f"/a/main/s/{session}/replay/",
            f"/a/main/s/{session}/diagnostics/",
            f"/a/main/s/{session}/ledger/",
            "/a/main/review/",
            "/a/main/no/such/",
        ],
    )


@pytest.mark.django_db
def test_language_switch_and_english_default(tmp_path: Path) -> None:
    client = Client()
    assert one(BeautifulSoup(client.get("/sessions/").content, "html.parser"), "html")["lang"] == "en"
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/sessions/"})
    assert response.status_code == 302 and response["Location"] == "/sessions/"
    page = BeautifulSoup(client.get("/sessions/").content, "html.parser")
    assert one(page, "html")["lang"] == "zh-hans"
    assert one(page, "h1").get_text() == "会话"
