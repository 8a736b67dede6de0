"""What the curation services say is a code with its words in the reader's language
(canvases/messages.py): scripts get the code, people a sentence, in Chinese too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client
from django.utils import translation

from canvases.mermaid import EditError, edits, wording
from canvases.messages import TEXTS, Said, said_notes
from intake.ingest import ingest_path


def test_every_message_reads_in_both_languages_with_its_values() -> None:
    for code, text in {**TEXTS, **wording.TEXTS}.items():
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
    with pytest.raises(KeyError):
        EditError("no-such-refusal")


def test_the_engine_and_the_services_never_use_one_code_for_two_sentences() -> None:
    assert not set(TEXTS) & set(wording.TEXTS)


def test_an_engine_refusal_is_english_alone_and_the_readers_language_in_the_app() -> None:
    text = 'flowchart TD\n  A["a"] --> B["b"]\n'
    with pytest.raises(EditError) as refused:
        edits.add_edge(text, "A", "B")
    assert str(refused.value) == "there is already an edge A → B"  # no Django needed
    assert (refused.value.code, refused.value.values) == ("edge_exists", {"source": "A", "target": "B"})
    with translation.override("zh-hans"):
        assert str(Said.engine(refused.value)) == "已经有一条边 A → B"


CANVAS = "/a/main/c/001-fix-login-timeout.mmd/"


@pytest.fixture
def curator(fixtures_root: Path, django_user_model) -> Client:
    """A signed-in client on fixture A, which has the canvas `CANVAS`."""
    ingest_path(fixtures_root / "fixture-a-upstream")
    client = Client()
    client.force_login(django_user_model.objects.create_user("ana"))
    return client


@pytest.mark.django_db
def test_a_refusal_carries_its_code_and_speaks_the_readers_language(curator: Client) -> None:
    client, url = curator, f"{CANVAS}ops/?format=json"
    english = client.post(url, {"op": "undo"})
    assert english.status_code == 400
    assert english.json()["code"] == "nothing_to_undo" and english.json()["error"] == "nothing to undo"
    chinese = client.post(url, {"op": "undo"}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert chinese.json()["code"] == "nothing_to_undo"
    with translation.override("zh-hans"):
        assert chinese.json()["error"] == str(Said("nothing_to_undo")) != "nothing to undo"


@pytest.mark.django_db
def test_the_engines_refusal_reaches_a_chinese_reader_in_chinese_with_its_code(
    curator: Client,
) -> None:
    client, url = curator, f"{CANVAS}ops/?format=json"
    page = client.get(f"{CANVAS}?format=json").json()
    edit = {"op": "set_status", "node": "no-such-node", "status": "done", "base": page["content_hash"]}
    english = client.post(url, edit)
    assert english.status_code == 400
    assert english.json()["code"] == "no_node"
    assert english.json()["error"] == "there is no node 'no-such-node' in this canvas"
    chinese = client.post(url, edit, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert chinese.json() == {**english.json(), "error": "此画布中没有节点 'no-such-node'"}


def test_what_an_edit_did_beyond_its_op_is_noted_by_code_and_read_in_chinese() -> None:
    text = '%% taskGoal: ship it\n%% progress: 60\nflowchart TD\n  A["a"] --> B["b"]\n'
    result = edits.set_status(text, "A", "done")
    note = result.notes[0]
    assert note.code == "header_from_comment"
    assert "comment lines `%% key: value`" in note  # the engine alone: English text
    with translation.override("zh-hans"):
        chinese = said_notes(result.notes)
    assert chinese == ["已将元数据写为第 1 行的严格 JSON，智能体从那里读取（原为智能体会忽略的注释行 `%% key: value`）；所有值均保留"]


def test_a_said_shows_its_code_and_reads_with_and_without_values() -> None:
    said = Said("no_such_revision", number=3)
    assert repr(said) == "Said('no_such_revision', {'number': 3})"
    assert repr(Said("db_busy")) == "Said('db_busy', {})"
    with translation.override("en"):
        # the app's words and the engine's, each with values and without
        assert str(said) == "there is no revision 3"
        assert str(Said("db_busy")) == "the database was busy and nothing was written; try again"
        assert str(Said("edge_exists", source="A", target="B")) == "there is already an edge A → B"
        assert str(Said("title_empty")) == "the title cannot be empty"
        # a literal percent sign, written %% in the table, reads as one without values too
        assert "`%%{ … }%%`" in str(Said("header_added"))


@pytest.mark.django_db
def test_why_the_agent_looks_live_reads_in_the_readers_language(
    curator: Client, fixtures_root: Path
) -> None:
    state = fixtures_root / "fixture-a-upstream" / "main" / "state.json"
    state.write_bytes(state.read_bytes())  # the agent just wrote its folder
    english = curator.get(f"{CANVAS}live/?format=json").json()["editor"]["live"]
    assert english["live"] and english["reasons"][0].startswith("its folder was written")
    chinese = curator.get(f"{CANVAS}live/?format=json", HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    reason = chinese["editor"]["live"]["reasons"][0]
    assert reason.startswith("它的文件夹在 ") and reason.endswith(" 秒前被写入")


@pytest.mark.django_db
@pytest.mark.parametrize("target", ["elsewhere.txt", "../state.json"])
def test_an_edit_of_a_canvas_swapped_for_a_link_is_refused_wholly_in_chinese(
    curator: Client, fixtures_root: Path, target: str
) -> None:
    """A canvas swapped for a link to another file of the folder is refused, not written
    through the link (it was: the edit landed in the link's target, state.json included),
    and the cause inside the refusal (the folder reader's 'is a symbolic link') reads in the
    reader's language too."""
    page = curator.get(f"{CANVAS}?format=json").json()
    mmds = fixtures_root / "fixture-a-upstream" / "main" / "mmds"
    real = mmds / "001-fix-login-timeout.mmd"
    real.rename(mmds / "elsewhere.txt")
    real.symlink_to(target)
    before = (mmds / target).read_bytes()
    edit = {"op": "set_status", "node": "001-N1", "status": "done", "base": page["content_hash"]}
    english = curator.post(f"{CANVAS}ops/?format=json", edit)
    assert english.status_code >= 400 and "is a symbolic link" in english.json()["error"]
    chinese = curator.post(
        f"{CANVAS}ops/?format=json", edit, HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).json()["error"]
    assert "symbolic link" not in chinese and "符号链接" in chinese
    assert real.is_symlink() and (mmds / target).read_bytes() == before  # nothing written


@pytest.mark.django_db
def test_a_resume_onto_a_linked_state_json_writes_nothing_through_it(
    curator: Client, fixtures_root: Path
) -> None:
    """state.json swapped for a link to a session file: resume is refused, the session file
    keeps every byte (it was overwritten with state JSON through the link)."""
    agent = fixtures_root / "fixture-a-upstream" / "main"
    offload = next(agent.glob("offload-*.jsonl"))
    before = offload.read_bytes()
    (agent / "state.json").unlink()
    (agent / "state.json").symlink_to(offload.name)
    answer = curator.post(f"{CANVAS}resume/?format=json", {"confirm_live": "1"})
    assert answer.status_code >= 400, answer.content[:300]
    assert "symbolic link" in answer.json()["error"]
    assert offload.read_bytes() == before and (agent / "state.json").is_symlink()
