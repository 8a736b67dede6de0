"""Search over canvas nodes, rows and (optionally) ref texts: newest first, paged, filtered.

Each kind is searched through the database's own text index (see ``sessions.search_terms``)
in windows of ids, newest first: a window asks the index for the newest matches below a bound,
and the next window is four times larger. That keeps a common word instant (the first window
has enough hits) and a rare one too (few windows), and bounds the worst case, a query whose
pieces are all common but never meet: past ``MEMVIZ_SEARCH_BUDGET_MS`` the answer says how far
it looked and "more" goes on from there. Every candidate is re-checked as a case-insensitive
substring, so a hit always contains the query.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection

from agentfs.row_fields import drawn_as_sql
from sessions import search_postgres
from sessions.search_terms import (
    MIN_QUERY_CHARS,
    fts_and,
    fts_grams_query,
    like_pattern,
    trigram_cover,
)

PAGE = 25
FIRST_WINDOW = 20_000
MIN_WINDOW = 1_000
# A 1-2 character query that is not all CJK is looked up through the trigram index's terms;
# past this many terms a plain scan of each window is cheaper.
MAX_PREFIX_TERMS = 300


@dataclass(frozen=True)
class Filters:
    agent_id: int | None = None
    session_pk: int | None = None
    status: str = ""


@dataclass
class Found:
    """The ids of one kind's hits, newest first, and where "more" would go on from."""

    ids: list[int]
    before: int | None  # search ids below this next; None when nothing is left
    partial: bool  # stopped by the time budget before filling the page


@dataclass(frozen=True)
class Kind:
    table: str
    fts: str  # SQLite index tables: <fts>_fts, <fts>_grams, <fts>_fts_vocab
    columns: tuple[str, ...]  # re-checked as substrings
    pg_doc: tuple[str, str]  # PostgreSQL: (table, column) of the tsvector
    pg_join: str = ""

    @property
    def pg_column(self) -> str:
        return "s.doc" if self.pg_join else "t.search"


ROWS = Kind(
    table="agent_sessions_row",
    fts="agent_sessions_row",
    columns=("tool_call", "summary"),
    pg_doc=("agent_sessions_row", "search"),
)
NODES = Kind(
    table="canvases_canvasnode",
    fts="agent_sessions_node",
    columns=("node_id", "title", "summary"),
    pg_doc=("agent_sessions_nodesearch", "doc"),
    pg_join="JOIN agent_sessions_nodesearch s ON s.node_id = t.id",
)
REFS = Kind(
    table="agent_sessions_ref",
    fts="agent_sessions_ref",
    columns=(),  # re-checked against the indexed text itself (SQLite), see _recheck_sql
    pg_doc=("agent_sessions_ref", "search"),
)


def _filter_sql(kind: Kind, filters: Filters) -> tuple[str, list[Any]]:
    sql = ""
    params: list[Any] = []
    if filters.agent_id is not None:
        sql += " AND t.agent_id = %s"
        params.append(filters.agent_id)
    if kind is ROWS and filters.session_pk is not None:
        sql += " AND t.session_id = %s"
        params.append(filters.session_pk)
    if filters.status and kind is NODES:
        sql += " AND t.status = %s"
        params.append(filters.status)
    elif filters.status and kind is ROWS:
        # rows placed on a node that has this status now
        sql += (
            " AND EXISTS (SELECT 1 FROM canvases_canvasnode c WHERE c.agent_id = t.agent_id"
            f" AND c.node_id IN {drawn_as_sql('t.node_id')} AND c.status = %s)"
        )
        params.append(filters.status)
    return sql, params


def _recheck_sql(kind: Kind, query: str) -> tuple[str, list[Any]]:
    if kind is REFS:
        if connection.vendor == "sqlite":
            return f" AND {kind.fts}_fts.body LIKE %s ESCAPE '\\'", [like_pattern(query)]
        return "", []  # PostgreSQL keeps no ref text: its word match is the answer
    op = "LIKE" if connection.vendor == "sqlite" else "ILIKE"
    escape = " ESCAPE '\\'" if connection.vendor == "sqlite" else ""
    sql = " OR ".join(f"t.{column} {op} %s{escape}" for column in kind.columns)
    return f" AND ({sql})", [like_pattern(query)] * len(kind.columns)


Fetch = Callable[[int, int, int], list[int]]


@dataclass(frozen=True)
class Fetcher:
    """``fetch(low, high, limit)``: ids in [low, high), newest first. ``windowed`` False: one
    call may cover the whole range (the index finds few candidates wherever they are)."""

    fetch: Fetch
    windowed: bool = True


