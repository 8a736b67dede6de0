"""A code of a `CodeWords` table in the reader's language: the one translation of the Django-free
tables' words (`canvases/mermaid/code_words.py`), for the pages, the JSON twins and the logs."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext

from canvases.mermaid.code_words import CodeWords


def said(table: CodeWords, code: str, values: Mapping[str, object] | None = None) -> str:
    """The words of ``code`` translated, with ``values``; KeyError for a code not in ``table``.

    A value that is itself a code of ``table`` with its values (the engine's `Words` as the cause
    inside a sentence, a `Note`) is said in the same language, not left in English."""
    words = gettext(table[table.check(code)])
    given = dict(values or {})  # TypeError/ValueError for values that are no mapping
    return words % {name: _said_value(table, value) for name, value in given.items()}


def _said_value(table: CodeWords, value: object) -> object:
    code, values = getattr(value, "code", None), getattr(value, "values", None)
    if isinstance(code, str) and code in table and isinstance(values, Mapping):
        return said(table, code, values)
    return value


def said_or(table: CodeWords, code: str, values: object, fallback: str) -> str:
    """What a stored code says, translated; ``fallback`` (the English kept beside it) when the
    code is not in the table (written before codes, or by a newer memviz) or its stored values no
    longer fit the words: a page never fails on what an older row kept."""
    if code in table and isinstance(values, Mapping):
        try:
            return said(table, code, values)
        except (KeyError, TypeError, ValueError):
            pass
    return fallback
