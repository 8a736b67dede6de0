"""The JSON the canvas panels and the search page answer has the shape their typed contexts
declare (canvases/panel_types.py, sessions/page_types.py): key for key, nested objects too."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from canvases import budget, services
from canvases.page_types import CanvasPage, EditorState, LivePanel
from canvases.panel_types import (
    BudgetPage,
    LintPage,
    NodePanel,
    NodeShareItem,
    PlanItem,
    ResumePreview,
    RowStatsItem,
    SharesItem,
    SuggestionItem,
    TooLarge,
)
from intake.ingest import ingest_agent_dir, ingest_path
from sessions.models import Canvas
from sessions.page_types import SearchPage
from tests.shapes import shape_problems

pytestmark = pytest.mark.django_db
SID = "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90"  # a session of fixture-a's agent "main"
BASE = "/a/main/c/002-migrate-orders-api.mmd"


@pytest.fixture
def upstream(fixtures_root: Path) -> Path:
    ingest_path(fixtures_root / "fixture-a-upstream")
    return fixtures_root / "fixture-a-upstream" / "main"


def _json(client: Client, url: str, **query: Any) -> Any:
    response = client.get(url, {**query, "format": "json"})
    assert response.status_code == 200, url
    return response.json()


def test_the_node_panel_json_is_a_node_panel(client: Client, upstream: Path) -> None:
    panel = _json(client, f"{BASE}/n/002-N2/")
    assert shape_problems(panel, NodePanel) == []
    assert len(panel["rows"]) == 2  # the row items were checked, not an empty list


def test_the_live_panel_json_is_a_live_panel(client: Client, upstream: Path) -> None:
    panel = _json(client, f"{BASE}/live/")
    assert shape_problems(panel, LivePanel) == []
    assert panel["editor"]["live"] is not None and panel["file"] == "002-migrate-orders-api.mmd"


def test_the_preview_and_editor_json_name_the_last_edit_and_resume(
    client: Client, upstream: Path
) -> None:
    user = User.objects.create_user("ann", password="pw")
    canvas = Canvas.objects.get(filename="002-migrate-orders-api.mmd")
    services.canvas_apply_edit(
        canvas=canvas,
        op="set_status",
        params={"node": "002-N4", "status": "done"},
        base_hash=canvas.content_hash,
        user=user,
    )
    client.force_login(user)
    resumed = client.post("/a/main/c/001-fix-login-timeout.mmd/resume/", {})
    assert resumed.status_code == 302
    preview = _json(client, f"{BASE}/preview/")
    assert shape_problems(preview, ResumePreview) == []
    assert preview["node_shares"] and preview["resume"] is not None
    page: CanvasPage = _json(client, f"{BASE}/")
    assert shape_problems(page["editor"], EditorState) == []
    assert page["editor"]["last_edit"] and page["editor"]["resume"]


def test_the_budget_panel_json_is_a_budget_page(client: Client, upstream: Path) -> None:
    panel = _json(client, f"{BASE}/budget/", target=200)
    assert shape_problems(panel, BudgetPage) == []
    assert panel["shares"]["nodes"] and panel["plan"]["suggestions"] and panel["groups"]
    assert panel["rows"]  # a dict: its values are checked one by one
    assert all(shape_problems(s, RowStatsItem) == [] for s in panel["rows"].values())


@pytest.mark.parametrize(
    ("typed", "dataclass", "added"),
    [
        (SharesItem, budget.Shares, set()),
        (NodeShareItem, budget.NodeShare, set()),
        (PlanItem, budget.Plan, set()),
        (SuggestionItem, budget.Suggestion, {"saved"}),
        (RowStatsItem, budget.RowStats, set()),
    ],
)
def test_the_budget_types_name_every_field_of_their_dataclass(
    typed: Any, dataclass: Any, added: set[str]
) -> None:
    """The budget panel writes each field out by name: a field added to canvases/budget.py
    must be added to its JSON type (and to canvases/budget_selectors.py) too."""
    assert typed.__required_keys__ == {f.name for f in fields(dataclass)} | added


def test_the_lint_panel_json_is_a_lint_page(client: Client, fixtures_root: Path) -> None:
    agent_dir = fixtures_root / "fixture-a-upstream" / "main"
    ingest_path(fixtures_root / "fixture-a-upstream")
    ingest_path(fixtures_root / "fixture-b-wild")  # its canvases draw the agent's warnings
    with (agent_dir / f"offload-{SID}.jsonl").open("a", encoding="utf-8") as handle:
        for row in (
            {"tool_call_id": "l1", "node_id": "002-N77"},  # on no canvas
            {"tool_call_id": "l2", "node_id": "002-N5", "result_ref": "refs/gone.md"},
        ):
            handle.write(json.dumps(row) + "\n")
    ingest_agent_dir(agent_dir)
    seen: dict[str, int] = {}
    for canvas in Canvas.objects.select_related("agent"):
        panel = _json(client, f"/a/{canvas.agent.slug}/c/{canvas.filename}/lint/")
        assert shape_problems(panel, LintPage) == [], canvas.filename
        for key in ("agent_warnings", "nodes_without_rows", "rows_on_no_canvas", "missing_refs"):
            seen[key] = seen.get(key, 0) + len(panel[key])
    assert all(seen.values()), seen  # every list's items were checked on some canvas


def test_the_too_large_page_json_is_too_large(client: Client, upstream: Path, settings) -> None:
    settings.MEMVIZ_CANVAS_MAX_BYTES = 64
    summary = _json(client, f"{BASE}/")
    assert shape_problems(summary, TooLarge) == []
    assert summary["too_large"] is True and summary["nodes"] == 5


def test_the_search_page_json_is_a_search_page(
    client: Client, fixtures_root: Path, settings
) -> None:
    settings.MEMVIZ_INDEX_REF_TEXT = True  # ref hits too
    ingest_path(fixtures_root / "fixture-a-upstream")
    found = _json(client, "/search/", q="orders")
    assert shape_problems(found, SearchPage) == []
    assert found["nodes"] and found["rows"] and found["refs"] and found["canvases"]
