"""The metadata header as every edit writes it: one strict JSON `%%{ … }%%` line at byte 0.

The agent reads metadata only there (format spec §4.8.1), and a file without `%%{` may be deleted
as an empty shell (§4.8.4). A canvas whose header the agent already reads keeps it byte for byte
unless an edit changes a value; any other form (comment lines, loose keys, the prompt's typo,
`%{ }%`, a header below line 1 or after a BOM, none) is rewritten as the strict line, keeping
every value, and the edit says so in its notes.
"""

from __future__ import annotations

from .agent_view import META, AgentMeta, read_meta
from .meta import format_braced, merge_keys
from .model import Canvas
from .patch import Patch
from .wording import Note

# Spellings of the keys the agent reads, as other writers and the L2 prompt's typos have them.
AGENT_KEYS = {
    "taskgoal": "taskGoal",
    "task_goal": "taskGoal",
    "goal": "taskGoal",
    "createdtime": "createdTime",
    "created_time": "createdTime",
    "created": "createdTime",
    "updatedtime": "updatedTime",
    "updated_time": "updatedTime",
    "updated": "updatedTime",
}
def write_header(patch: Patch, doc: Canvas, updates: dict[str, object] | None = None) -> list[Note]:
    """Add to `patch` whatever makes line 1 the strict header with `updates`; returns notes."""
    agent = read_meta(doc.text)
    if agent.on_line_one and not updates:
        return []
    notes: list[Note] = []
    if agent.readable:
        values = dict(agent.values)
        if not agent.on_line_one:
            notes.append(Note("header_rewrapped"))
    else:
        values = _agent_keys(dict(doc.meta.values), notes) or {"taskGoal": ""}
        notes.insert(0, _conversion_note(doc, agent))
    line = format_braced(merge_keys(values, updates or {}))
    _place(patch, doc, agent, line)
    return notes


def _agent_keys(values: dict[str, object], notes: list[Note]) -> dict[str, object]:
    """Other spellings of taskGoal/createdTime/updatedTime renamed to the agent's keys, in place."""
    result: dict[str, object] = {}
    for key, value in values.items():
        agent_key = AGENT_KEYS.get(key.lower(), key)
        if agent_key != key and agent_key not in values and agent_key not in result:
            notes.append(Note("key_renamed", key=key, agent_key=agent_key))
            key = agent_key
        result[key] = value
    return result


def _conversion_note(doc: Canvas, agent: AgentMeta) -> Note:
    form = doc.meta.form
    if form == "none":
        return Note("header_added")
    if form == "json":
        return Note("header_from_json", problem=agent.problem)
    if form in ("loose", "single_percent", "comment"):
        return Note(f"header_from_{form}")
    return Note("header_from_other", form=form)


def _place(patch: Patch, doc: Canvas, agent: AgentMeta, line: str) -> None:
    """Replace the header the file has (or its comment lines) with `line` at byte 0."""
    if agent.readable and not agent.on_line_one:  # a header wrapped over several lines
        match = META.match(doc.text)
        assert match is not None
        patch.replace(0, match.end(), line)
        return
    bom = 1 if doc.text.startswith("\ufeff") else 0
    statements = [
        s
        for s in doc.statements
        if (s.kind == "meta" and s.line == doc.meta.line)
        or (s.kind == "meta_comment" and doc.meta.form == "comment")
    ]
    if statements and statements[0].line == 1 and statements[0].kind == "meta":
        patch.replace(0, statements[0].stop, line)  # the BOM and any indent go with it
        return
    if bom:
        patch.replace(0, bom, "")
    for statement in statements:  # header statements are whole lines (they start with `%`)
        start, _, after = patch.line_bounds(statement.line)
        patch.replace(max(start, bom), after, "")
    patch.replace(0, 0, line + "\n")
