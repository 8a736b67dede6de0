"""What each diagnosis is called and what it means, in the viewer's language."""

from __future__ import annotations

from typing import TypedDict

from django.utils.translation import gettext_lazy as _

from debugging.diagnostics import DETAILS
from memviz.said import said_or
from sessions.page_types import Badge, BadgeCount, Evidence, FindingJson

TITLES = {
    "loop": _("Loops"),
    "failing_call": _("Failing tool calls"),
    "stuck_node": _("Stuck nodes"),
    "never_placed": _("Rows never placed"),
    "map_builder_lag": _("Map-builder lag"),
    "over_budget": _("Canvases over budget"),
    "missing_ref": _("Missing refs"),
    "empty_summary": _("Empty summaries"),
    "summary_longer_than_ref": _("Summaries longer than their refs"),
}
HELP = {
    "loop": _("The same tool call at least 3 times with at most 10 rows between repeats."),
    "failing_call": _("The ref shows a non-zero exit, a traceback, an error line or failed tests."),
    "stuck_node": _("A node still doing or blocked 30 minutes before the run's last row."),
    "never_placed": _(
        "Null rows older than the map-builder's 300 s trigger, or rows whose node is on no canvas."
    ),
    "map_builder_lag": _(
        "wait rows older than the map-builder's 120 s window: its pass failed or stopped."
    ),
    "over_budget": _("Canvases longer than the 4,000-character budget; the agent gets them whole."),
    "missing_ref": _("Rows without result_ref, or whose ref file is missing or unsafe."),
    "empty_summary": _("Rows whose summary is empty."),
    "summary_longer_than_ref": _("Summaries longer than the raw result they stand in for."),
}


def _worded(evidence: Evidence) -> Evidence:
    """One evidence item with its detail in the viewer's language (a detail memviz did not
    word, the row's node_id or a ref's error line, as found)."""
    if "rows" in evidence or "detail_code" not in evidence:
        return evidence
    worded = evidence.copy()
    worded["detail"] = said_or(
        DETAILS, evidence["detail_code"], evidence["detail_args"], evidence["detail"]
    )
    return worded


def titled(findings: list[FindingJson]) -> list[Badge]:
    """Findings with their title, help text and evidence details in the viewer's language."""
    return [
        {**f, **titles(f["kind"]), "evidence": [_worded(e) for e in f["evidence"]]}
        for f in findings
    ]


def titled_counts(counts: dict[str, int]) -> list[BadgeCount]:
    """Counts of diagnoses (kind -> count) as badges: titled, no evidence."""
    return [{"kind": kind, "count": count, **titles(kind)} for kind, count in counts.items()]


class Titles(TypedDict):
    title: str
    help: str


def titles(kind: str) -> Titles:
    """A diagnosis's title and help text in the viewer's language."""
    return {"title": str(TITLES[kind]), "help": str(HELP[kind])}