def _fetcher(kind: Kind, query: str, filters: Filters, low: int, high: int) -> Fetcher | None:
    """How to look for ``query`` among ids ``low..high``; None when there can be no hit."""
    where, params = _filter_sql(kind, filters)
    recheck, recheck_params = _recheck_sql(kind, query)
    if len(query) < MIN_QUERY_CHARS:
        # One character: no index holds it whole, so a windowed scan of the (small) node
        # table; rows and refs are not searched (search_ids, and the page says so).
        return None if kind is not NODES else _scan(kind, where, params, recheck, recheck_params)
    if connection.vendor == "postgresql":
        plan = search_postgres.plan(query, *kind.pg_doc)
        if kind is REFS and not plan.check:
            return None
        # "(...) IS TRUE" tests each row without letting the planner pick the GIN index.
        index = f" AND {kind.pg_column} @@ %s::tsquery" if plan.index else ""
        check = f" AND ({kind.pg_column} @@ %s::tsquery) IS TRUE" if plan.check else ""
        head = f"SELECT t.id FROM {kind.table} t {kind.pg_join} WHERE t.id >= %s AND t.id < %s"
        sql = f"{head}{index}{check}{recheck}{where} ORDER BY t.id DESC LIMIT %s"
        lead = [q for q in (plan.index, plan.check) if q]
        run = _runner(sql, lambda lo, hi, k: [lo, hi, *lead, *recheck_params, *params, k])
        return Fetcher(run, windowed=plan.index is None)
    match = _sqlite_match(kind, query, low, high)
    if match is None:
        return None if kind is REFS else _scan(kind, where, params, recheck, recheck_params)
    table, expression = match
    if not expression:
        return None
    sql = (
        f"SELECT {table}.rowid FROM {table} JOIN {kind.table} t ON t.id = {table}.rowid "
        f"WHERE {table} MATCH %s AND {table}.rowid >= %s AND {table}.rowid < %s"
        f"{recheck}{where} ORDER BY {table}.rowid DESC LIMIT %s"
    )
    if kind is REFS:
        # the recheck reads the stored text of the trigram table
        sql = sql.replace(f"{kind.fts}_fts.body", f"{table}.body")
    return Fetcher(
        _runner(sql, lambda lo, hi, k: [expression, lo, hi, *recheck_params, *params, k])
    )


def _scan(kind: Kind, where: str, params: list[Any], recheck: str, recheck_params: list[Any]) -> Fetcher:
    """No index helps: each window of ids is scanned with the substring test."""
    sql = (
        f"SELECT t.id FROM {kind.table} t WHERE t.id >= %s AND t.id < %s{recheck}{where} "
        "ORDER BY t.id DESC LIMIT %s"
    )
    return Fetcher(_runner(sql, lambda lo, hi, k: [lo, hi, *recheck_params, *params, k]))


def _sqlite_match(kind: Kind, query: str, low: int, high: int) -> tuple[str, str] | None:
    """(FTS table, MATCH expression) for ``query``; None: no index helps, scan instead;
    an empty expression: the index proves there is no hit."""
    cover = trigram_cover(query)
    if cover:
        return f"{kind.fts}_fts", _rarest(kind, cover, low, high, query)
    grams = fts_grams_query(query)
    if grams:
        return f"{kind.fts}_grams", grams
    if kind is REFS:
        return None
    # 1-2 characters: every indexed trigram that starts with them (texts end with a newline,
    # so a match at the very end is one too).
    prefix = query.lower()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT term FROM {kind.fts}_fts_vocab WHERE term >= %s AND term < %s LIMIT %s",
            [prefix, prefix + "\U0010ffff", MAX_PREFIX_TERMS + 1],
        )
        terms = [term for (term,) in cursor.fetchall()]
    if len(terms) > MAX_PREFIX_TERMS:
        return None
    return f"{kind.fts}_fts", " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


PROBE = 300
MAX_PROBES = 16


def _rarest(kind: Kind, cover: list[str], low: int, high: int, query: str = "") -> str:
    """The MATCH expression of the trigrams that are rare among ids ``low..high``.

    Stepping through "mod" and ".py" (on every row of a code agent) costs more than their
    selectivity is worth when "123" is rare: each trigram's hits are counted up to PROBE (a
    bounded probe, ~0.2 ms), and only the rare ones are asked for. The cover's trigrams are
    probed first; if none of them is rare, the query's other trigrams are (up to MAX_PROBES in
    all): in "module_123.py" the cover is "mod ule _12 3.p .py", and only "123", which it
    skips, is rare within one session (100 rows of 50,000; the five cover trigrams together
    cost 5 ms there, "123" alone 0.3 ms). Any subset of the query's trigrams is a sound
    pre-filter: every hit holds them all, and the substring re-check does the rest. A
    trigram with no hit at all proves there is none. Where all are common, the cover's are
    asked for: then their intersection is what filters.
    """
    if len(cover) <= 2:
        return fts_and(cover)
    covered = {t.lower() for t in cover}
    others = []
    for i in range(len(query) - 2):
        if (term := query[i : i + 3]).lower() not in covered:
            covered.add(term.lower())
            others.append(term)
    counts: dict[str, int] = {}
    with connection.cursor() as cursor:
        for term in [*cover, *others][:MAX_PROBES]:
            cursor.execute(
                f"SELECT count(*) FROM (SELECT rowid FROM {kind.fts}_fts WHERE {kind.fts}_fts "
                "MATCH %s AND rowid >= %s AND rowid <= %s LIMIT %s)",
                [fts_and([term]), low, high, PROBE],
            )
            counts[term] = cursor.fetchone()[0]
            if not counts[term]:
                return ""
            if len(counts) == len(cover) and any(n < PROBE for n in counts.values()):
                break  # the cover has a rare trigram: no need to look further
    rare = sorted((t for t in counts if counts[t] < PROBE), key=counts.__getitem__)
    return fts_and(rare[:3] or cover)


