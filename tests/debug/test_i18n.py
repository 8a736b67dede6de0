"""Chinese and English UI: every marked string translated, zh-hans pages free of English UI text."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.core.management import call_command
from django.test import Client

from tests.conftest import REPO
from tests.debug import diagnosis_fixture as dfx
from tests.debug import replay_fixture as rfx

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
) -> None:  # type: ignore[no-untyped-def]
    """Re-extract the msgids from the code as it is now; list those without a translation."""
    if shutil.which("xgettext") is None:
        pytest.fail("gettext is missing: `make test-deps` installs it")
    target = tmp_path / "locale" / "zh_Hans" / "LC_MESSAGES"
    target.mkdir(parents=True)
    shutil.copy(PO, target / "django.po")
    settings.LOCALE_PATHS = [tmp_path / "locale"]
    monkeypatch.chdir(REPO)
    call_command(
        "makemessages",
        locale=["zh_Hans"],
        verbosity=0,
        no_obsolete=True,
        ignore_patterns=[".venv", "node_modules", "static/vendor", "var", "tests", "artifacts"],
    )
    entries = po_entries(target / "django.po")
    missing = sorted(m for m, (text, fuzzy) in entries.items() if not text or fuzzy)
    assert missing == [], f"msgids without a zh-hans translation: {missing}"
    assert len(entries) > 100


def english_ui_strings() -> set[str]:
    """The English msgids whose Chinese text differs: none may show on a zh-hans page."""
    return {
        re.sub(r"<[^>]+>|%\(\w+\)s", "", m).strip()
        for m, (text, _) in po_entries(PO).items()
        if text != m and len(m) > 3
    } - {""}


@pytest.mark.django_db
def test_zh_hans_pages_show_no_untranslated_english(tmp_path: Path) -> None:
    dfx.build(tmp_path / "d")
    rfx.build(tmp_path / "r")
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    pages = [
        f"/a/troubled/s/{dfx.BAD}/diagnostics/",
        "/a/troubled/diagnostics/",
        f"/a/troubled/s/{dfx.BAD}/ledger/",
        "/a/troubled/ledger/",
        f"/a/watched/s/{rfx.SESSION}/replay/",
        "/sessions/",
        f"/a/watched/c/{rfx.FILE}/compare/?a=1&b=3",
        "/no/such/page/",
    ]
    english = english_ui_strings()
    for url in pages:
        response = client.get(url)
        assert response.status_code in (200, 404), url
        page = BeautifulSoup(response.content, "html.parser")
        assert page.html["lang"] == "zh-hans", url
        for data in page.select("script, code, pre, .evidence, td a, .rows, time"):
            data.decompose()  # data from the memory folder, not UI text
        visible = " ".join(page.get_text(" ").split())
        attrs = " ".join(
            v
            for el in page.select("[title], [placeholder], [aria-label]")
            for k in ("title", "placeholder", "aria-label")
            if (v := el.get(k))
        )
        text = f"{visible} {attrs}"
        leaked = sorted(
            s for s in english if re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", text)
        )
        assert leaked == [], f"{url} shows English UI text: {leaked}"


@pytest.mark.django_db
def test_language_switch_and_english_default(tmp_path: Path) -> None:
    client = Client()
    assert BeautifulSoup(client.get("/sessions/").content, "html.parser").html["lang"] == "en"
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/sessions/"})
    assert response.status_code == 302 and response["Location"] == "/sessions/"
    page = BeautifulSoup(client.get("/sessions/").content, "html.parser")
    assert page.html["lang"] == "zh-hans"
    assert page.select_one("h1").get_text() == "会话"
