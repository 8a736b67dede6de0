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
FORM_NAMES = {
    "loose": "loose `key: value` members the agent cannot parse",
    "single_percent": "single percent signs `%{ … }%`, which the agent does not read",
    "comment": "comment lines `%% key: value`, which the agent ignores",
    "json": "JSON the agent cannot read where it stands",
}


def write_header(patch: Patch, doc: Canvas, updates: dict[str, object] | None = None) -> list[str]:
    """Add to `patch` whatever makes line 1 the strict header with `updates`; returns notes."""
    agent = read_meta(doc.text)
    if agent.on_line_one and not updates:
        return []
    notes: list[str] = []
    if agent.readable:
        values = dict(agent.values)
        if not agent.on_line_one:
            notes.append("rewrote the metadata header, which spanned several lines, as line 1")
    else:
        values = _agent_keys(dict(doc.meta.values), notes) or {"taskGoal": ""}
        notes.insert(0, _conversion_note(doc, agent))
    line = format_braced(merge_keys(values, updates or {}))
    _place(patch, doc, agent, line)
    return notes


def _agent_keys(values: dict[str, object], notes: list[str]) -> dict[str, object]:
    """Other spellings of taskGoal/createdTime/updatedTime renamed to the agent's keys, in place."""
    result: dict[str, object] = {}
    for key, value in values.items():
        agent_key = AGENT_KEYS.get(key.lower(), key)
        if agent_key != key and agent_key not in values and agent_key not in result:
            notes.append(f"renamed {key!r} to {agent_key!r}, the key the agent reads")
            key = agent_key
        result[key] = value
    return result


def _conversion_note(doc: Canvas, agent: AgentMeta) -> str:
    if doc.meta.form == "none":
        return (
            "added a metadata line 1 (`%%{ … }%%`): without one the agent reads no task goal "
            "and deletes a small canvas as an empty shell"
        )
    was = FORM_NAMES.get(doc.meta.form, doc.meta.form)
    if doc.meta.form == "json":
        was = f"{was}: {agent.problem}"
    return f"wrote the metadata as strict JSON on line 1, where the agent reads it (was {was}); every value kept"


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
