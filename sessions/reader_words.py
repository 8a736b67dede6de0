"""What the folder reader said, in the reader's language: a session's line problems as the
pages list them (with their code), and why a file was refused (`LinkRefused`).

The index keeps each problem as the reader found it (`agentfs/jsonl.py`: code, values
and the English `reason`); this translates the code's words (`agentfs/wording.py`). A
problem indexed before problems had codes keeps its English reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import pgettext

from agentfs import wording
from agentfs.paths import LinkRefused, UnsafePath
from memviz.said import said, said_or
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


def refusal_words(refused: LinkRefused | UnsafePath | OSError | ValueError) -> str:
    """Why a path or a file was refused, in the reader's language (a refusal without a code of
    the folder reader's, e.g. a free sentence, reads as it is)."""
    return said_or(
        wording.TEXTS, getattr(refused, "code", ""), getattr(refused, "values", {}), str(refused)
    )


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
    reason = said_or(
        wording.TEXTS, code, problem.get("values") or {}, str(problem.get("reason", ""))
    )
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
    try:
        words = said(wording.TEXTS, code, stored.get("values") or {})
    except (KeyError, TypeError, ValueError):  # no such code, or values that no longer fit
        return {"code": "", "text": str(stored.get("reason", ""))}
    where = str(stored.get("where") or "")
    return {"code": code, "text": f"{where}: {words}" if where else words}
