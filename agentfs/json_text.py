"""The one parser of JSON text from a memory folder (rows, state, registry, pushed events).

JSON.parse semantics: ``NaN`` / ``Infinity`` literals are errors (the plugin's reader rejects
them too). A number too large for a double (``1e400``) is valid JSON that Python would turn into
``inf``, which no database, template or later ``json.dumps`` may hold: it is kept as its original
text instead (``"1e400"``), or refused where a value must round-trip exactly (``keep_text=False``).
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["NumberOutOfRange", "dumps", "loads"]


class NumberOutOfRange(ValueError):
    """A number of the text that no double holds (only raised with ``keep_text=False``)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _float_kept_as_text(text: str) -> float | str:
    value = float(text)
    return value if math.isfinite(value) else text


def _float_or_refuse(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NumberOutOfRange(f"the number {text[:40]} is out of range")
    return value


def loads(text: str | bytes, *, keep_text: bool = True) -> Any:
    """Parse ``text``; ValueError for invalid JSON (RecursionError for hostile nesting)."""
    hook = _float_kept_as_text if keep_text else _float_or_refuse
    return json.loads(text, parse_constant=_reject_constant, parse_float=hook)


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` that never writes NaN/Infinity (ValueError instead): the agent's JSON.parse
    would reject the whole file."""
    return json.dumps(value, allow_nan=False, **options)
