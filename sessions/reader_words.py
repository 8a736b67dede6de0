"""What the folder reader said, in the reader's language: a session's line problems as the
pages list them (with their code), and why a file was refused (`LinkRefused`).

The index keeps each problem as the reader found it (`agentfs/jsonl.py`: code, values
and the English `reason`); this translates the code's words (`agentfs/wording.py`). A
problem indexed before problems had codes keeps its English reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext, pgettext

from agentfs import wording
from agentfs.paths import LinkRefused, UnsafePath
from sessions.page_types import LineProblemItem, RefusedItem


def kind_word(kind: str) -> str:
    """What a line problem's kind reads as: corrupt, invalid, or partial (still being written)."""
    if kind == "corrupt":
        return pgettext("line problem", "corrupt")
    if kind == "invalid":
        return pgettext("line problem", "invalid")
    if kind == "partial":
        return pgettext("line problem", "partial")
    return kind


def reader_words(code: str, values: Mapping[str, object]) -> str:
    """The words of a code of `agentfs/wording.py` in the reader's language."""
    return gettext(wording.TEXTS[code]) % dict(values)


def refusal_words(refused: LinkRefused | UnsafePath | OSError | ValueError) -> str:
    """Why a path or a file was refused, in the reader's language (a refusal without a code of
    the folder reader's, e.g. a free sentence, reads as it is)."""
    code = getattr(refused, "code", "")
    if code in wording.TEXTS:
        return reader_words(code, getattr(refused, "values", {}))
    return str(refused)


class RefusedWords:
    """Why a path or file was refused, as a value of a message that is worded later: its
    words in the language active when the message is read (``str()``)."""

    __slots__ = ("refused",)

    def __init__(self, refused: LinkRefused | UnsafePath | OSError | ValueError) -> None:
        self.refused = refused

    def __str__(self) -> str:
        return refusal_words(self.refused)

    def __repr__(self) -> str:
        return f"RefusedWords({self.refused!r})"


def line_problem_item(problem: Mapping[str, Any]) -> LineProblemItem:
    code = str(problem.get("code", ""))
    if code in wording.TEXTS:
        reason = reader_words(code, problem.get("values") or {})
    else:
        reason = str(problem.get("reason", ""))
    return {
        "line_no": int(problem["line_no"]),
        "offset": int(problem.get("offset", 0)),
        "kind": str(problem["kind"]),
        "kind_words": kind_word(str(problem["kind"])),
        "code": code,
        "reason": reason,
        "excerpt": str(problem.get("excerpt", "")),
    }


def refused_item(stored: object) -> RefusedItem:
    """A refusal as the index keeps it (``Refusal.as_json()``; a sentence before codes)."""
    if not isinstance(stored, dict):
        return {"code": "", "text": str(stored)}
    code = str(stored.get("code", ""))
    if code not in wording.TEXTS:
        return {"code": "", "text": str(stored.get("reason", ""))}
    try:
        said = reader_words(code, stored.get("values") or {})
    except (KeyError, TypeError, ValueError):  # values that do not fit the words
        return {"code": "", "text": str(stored.get("reason", ""))}
    where = str(stored.get("where") or "")
    return {"code": code, "text": f"{where}: {said}" if where else said}
