"""What the curation services say to people: one code per message, its words through gettext.

A refusal or a warning carries a `Said` (a code and its values), not a sentence: it becomes text
when shown, in the language of the request that shows it (`str()`), and the JSON answer carries
its code for scripts (`edit_views._refused`). New wording goes here, and into the zh-hans
catalogue with `make messages`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext

from canvases.mermaid import wording
from canvases.page_types import ProblemItem
from memviz.said import said, said_or

TEXTS: dict[str, Promise] = {
    # the canvas file and its index
    "not_indexed": _("%(file)s is no longer indexed; it left the disk"),
    "vanished": _("%(file)s vanished from disk (the agent may have deleted it); nothing was written"),
    "not_plain_file": _("%(file)s is not a plain file of the agent folder: %(reason)s"),
    "too_large": _("%(reason)s; memviz does not edit it"),
    "not_utf8": _("%(file)s holds bytes that are not UTF-8; editing it would lose them"),
    "db_recovered": _(
        "the database refused to record the change, so memviz finished it from its journal as "
        "r%(number)s; reload to see it"
    ),
    "db_busy": _("the database was busy and nothing was written; try again"),
    # the request
    "unknown_op": _("unknown operation %(op)r; expected one of %(ops)s"),
    "revision_number": _("'revision' must be a revision number"),
    "base_required": _("'base' (the content hash the edit was made on) is required"),
    "changed_and_touched": _(
        "the agent changed this canvas since you loaded it, and the nodes you edited changed "
        "too; reload to see its version"
    ),
    "changed_reload": _("the agent changed this canvas since you loaded it; reload"),
    "no_change": _("this edit changes nothing"),
    # what a write did (edit_views)
    "written": _("r%(number)s: %(op)s written to mmds/%(file)s"),
    "written_rows": _(
        "r%(number)s: %(op)s written to mmds/%(file)s; %(rows)s row(s) updated in the offload files"
    ),
    "synced": _("re-read from disk"),
    "already_synced": _("the index already matched the file on disk"),
    "restored": _("restored revision %(number)s as r%(new)s"),
    # adopt
    "no_such_node": _("there is no node %(node)r in %(file)s"),
    "rows_already_there": _("the rows already belong to that node"),
    "no_rows_with_id": _("no rows have node_id %(node)r"),
    # history
    "nothing_to_undo": _("nothing to undo"),
    "nothing_to_redo": _("nothing to redo"),
    "changed_since_revision": _(
        "the canvas changed since revision %(number)s (the agent rewrote it or another edit "
        "followed); restore a revision from the history instead"
    ),
    "no_such_revision": _("there is no revision %(number)s"),
    "already_that_text": _("the canvas already has the text of revision %(number)s"),
    "not_reappliable": _("revision %(number)s is not an edit that can be re-applied"),
    "nothing_lost": _("nothing of r%(number)s is lost: the canvas shows what it wrote"),
    "older_over_newer": _(
        "r%(number)s would write older values over a newer edit of the same field: %(taken)s; "
        "nothing was written"
    ),
    "none_remarked": _("no row dropped by revision %(number)s was re-marked by the agent"),
    # resume
    "resume_while_live": _(
        "the agent looks live (%(reasons)s): a running gateway overwrites state.json within "
        "seconds. Stop it first, or confirm to write anyway."
    ),
    "state_unwritable": _("state.json cannot be written: %(reason)s"),
    "resumed": _("%(file)s is now the active canvas in state.json"),
    "resume_overwritten": _(
        "state.json was overwritten right after the write (it names %(active)r): stop the "
        "agent's gateway and try again"
    ),
    # the request (edit_views, edit_ops)
    "body_not_json": _("the request body is not valid JSON"),
    "body_not_object": _("the request body must be a JSON object"),
    "field_number": _("%(field)s must be a number"),
    "step_not_json": _("a step is not valid JSON"),
    "op_required": _("'op' is required"),
    "field_required": _("%(field)s is required"),
    "field_text": _("%(field)s must be text"),
    "field_ids": _("%(field)s must be a list of node ids"),
    "field_value": _("%(field)s must be text or a number"),
    "would_not_parse": _("the edited canvas would not parse; nothing was written"),
    # writing (write_path)
    "changed_while_writing": _(
        "the agent changed this canvas while the edit was being written; reload and try again"
    ),
    "name_taken": _(
        "mmds/%(file)s appeared on disk while the new canvas was being written (the agent may "
        "have started a task under that number); nothing was written, try again"
    ),
    "rows_not_updated": _(
        "the canvas was written but the rows of %(file)s could not be updated (%(reason)s); "
        "memviz finishes this change at the next write to this agent or at start-up"
    ),
    "disk_refused": _("could not write %(file)s: %(reason)s; nothing was changed"),
    # branches
    "branch_no_revision": _("%(file)s has no revision %(number)s"),
    "branch_no_session": _("%(agent)s has no session %(session)r"),
    "branch_no_canvas_at_row": _("the replay shows no canvas at row %(line)s"),
    "branch_not_rebuilt": _("the canvas of that instant cannot be rebuilt: %(reason)s"),
    "branch_while_live": _(
        "the agent looks live (%(reasons)s): it starts a new canvas under the next number when it "
        "switches task, and may pick this branch's number at the same moment (memviz checks "
        "right before and after writing, but cannot lock the agent out). Stop the gateway first, "
        "or confirm to write anyway."
    ),
    # a live agent (canvases/live_rules.py)
    "drop_while_live": _(
        "the agent looks live (%(reasons)s): a running gateway re-marks the rows it compresses, "
        'which turns "deleted" back into true, and it reads "deleted" only when a session is '
        "loaded again (spec §4.8.5). Stop the gateway first, or confirm to mark the rows anyway: "
        "rows the agent re-marks are then listed on this canvas's page and its agent's page, "
        'with "drop again".'
    ),
    # why the agent looks live (canvases/liveness.py): the reasons the live rules name
    "live_written": _("its folder was written %(seconds)s s ago"),
    "live_mid_flight": _("its map-builder is mid-flight (%(rows)s rows claimed as wait)"),
    "live_claim_unindexed": _(
        "its map-builder has just claimed rows (wait) that memviz is still indexing"
    ),
    "reapply_while_live": _(
        "the agent looks live (%(reasons)s): its map-builder may drop this edit again within two "
        "minutes. Confirm to re-apply it anyway."
    ),
    "header_while_live": _(
        "memviz wrote the agent-readable metadata line at the top, which moves every line down "
        "by one: a map-builder reply already in flight splices its blocks by line number and can "
        "land one line off. memviz checks the canvas after the agent's next write and offers "
        "re-apply"
    ),
    "drop_confirmed": _(
        'the rows are marked "deleted", but the agent is running: it drops them from its context '
        "only when the session is loaded again, and may re-mark them meanwhile (the page will "
        "say so)"
    ),
    "reapplied_on_newer": _(
        "the agent had changed this canvas since you loaded it; your edit touched nodes it did "
        "not change, so it was applied to the agent's newer version"
    ),
    "edit_while_live": _(
        "the agent is live: its map-builder may overwrite this edit within two minutes; memviz "
        "keeps the edit in its history and offers to re-apply what a rewrite drops"
    ),
    "moves_lines_in_flight": _(
        "%(reason)s: its reply will splice blocks into this canvas by line number (spec §7 "
        "hazard 3), and this change would insert a line above lines the reply may target, so "
        "the reply would land on the wrong lines. Nothing was written; try again once the reply "
        "has landed (about two minutes at most)."
    ),
}


class Said:
    """A message by code with its values: text (in the active language) when ``str()``-ed.

    The codes are this module's `TEXTS` and the engine's refusals and notes (`canvases/mermaid/
    wording.py`, whose English words are translated here); the two share no code.
    """

    __slots__ = ("code", "values")

    def __init__(self, code: str, **values: Any) -> None:
        if code not in TEXTS and code not in wording.TEXTS:
            raise KeyError(f"no message {code!r} in canvases/messages.py")
        self.code = code
        self.values = values

    @classmethod
    def engine(cls, said: wording.EditError | wording.Note | wording.Words) -> Said:
        """What the engine refused, noted or found, by its code, in the reader's language (a
        cause inside it is translated too: `memviz.said.said`)."""
        return cls(said.code, **said.values)

    def __str__(self) -> str:
        # Both tables' words are %-formatted always, with or without values (a literal percent
        # sign is written %%), as wording.py formats the engine's.
        words = TEXTS.get(self.code)
        return (
            said(wording.TEXTS, self.code, self.values)
            if words is None
            else str(words) % self.values
        )

    def __repr__(self) -> str:
        return f"Said({self.code!r}, {self.values!r})"


def problem_item(problem: Mapping[str, Any]) -> ProblemItem:
    """A parse problem as the index keeps it, as a page lists it."""
    return {
        "line": int(problem["line"]),
        "col": int(problem.get("col", 1)),
        "code": str(problem.get("code", "")),
        "message": problem_text(problem),
        "severity": str(problem["severity"]),
    }


def reason_text(reason: wording.Words | None) -> str:
    """Why the agent reads no metadata, in the reader's language ("" when it reads it)."""
    return str(Said.engine(reason)) if reason is not None else ""


def problem_text(problem: Mapping[str, Any]) -> str:
    """A parse problem, found now or kept by the index, in the reader's language (a cause inside
    it translated too); one indexed before problems had codes keeps its English message, as one
    whose values no longer fit its words."""
    return said_or(
        wording.TEXTS,
        str(problem.get("code", "")),
        problem.get("values") or {},
        str(problem.get("message", "")),
    )


def severity_word(severity: str) -> str:
    """"error" or "warning", as a problem list shows it."""
    if severity == "warning":
        return pgettext("problem severity", "warning")
    return pgettext("problem severity", "error")


def said_notes(notes: list[wording.Note]) -> list[str]:
    """An edit's notes in the reader's language."""
    return [str(Said.engine(note)) for note in notes]


def reasons(items: list[str]) -> str:
    """A live agent's reasons, joined as every message shows them."""
    return "; ".join(items)
