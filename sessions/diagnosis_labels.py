"""What each diagnosis is called and what it means, in the viewer's language."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

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


def titled(findings: list[dict]) -> list[dict]:
    """Findings (JSON) with their title and help text added, as strings."""
    return [{**f, "title": str(TITLES[f["kind"]]), "help": str(HELP[f["kind"]])} for f in findings]
