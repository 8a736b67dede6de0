"""The JSON the pages answer has the shape their typed contexts declare (sessions/selectors.py):
what a script reads is what the page shows, key for key."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from django.test import Client

from intake.ingest import ingest_path
from sessions.home_selectors import HomePage, JobItem
from sessions.models import Agent, Canvas, IngestJob
from sessions.page_types import AgentSummary, Compression
from tests.shapes import shape_problems

pytestmark = pytest.mark.django_db


def test_the_home_page_json_is_its_typed_context(fixtures_root: Path, settings) -> None:
    settings.MEMVIZ_DATA_ROOT = fixtures_root / "fixture-a-upstream"
    ingest_path(settings.MEMVIZ_DATA_ROOT)
    IngestJob.objects.create(path=str(settings.MEMVIZ_DATA_ROOT))
    home = Client().get("/?format=json").json()
    assert set(home) >= HomePage.__required_keys__
    assert home["agents"] and home["jobs"]
    for agent in home["agents"]:
        assert set(agent) == AgentSummary.__required_keys__, sorted(set(agent) ^ AgentSummary.__required_keys__)
        assert set(agent["compression"]) == Compression.__required_keys__
        assert isinstance(agent["rows"], int) and isinstance(agent["slug"], str)
    for job in home["jobs"]:
        assert set(job) == JobItem.__required_keys__, sorted(set(job) ^ JobItem.__required_keys__)


def test_a_job_page_json_is_a_job_item(settings) -> None:
    job = IngestJob.objects.create(path=str(settings.MEMVIZ_DATA_ROOT))
    answer = Client().get(f"/jobs/{job.pk}/?format=json").json()
    assert set(answer["job"]) == JobItem.__required_keys__
    assert answer["job"]["id"] == job.pk and answer["job"]["status"] == "pending"


def _shape(answer: Mapping[str, object], typed: type) -> list[str]:
    """Keys the answer (or an object nested in it) has that its TypedDict does not declare, or
    lacks that it requires."""
    return shape_problems(answer, typed)


def test_the_canvas_page_json_is_its_typed_context(fixtures_root: Path) -> None:
    from canvases.page_types import (
        AgentReads,
        CanvasPage,
        EdgeItem,
        EditorState,
        GroupItem,
        MarkedLine,
        MetaItem,
        NodeItem,
    )

    broken = fixtures_root / "fixture-a-upstream" / "main" / "mmds" / "009-broken.mmd"
    broken.write_text('flowchart TD\n  A["open --> B\n  C --> ', "utf-8")
    ingest_path(fixtures_root / "fixture-a-upstream")
    ingest_path(fixtures_root / "fixture-b-wild")
    ingest_path(fixtures_root / "fixture-c-enhanced")
    pages = [
        Client().get(f"/a/{c.agent.slug}/c/{c.filename}/?format=json").json()
        for c in Canvas.objects.select_related("agent")
    ]
    assert any(p["has_errors"] for p in pages) and any(p["subgraphs"] for p in pages)
    for page in pages:
        assert _shape(page, CanvasPage) == [], page["file"]
        assert _shape(page["meta"], MetaItem) == [] and _shape(page["agent_reads"], AgentReads) == []
        assert _shape(page["editor"], EditorState) == []
        for items, typed in (
            (page["nodes"], NodeItem),
            (page["edges"], EdgeItem),
            (page["subgraphs"], GroupItem),
            (page.get("marked_lines", []), MarkedLine),
        ):
            assert all(_shape(item, typed) == [] for item in items), (page["file"], typed)


def test_the_agent_and_session_pages_json_are_their_typed_contexts(fixtures_root: Path) -> None:
    from browse.selectors import AgentPage, SessionPage
    from debugging.page_types import ReplayPayload
    from debugging.replay_page import ReplayPage, replay_page
    from sessions.page_types import (
        AgentCanvasItem,
        AgentSessionItem,
        RowItem,
        SessionItem,
        UnplacedByKind,
    )

    for root in ("fixture-a-upstream", "fixture-b-wild", "fixture-c-enhanced"):
        ingest_path(fixtures_root / root)
    seen_rows = frames = scenes = 0
    for agent in Agent.objects.all():
        page = Client().get(f"/a/{agent.slug}/?format=json").json()
        assert _shape(page, AgentPage) == [], agent.slug
        assert _shape(page["agent"], AgentSummary) == []
        assert _shape(page["unplaced_by_kind"], UnplacedByKind) == []
        assert all(_shape(c, AgentCanvasItem) == [] for c in page["canvases"])
        assert all(_shape(r, RowItem) == [] for r in page["unplaced"])
        for listed in page["sessions"]:
            assert _shape(listed, AgentSessionItem) == []
            timeline = Client().get(f"/a/{agent.slug}/s/{listed['id']}/?format=json").json()
            assert _shape(timeline, SessionPage) == [], listed["id"]
            assert _shape(timeline["session"], SessionItem) == []
            assert all(_shape(r, RowItem) == [] for r in timeline["rows"])
            seen_rows += len(timeline["rows"])
            replay = Client().get(f"/a/{agent.slug}/s/{listed['id']}/replay/?format=json")
            assert _shape(replay.json(), ReplayPage) == [], listed["id"]
            frames += len(replay.json()["frames"])
            # what the page's script steps through: every frame, each scene drawn three ways
            session = agent.sessions.get(session_id=listed["id"])
            _, payload = replay_page(agent, session, {}, frames_paged=False)
            assert payload is not None and _shape(payload, ReplayPayload) == [], listed["id"]
            scenes += len(payload["scenes"])
    assert seen_rows > 20  # the shapes were checked on real rows, not on empty lists
    assert frames > 20 and scenes > 3


def test_history_revision_and_compare_json_are_their_typed_contexts(
    fixtures_root: Path, django_user_model
) -> None:
    from canvases import services
    from canvases.page_types import (
        ComparePage,
        CompareSide,
        HistoryPage,
        NodeChanges,
        RevisionItem,
        RevisionPage,
        VersionRef,
    )

    ingest_path(fixtures_root / "fixture-a-upstream")
    canvas = Canvas.objects.get(filename="002-migrate-orders-api.mmd")
    number = services.canvas_apply_edit(
        canvas=canvas,
        op="set_status",
        params={"node": "002-N4", "status": "done"},
        base_hash=canvas.content_hash,
        user=django_user_model.objects.create_user("ann", password="pw"),
    ).revision.number
    base = f"/a/{canvas.agent.slug}/c/{canvas.filename}"
    history = Client().get(f"{base}/history/?format=json").json()
    assert _shape(history, HistoryPage) == [] and history["revisions"]
    assert all(_shape(r, RevisionItem) == [] for r in history["revisions"])
    revision = Client().get(f"{base}/history/{number}/?format=json").json()
    assert _shape(revision, RevisionPage) == [] and _shape(revision["revision"], RevisionItem) == []
    assert _shape(revision["changes"], NodeChanges) == [] and revision["changes"]["changed"]
    compared = Client().get(f"{base}/compare/?a={number}&b=current&format=json").json()
    assert _shape(compared, ComparePage) == []
    assert _shape(compared["a"], VersionRef) == [] and _shape(compared["b"], VersionRef) == []
    assert [_shape(s, CompareSide) for s in compared["sides"]] == [[], []]
