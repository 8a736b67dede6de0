"""Review notes, marks and the queue: threads in order with author and time, a queue made from
the diagnoses that keeps done/skip until the diagnosis changes."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from intake.ingest import ingest_path
from reviews import selectors, services
from reviews.models import QueueDecision, ReviewNote
from sessions.models import Agent
from tests.debug import diagnosis_fixture as dfx
from tests.debug.memory_factory import at, stamp

pytestmark = pytest.mark.django_db


@pytest.fixture
def troubled(tmp_path: Path) -> Agent:
    dfx.build(tmp_path / "root")
    return Agent.objects.get(slug="troubled")


def test_a_thread_lists_notes_then_their_replies_oldest_first(troubled: Agent) -> None:
    ann, bob = User.objects.create_user("ann"), User.objects.create_user("bob")
    node = selectors.target_get(troubled, "node", "001-fix-tests.mmd", "001-N2")
    assert node is not None
    first = services.note_add(troubled, node, "  why blocked?  ", ann)
    second = services.note_add(troubled, node, "tests flaky", bob)
    reply = services.note_add(troubled, node, "CI was down", bob, reply_to=first.pk)
    # a reply to a reply joins the thread of the note it answers (one level of threads)
    services.note_add(troubled, node, "ok, retry", ann, reply_to=reply.pk)
    # created later but stamped earlier: order follows the time, not the id
    ReviewNote.objects.filter(pk=second.pk).update(
        created_at=first.created_at - timedelta(minutes=1)
    )

    thread = selectors.thread(troubled, node)
    assert [n["text"] for n in thread["notes"]] == ["tests flaky", "why blocked?"]
    replies = thread["notes"][1]["replies"]
    assert [(r["author"], r["text"]) for r in replies] == [
        ("bob", "CI was down"),
        ("ann", "ok, retry"),
    ]
    assert thread["notes"][1]["author"] == "ann"
    assert abs(thread["notes"][1]["created_at"] - timezone.now()) < timedelta(minutes=1)
    # other targets keep their own threads
    other = selectors.target_get(troubled, "node", "001-fix-tests.mmd", "001-N1")
    assert other is not None and selectors.thread(troubled, other)["notes"] == []


def test_targets_must_exist_and_replies_stay_in_their_thread(troubled: Agent) -> None:
    user = User.objects.create_user("ann")
    assert selectors.target_get(troubled, "node", "001-fix-tests.mmd", "nope") is None
    assert selectors.target_get(troubled, "row", dfx.BAD, "99") is None
    assert selectors.target_get(troubled, "canvas", dfx.BAD, "") is None
    row = selectors.target_get(troubled, "row", dfx.BAD, "2")
    session = selectors.target_get(troubled, "session", dfx.BAD, "ignored")
    assert row is not None and session is not None and session.item == ""
    note = services.note_add(troubled, row, "look", user)
    with pytest.raises(services.ReviewRefused):
        services.note_add(troubled, session, "elsewhere", user, reply_to=note.pk)
    with pytest.raises(services.ReviewRefused):
        services.note_add(troubled, session, "   ", user)


def test_reviewed_mark_has_author_and_time_and_clears(troubled: Agent) -> None:
    ann, bob = User.objects.create_user("ann"), User.objects.create_user("bob")
    session = selectors.target_get(troubled, "session", dfx.BAD, "")
    assert session is not None
    services.mark_set(troubled, session, True, ann)
    services.mark_set(troubled, session, True, bob)  # already reviewed: the first mark stays
    reviewed = selectors.thread(troubled, session)["reviewed"]
    assert reviewed is not None and reviewed["author"] == "ann" and reviewed["created_at"] <= timezone.now()
    services.mark_set(troubled, session, False, bob)
    assert selectors.thread(troubled, session)["reviewed"] is None


def test_queue_comes_from_the_diagnoses_and_is_the_same_every_time(troubled: Agent) -> None:
    todo, decided = selectors.queue(troubled)
    again, _ = selectors.queue(troubled)
    assert todo == again and decided == []
    kinds = {i.kind for i in todo}
    assert {"loop", "failing_call", "missing_ref", "never_placed", "stuck_node"} <= kinds
    keys = [i.key for i in todo]
    assert len(keys) == len(set(keys))
    page = selectors.agent_review(troubled)
    loop = next(i for i in page["queue"] if i["kind"] == "loop")
    assert loop["url"].startswith(f"/a/troubled/s/{dfx.BAD}/?line=2#row-")  # its evidence
    stuck = next(i for i in page["queue"] if i["kind"] == "stuck_node")
    assert stuck["url"] == "/a/troubled/c/001-fix-tests.mmd/n/001-N1/"


def test_done_and_skip_are_kept_until_the_diagnosis_changes(troubled: Agent) -> None:
    user = User.objects.create_user("ann")
    todo, _ = selectors.queue(troubled)
    loop = next(i for i in todo if i.kind == "loop")
    missing = next(i for i in todo if i.kind == "missing_ref")
    services.queue_decide(troubled, loop.key, "done", user)
    services.queue_decide(troubled, missing.key, "skip", user)
    after, decided = selectors.queue(troubled)
    assert [(i.key, d.state, d.author) for i, d in decided] == [
        (loop.key, "done", "ann"),
        (missing.key, "skip", "ann"),
    ]
    assert {i.key for i in after} == {i.key for i in todo} - {
        loop.key,
        missing.key,
    }
    assert QueueDecision.objects.get(key=missing.key).state == "skip"
    with pytest.raises(services.ReviewRefused):  # decided: no longer in the queue
        services.queue_decide(troubled, loop.key, "skip", user)

    # the agent runs the same call again: the loop has one more repeat, a changed diagnosis,
    # and comes back; the skipped missing ref, unchanged, does not
    offload = Path(troubled.path) / f"offload-{dfx.BAD}.jsonl"
    again: dict[str, object] = {"tool_call_id": "call_again", "tool_call": "exec: npm test", "summary": "again"}
    again |= {"timestamp": stamp(at(95)), "score": 5, "node_id": "001-N2"}
    with offload.open("a", encoding="utf-8") as out:
        out.write(json.dumps(again) + "\n")
    ingest_path(Path(troubled.path).parent)
    troubled.refresh_from_db()  # the diagnoses are memoised on its figures
    back, decided = selectors.queue(troubled)
    loops = [i for i in back if i.kind == "loop"]
    assert [i.key for i in loops] == [loop.key] and loops[0].fingerprint != loop.fingerprint
    assert missing.key not in {i.key for i in back}
    assert [i.key for i, _ in decided] == [missing.key]

    # reopened by a person: back in the queue at once
    services.queue_decide(troubled, missing.key, "open", user)
    assert missing.key in {i.key for i in selectors.queue(troubled)[0]}
