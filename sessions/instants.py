"""Parsing the time stamps found in memory folders into comparable instants (spec §7.14)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

_FRACTION = re.compile(r"(\.\d{6})\d+")  # RFC3339Nano (Go port): Python keeps microseconds


def parse_instant(text: str | None) -> datetime | None:
    """An aware datetime for an ISO 8601 stamp (`Z`, `+08:00`, nanoseconds), None when unusable.

    A stamp without an offset is read as UTC: the plugin always writes one, so a bare stamp came
    from an LLM echo and any choice is a guess; UTC at least orders consistently.
    """
    if not text or not isinstance(text, str):
        return None
    value = _FRACTION.sub(r"\1", text.strip())
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat(timespec="milliseconds") if moment else None
