"""What the curation services say is a code with its words in the reader's language
(canvases/messages.py): scripts get the code, people a sentence, in Chinese too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client
from django.utils import translation

from canvases.messages import TEXTS, Said
from intake.ingest import ingest_path


def test_every_message_reads_in_both_languages_with_its_values() -> None:
    for code, text in TEXTS.items():
        names = re.findall(r"%\((\w+)\)[sr]", str(text))
        said = Said(code, **{name: f"<{name}>" for name in names})
        with translation.override("en"):
            english = str(said)
        with translation.override("zh-hans"):
            chinese = str(said)
        assert chinese != english, code
        assert all(f"<{name}>" in english and f"<{name}>" in chinese for name in names), code


def test_an_unknown_code_is_a_programming_error() -> None:
    with pytest.raises(KeyError):
        Said("no-such-message")


@pytest.mark.django_db
def test_a_refusal_carries_its_code_and_speaks_the_readers_language(
    fixtures_root: Path, django_user_model
) -> None:
    ingest_path(fixtures_root / "fixture-a-upstream")
    client = Client()
    client.force_login(django_user_model.objects.create_user("ana"))
    url = "/a/main/c/001-fix-login-timeout.mmd/ops/?format=json"
    english = client.post(url, {"op": "undo"})
    assert english.status_code == 400
    assert english.json()["code"] == "nothing_to_undo" and english.json()["error"] == "nothing to undo"
    chinese = client.post(url, {"op": "undo"}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert chinese.json()["code"] == "nothing_to_undo"
    with translation.override("zh-hans"):
        assert chinese.json()["error"] == str(Said("nothing_to_undo")) != "nothing to undo"
