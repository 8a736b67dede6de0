"""How a search runs on PostgreSQL: through the GIN index, or down the id index, by word frequency.

A GIN index answers "which rows hold this word" by building a bitmap of every one of them, then
sorting them by id: instant for a rare word, a second for a word on every row. Walking the id
index newest first and testing each row is the reverse. The planner picks between the two from
its statistics, and gets it wrong exactly when it matters (a common word that is absent from
the newest rows). So the choice is made here, from the same statistics (``pg_stats``' most
common lexemes, refreshed by ANALYZE): the GIN index is asked only for rare words, and a query
of common words only is walked window by window (see ``sessions.search``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.db import connection

from sessions.search_terms import query_lexemes, tsquery

# A lexeme on more than this share of documents is "common": not worth a GIN bitmap.
COMMON_SHARE = 0.002
STATS_SECONDS = 300.0
_stats: dict[str, tuple[float, dict[str, float]]] = {}


def common_lexemes(table: str, column: str) -> dict[str, float]:
    """The most common lexemes of a tsvector column and their shares (cached a few minutes)."""
    key = f"{table}.{column}"
    cached = _stats.get(key)
    if cached and time.monotonic() - cached[0] < STATS_SECONDS:
        return cached[1]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
            "WHERE tablename = %s AND attname = %s",
            [table, column],
        )
        found = cursor.fetchone()
    shares = dict(zip(found[0], found[1], strict=False)) if found and found[0] else {}
    _stats[key] = (time.monotonic(), shares)
    return shares


@dataclass(frozen=True)
class Plan:
    """``index``: a tsquery of the rare lexemes, for the GIN index (None: walk the ids).
    ``check``: the whole query's tsquery, tested on each candidate row."""

    index: str | None
    check: str | None


def plan(query: str, table: str, column: str) -> Plan:
    lexemes = query_lexemes(query)
    shares = common_lexemes(table, column)

    def share(word: str, prefix: bool) -> float:
        if not prefix:
            return shares.get(word, 0.0)  # a word the statistics do not list is rare
        if len(word) < 3:
            return 1.0  # a short prefix stands for a great many words
        return sum(f for lexeme, f in shares.items() if lexeme.startswith(word))

    rare = [(word, prefix) for word, prefix in lexemes if share(word, prefix) <= COMMON_SHARE]
    return Plan(index=tsquery(rare), check=tsquery(lexemes))
