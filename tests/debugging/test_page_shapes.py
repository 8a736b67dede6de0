"""The JSON the debugging pages answer has the shape their typed contexts declare
(debugging/page_types.py): what a script reads is what the page shows, key for key, at every
level a type names (the diagnostics, the token ledgers, the run report, the session comparison)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from debugging import compare_selectors
from debugging.list_selectors import BadgeSlots, SessionsPage, session_badge_slots
from debugging.page_types import (
    AgentDiagnosticsPage,
    Badge,
    ComparePicker,
    CompareTokens,
    Ledger,
    SessionComparePage,
    SessionDiagnosticsPage,
    SessionLedgerPage,
    SessionReport,
)
from sessions.models import Agent
from tests.debug import compare_fixture as cfx
from tests.debug import diagnosis_fixture as dfx
from tests.shapes import shape_problems

pytestmark = pytest.mark.django_db


def _json(path: str, **query: str) -> Any:
    answer = Client().get(path, {**query, "format": "json"})
    assert answer.status_code == 200, (path, answer.status_code)
    return answer.json()


def test_the_checker_sees_a_key_added_or_removed_at_any_level() -> None:
    ledger: dict[str, Any] = {
        "agent": "a",
        "session": None,
        "method": "m",
        "notes": [],
        "layers": {
            name: {"tokens": 1, "items": 1, "exact_items": 1, "exact": True, "chars": 1}
            for name in ("refs", "summaries", "canvas")
        }
        | {"block": {"tokens": 1, "canvas": None, "exact": True}},
        "compression": {"refs_to_summaries": 1, "summaries_to_canvas": 1, "refs_to_canvas": 1},
        "canvases": [{"file": "f", "tokens": 1}],
        "series": dict.fromkeys(("t", "refs", "summaries", "canvas", "block"), [])
        | {"utc_offset_minutes": None},
    }
    assert shape_problems(ledger, Ledger) == []
    assert shape_problems({**ledger, "extra": 1}, Ledger) == ["$.extra: not declared"]
    assert shape_problems({**ledger, "canvases": [{"file": "f"}]}, Ledger) == [
        "$.canvases[0].tokens: missing"
    ]
    layers = {**ledger["layers"], "block": {**ledger["layers"]["block"], "more": 1}}
    assert shape_problems({**ledger, "layers": layers}, Ledger) == [
        "$.layers.block.more: not declared"
    ]
    assert shape_problems(ledger, SessionLedgerPage) == ["$.badges: missing"]


def test_diagnostics_ledgers_and_reports_json_are_their_typed_contexts(tmp_path: Path) -> None:
    dfx.build(tmp_path / "root")
    evidence = 0
    kinds = set()  # of evidence: each has its own TypedDict, the page's JSON must fit one
    for agent in Agent.objects.order_by("slug"):
        page = _json(reverse("agent-diagnostics", args=[agent.slug]))
        assert shape_problems(page, AgentDiagnosticsPage) == [], agent.slug
        evidence += sum(len(f["evidence"]) for f in page["findings"])
        kinds |= {_evidence_kind(e) for f in page["findings"] for e in f["evidence"]}
        ledger = _json(reverse("agent-ledger", args=[agent.slug]))
        assert shape_problems(ledger, Ledger) == [] and ledger["session"] is None
        for session in agent.sessions.order_by("session_id"):
            args = [agent.slug, session.session_id]
            page = _json(reverse("session-diagnostics", args=args))
            assert shape_problems(page, SessionDiagnosticsPage) == [], args
            ledger = _json(reverse("session-ledger", args=args))
            assert shape_problems(ledger, SessionLedgerPage) == [], args
            assert ledger["series"]["t"] and ledger["canvases"]
            report = _json(reverse("session-report", args=args))
            assert shape_problems(report, SessionReport) == [], args
            assert report["rows"] and report["canvas"] is not None
    troubled = _json(reverse("agent-diagnostics", args=["troubled"]))
    assert troubled["per_session"] and all(s["findings"] for s in troubled["per_session"])
    badges = _json(reverse("session-diagnostics", args=["troubled", dfx.BAD]))["badges"]
    assert badges and evidence > 5  # the shapes were checked on real findings, not empty lists
    assert kinds == {"loop", "canvas", "row"}


def _evidence_kind(item: dict[str, Any]) -> str:
    return "loop" if "rows" in item else "canvas" if "canvas" in item else "row"


def test_the_checker_sees_evidence_that_fits_none_of_its_kinds() -> None:
    row = {"row": 1, "session": "s", "line_no": 3, "node_id": None, "tool_call": "ls", "detail": ""}
    loop = {"tool_call": "ls", "repeats": 3, "rows": [row, row, row]}
    canvas = {"canvas": "001-a.mmd", "detail": "d", "detail_code": "over_chars", "detail_args": {}}
    badge = {"kind": "loop", "count": 3, "title": "t", "help": "h", "more": 0, "note": ""}
    assert shape_problems({**badge, "evidence": [row, loop, canvas]}, Badge) == []
    assert shape_problems({**badge, "evidence": [{**row, "extra": 1}]}, Badge) == [
        "$.evidence[0].extra: not declared"
    ]
    assert shape_problems({**badge, "evidence": [{**loop, "rows": [{"row": 1}]}]}, Badge) != []


def test_the_sessions_list_and_the_agent_pages_badge_slots_are_their_typed_contexts(
    tmp_path: Path,
) -> None:
    dfx.build(tmp_path / "root")
    listed = _json(reverse("sessions-list"), sort="findings")
    assert shape_problems(listed, SessionsPage) == [] and listed["sort"] == "findings"
    assert any(s["findings"] for s in listed["sessions"]) and listed["diagnoses"]
    slots = session_badge_slots(Agent.objects.get(slug="troubled"))
    assert shape_problems(slots, BadgeSlots) == [] and any(b["findings"] for b in slots["badges"])
    page = Client().get(reverse("agent-session-badges", args=["troubled"])).content.decode()
    assert all(f'id="{b["slot"]}" hx-swap-oob="true"' in page for b in slots["badges"])


def test_the_session_comparison_json_is_its_typed_context(tmp_path: Path, monkeypatch) -> None:
    cfx.build(tmp_path / "root")
    url = reverse("session-compare", args=[cfx.AGENT])
    picker = _json(url)
    assert shape_problems(picker, ComparePicker) == [] and len(picker["choices"]) == 2
    monkeypatch.setattr(compare_selectors, "PAGE", 3)  # two pages: a cursor page too
    first = _json(url, a=cfx.A, b=cfx.B)
    assert shape_problems(first, SessionComparePage) == []
    assert first["nodes"] and first["after"] is not None
    assert all(r["a"] or r["b"] for r in first["rows"])
    cursor = _json(url, a=cfx.A, b=cfx.B, after=str(first["after"]))
    assert shape_problems(cursor, SessionComparePage) == [] and cursor["nodes"] is None
    differences = _json(url, a=cfx.A, b=cfx.B, show="diff")
    assert shape_problems(differences, SessionComparePage) == [] and differences["show"] == "diff"
    tokens = _json(url, a=cfx.A, b=cfx.B, part="tokens")
    assert shape_problems(tokens, CompareTokens) == [] and tokens["a"]["refs"] > 0
