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


# The wording of debugging.diagnostics.DETAILS, with the same values ("wait" and "null" are the
# row's node_id as the agent wrote it: data, shown as is).
DETAILS = {
    "no_canvas": _("node on no canvas"),
    "no_ref": _("no result_ref"),
    "ref_missing": _("file missing"),
    "ref_unsafe": _("unsafe path"),
    "over_chars": _("%(size)s > %(limit)s characters"),
    "status_since": _("%(status)s since %(stamp)s"),
}


def _worded(evidence: dict) -> dict:
    code = evidence.get("detail_code")
    if code not in DETAILS:
        return evidence
    return {**evidence, "detail": str(DETAILS[code]) % evidence.get("detail_args", {})}


def titled(findings: list[dict]) -> list[dict]:
    """Findings (JSON) with their title, help text and evidence details in the viewer's
    language, as strings."""
    return [
        {
            **f,
            "title": str(TITLES[f["kind"]]),
            "help": str(HELP[f["kind"]]),
            **({"evidence": [_worded(e) for e in f["evidence"]]} if "evidence" in f else {}),
        }
        for f in findings
    ]
