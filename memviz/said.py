"""A code of a `CodeWords` table in the reader's language: the one translation of the Django-free
tables' words (`canvases/mermaid/code_words.py`), for the pages, the JSON twins and the logs."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext

from canvases.mermaid.code_words import CodeWords


def said(table: CodeWords, code: str, values: Mapping[str, object] | None = None) -> str:
    """The words of ``code`` translated, with ``values``; KeyError for a code not in ``table``."""
    if code not in table:
        raise KeyError(f"no wording {code!r} in {table.home}")
    return gettext(table[code]) % dict(values or {})


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
