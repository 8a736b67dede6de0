"""What the folder reader says to people: why a line of an offload JSONL is not a row, and why
a file was refused (`LinkRefused`), one code each, the English words here and only here.

Django-free like the rest of `agentfs`: ``words(code, values)`` is the English sentence
(the index keeps it beside the code, scripts and logs read it). The pages translate the code
(`sessions/reader_words.py`); the table's shape is `canvases/mermaid/code_words.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from canvases.mermaid.code_words import CodeWords, gettext_noop

TEXTS = CodeWords(
    "agentfs/wording.py",
    {
        # a line of an offload JSONL (jsonl.py)
        "unreadable_line": gettext_noop("unreadable line (%(error)s)"),
        "invalid_json": gettext_noop("invalid JSON: %(error)s"),
        "too_deep": gettext_noop("nested more than %(limit)s levels deep"),
        "not_object": gettext_noop("not a JSON object (a %(type)s)"),
        "no_tool_call_id": gettext_noop("missing tool_call_id"),
        "empty_tool_call_id": gettext_noop("empty tool_call_id"),
        "tool_call_id_type": gettext_noop("tool_call_id is not a string"),
        "line_too_long": gettext_noop("line too long (%(length)s bytes, limit %(limit)s)"),
        "incomplete_last_line": gettext_noop(
            "incomplete last line (no newline): corrupt, unless the agent is still writing it"
        ),
        # a path a memory folder names that would leave it (paths.py: UnsafePath)
        "path_empty": gettext_noop("empty path"),
        "path_nul": gettext_noop("path contains a NUL byte: %(path)r"),
        "path_backslash": gettext_noop("path contains a backslash: %(path)r"),
        "path_absolute": gettext_noop("absolute path refused: %(path)r"),
        "path_dotdot": gettext_noop("path contains '..': %(path)r"),
        "path_leaves": gettext_noop("path leaves the folder through a link: %(path)r"),
        # a file memviz will not open (paths.py)
        "is_link": gettext_noop(
            "%(name)s is a symbolic link: memviz does not follow links inside memory folders"
        ),
        "folder_link": gettext_noop(
            "%(name)s: a folder on the way is a link: memviz does not follow links inside memory "
            "folders"
        ),
        "not_regular": gettext_noop("%(name)s is not a regular file"),
        "too_large": gettext_noop("%(name)s is larger than %(limit)s bytes"),
        "unreadable": gettext_noop("%(name)s could not be read (%(error)s)"),
        # state.json and sessions-registry.json (state.py)
        "no_file": gettext_noop("no %(name)s"),
        "file_missing": gettext_noop("%(name)s is missing"),
        "json_bom": gettext_noop("%(name)s starts with a BOM (the plugin treats it as corrupt)"),
        "json_invalid": gettext_noop("%(name)s is not valid JSON: %(error)s"),
        "json_unparsable": gettext_noop("%(name)s cannot be parsed (%(error)s)"),
        "json_not_object": gettext_noop("%(name)s is not a JSON object"),
        "json_too_deep": gettext_noop("%(name)s is nested more than %(limit)s levels deep"),
        "registry_skipped": gettext_noop("entries that are not objects were skipped: %(keys)s"),
    },
)

words = TEXTS.words  # the English sentence of a code with its values (a mapping, or by name)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A file or folder of an agent that memviz left out, and why: a code with its values;
    ``where`` names the file when the words name only its base name (``mmds/x.mmd``)."""

    code: str
    values: dict[str, Any] = field(default_factory=dict, hash=False)
    where: str = ""

    @property
    def reason(self) -> str:
        """The English sentence (scripts, logs, the index beside the code)."""
        said = words(self.code, self.values)
        return f"{self.where}: {said}" if self.where else said

    def __str__(self) -> str:
        return self.reason

    def as_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "values": self.values,
            "where": self.where,
            "reason": self.reason,
        }


def refusal_of(error: OSError, name: str, where: str = "") -> Refusal:
    """Why reading ``name`` failed with ``error``: its own code (a link, a FIFO, too large),
    else the system's words for it."""
    code, values = getattr(error, "code", ""), getattr(error, "values", None)
    if isinstance(code, str) and code in TEXTS and isinstance(values, dict):
        return Refusal(code, dict(values), where)
    return Refusal("unreadable", {"name": name, "error": error.strerror or str(error)}, where)