def _runner(sql: str, params: Callable[[int, int, int], list[Any]]) -> Fetch:
    def fetch(low: int, high: int, limit: int) -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute(sql, params(low, high, limit))
            return [pk for (pk,) in cursor.fetchall()]

    return fetch


_ROW_ENDS = (
    "(SELECT id FROM agent_sessions_row WHERE session_id = {s} ORDER BY line_no {order} LIMIT 1)"
)


def _id_range(kind: Kind, filters: Filters) -> tuple[int, int]:
    """The ids the filters can match. A session's rows were inserted in file order, so its
    first and last lines bound them (two index lookups); an agent's are within its sessions'.
    Searching only there matters: an old session lies far below the newest windows."""
    if kind is ROWS and filters.session_pk is not None:
        sql = (
            f"SELECT {_ROW_ENDS.format(s='%s', order='ASC')}, "
            f"{_ROW_ENDS.format(s='%s', order='DESC')}"
        )
        params: list[Any] = [filters.session_pk, filters.session_pk]
    elif kind is ROWS and filters.agent_id is not None:
        sql = (
            f"SELECT MIN({_ROW_ENDS.format(s='s.id', order='ASC')}), "
            f"MAX({_ROW_ENDS.format(s='s.id', order='DESC')}) "
            "FROM agent_sessions_agentsession s WHERE s.agent_id = %s"
        )
        params = [filters.agent_id]
    else:
        # one aggregate per SELECT: SQLite reads MIN or MAX off the index only when alone
        sql = f"SELECT (SELECT MIN(id) FROM {kind.table}), (SELECT MAX(id) FROM {kind.table})"
        params = []
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        low, high = cursor.fetchone()
    return low or 0, high or 0


def search_kind(
    kind: Kind, query: str, filters: Filters, *, before: int | None, deadline: float, limit: int
) -> Found:
    """The newest ``limit`` hits below ``before``, window by window (see the module doc)."""
    low, high = _id_range(kind, filters)
    fetcher = _fetcher(kind, query, filters, low, high)
    if fetcher is None:
        return Found([], None, False)
    top = min(before, high + 1) if before is not None else high + 1
    ids: list[int] = []
    window = FIRST_WINDOW if fetcher.windowed else top - low
    while top > low and len(ids) <= limit:
        bottom = max(low, top - window)
        started = time.monotonic()
        ids += fetcher.fetch(bottom, top, limit + 1 - len(ids))
        spent = time.monotonic() - started
        scanned, top = top - bottom, bottom
        left = deadline - time.monotonic()
        if left <= 0:
            break
        # Four times larger, but no larger than what the time left can scan at this pace.
        window = max(MIN_WINDOW, min(window * 4, int(scanned * 0.8 * left / max(spent, 1e-4))))
    if len(ids) > limit:
        return Found(ids[:limit], ids[limit - 1], False)
    if top > low:
        return Found(ids, top, True)
    return Found(ids, None, False)


def search_ids(
    query: str,
    filters: Filters,
    *,
    rows_before: int | None = None,
    nodes_before: int | None = None,
    refs_before: int | None = None,
    limit: int | None = None,
    kinds: tuple[str, ...] = ("nodes", "rows", "refs"),
) -> dict[str, Found]:
    """Hit ids per kind ("nodes", "rows", "refs"); ``*_before`` pages on from a "more" link."""
    found = {name: Found([], None, False) for name in ("nodes", "rows", "refs")}
    limit = limit or PAGE
    if not query:
        return found
    if len(query) < MIN_QUERY_CHARS:
        kinds = tuple(k for k in kinds if k == "nodes")  # see _fetcher
    deadline = time.monotonic() + settings.MEMVIZ_SEARCH_BUDGET_MS / 1000
    plan = [("nodes", NODES, nodes_before), ("rows", ROWS, rows_before)]
    if settings.MEMVIZ_INDEX_REF_TEXT:
        plan.append(("refs", REFS, refs_before))
    for name, kind, before in plan:
        if name in kinds:
            found[name] = search_kind(
                kind, query, filters, before=before, deadline=deadline, limit=limit
            )
    return found
