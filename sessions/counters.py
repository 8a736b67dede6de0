"""Figures kept at write time, read in a few index lookups whatever the number of rows.

``NodeRowCount`` holds, per agent and ``node_id`` value, how many rows carry it and whether it
is drawn on a canvas (triggers keep the counts, see ``sessions.db_triggers``). Canvas changes
call ``placement_refresh`` for the node ids they add or remove, which flips ``placed`` on the
count and on exactly the rows carrying those ids. Agent totals are sums over its sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.models import Count, Sum

from agentfs.row_fields import WAIT, WAIT_SQL, drawn_as, is_wait, node_aliases
from sessions.db_triggers import COUNTS, PLACED_SQL, ROW
from sessions.models import Agent, AgentSession, NodeRowCount

CHUNK = 500


@dataclass(frozen=True)
class Unplaced:
    """Rows on no canvas: node_id null, "wait" (claimed by L2), or an id drawn nowhere."""

    null: int = 0
    wait: int = 0
    dangling: int = 0

    @property
    def total(self) -> int:
        return self.null + self.wait + self.dangling


def _unplaced_by_agent(agent_ids: Sequence[int] | None) -> dict[int, Unplaced]:
    # Served by the partial index on NOT placed: a handful of count rows per agent.
    where = f"agent_id IN ({', '.join(['%s'] * len(agent_ids))}) AND " if agent_ids else ""
    # SQLite has no statistics to prefer the small partial index over the unique one.
    hint = " INDEXED BY nodecount_unplaced" if connection.vendor == "sqlite" else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT agent_id, is_null, node_id = {WAIT_SQL}, SUM(rows_count) FROM {COUNTS}{hint} "
            f"WHERE {where}NOT placed GROUP BY agent_id, is_null, node_id = {WAIT_SQL}",
            list(agent_ids or []),
        )
        found: dict[int, dict[str, int]] = {}
        for agent_id, is_null, is_wait, rows in cursor.fetchall():
            kind = "null" if is_null else "wait" if is_wait else "dangling"
            found.setdefault(agent_id, {})[kind] = int(rows or 0)
    return {agent_id: Unplaced(**kinds) for agent_id, kinds in found.items()}


def unplaced_counts(agent: Agent) -> Unplaced:
    return _unplaced_by_agent([agent.pk]).get(agent.pk, Unplaced())


def unplaced_counts_all() -> dict[int, Unplaced]:
    """Every agent's unplaced figures in one query (the agents list)."""
    return _unplaced_by_agent(None)


def dangling_node_ids(agent: Agent) -> list[tuple[str, int]]:
    """(node_id, rows) of every row node id drawn on no canvas (not null, not "wait")."""
    return list(
        NodeRowCount.objects.filter(agent=agent, placed=False, is_null=False, rows_count__gt=0)
        .exclude(node_id=WAIT)
        .order_by("node_id")
        .values_list("node_id", "rows_count")
    )


def node_row_counts(agent: Agent, node_ids: Iterable[str]) -> dict[str, int]:
    """Rows per row-side node id, for the given ids (no row is counted here)."""
    ids = sorted(set(node_ids))
    out: dict[str, int] = {}
    for start in range(0, len(ids), CHUNK):
        out.update(
            NodeRowCount.objects.filter(
                agent=agent, is_null=False, node_id__in=ids[start : start + CHUNK]
            ).values_list("node_id", "rows_count")
        )
    return {k: v for k, v in out.items() if v}


def row_keys(node_ids: Iterable[str]) -> list[str]:
    """The row ``node_id`` values a set of canvas node ids can place ("n_X" also places "X")."""
    keys = set()
    for node_id in node_ids:
        keys.update(node_aliases(node_id))
    keys.discard(WAIT)
    return sorted(keys)


def placement_refresh(agent_id: int, node_ids: Iterable[str]) -> None:
    """Canvas nodes with these ids appeared or disappeared: re-decide ``placed`` for them.

    Work is proportional to the ids given and the rows carrying them, never to the agent.
    """
    keys = row_keys(node_ids)
    with connection.cursor() as cursor:
        for start in range(0, len(keys), CHUNK):
            chunk = keys[start : start + CHUNK]
            marks = ", ".join(["%s"] * len(chunk))
            cursor.execute(
                f"UPDATE {COUNTS} SET placed = {PLACED_SQL.format(t=COUNTS)} "
                f"WHERE agent_id = %s AND NOT is_null AND node_id IN ({marks})",
                [agent_id, *chunk],
            )
            cursor.execute(
                f"SELECT node_id, placed FROM {COUNTS} "
                f"WHERE agent_id = %s AND NOT is_null AND node_id IN ({marks})",
                [agent_id, *chunk],
            )
            by_flag: dict[bool, list[str]] = {True: [], False: []}
            for node_id, placed in cursor.fetchall():
                by_flag[bool(placed)].append(node_id)
            for placed, ids in by_flag.items():
                if not ids:
                    continue
                cursor.execute(
                    f"UPDATE {ROW} SET placed = %s WHERE agent_id = %s AND node_id IN "
                    f"({', '.join(['%s'] * len(ids))}) AND placed <> %s",
                    [placed, agent_id, *ids, placed],
                )


class PlacedLookup:
    """Which row node ids a canvas of the agent draws, asked per batch of rows at ingest.

    Only the ids a batch carries are looked up (and remembered), so appending one row costs
    one small query whatever the number of canvas nodes. ``before_query`` runs before each
    such query (the row sink's ``close``: its COPY holds the connection).
    """

    def __init__(self, agent_id: int, before_query: Callable[[], None] = lambda: None) -> None:
        self.agent_id = agent_id
        self.known: dict[str, bool] = {}
        self.before_query = before_query
        # True: read every drawn node id at the first batch, then ask nothing per batch (a
        # whole-folder ingest, whose rows stream into one COPY: see ``intake.row_sink``)
        self.whole = False
        self.drawn: frozenset[str] | None = None

    def prepare(self, node_ids: Iterable[str | None]) -> None:
        from sessions.models import CanvasNode

        unknown = sorted({n for n in node_ids if n is not None and n not in self.known})
        if self.whole and self.drawn is None:
            self.before_query()
            ids = (
                CanvasNode.objects.filter(agent_id=self.agent_id).order_by().values_list("node_id")
            )
            self.drawn = frozenset(node_id for (node_id,) in ids)
        if self.drawn is not None:
            self._mark(unknown, self.drawn)
            return
        if unknown:
            self.before_query()
        for start in range(0, len(unknown), CHUNK):
            chunk = unknown[start : start + CHUNK]
            drawn = set(
                CanvasNode.objects.filter(
                    agent_id=self.agent_id, node_id__in=[a for n in chunk for a in drawn_as(n)]
                )
                .order_by()  # the default ordering would join the canvases
                .values_list("node_id", flat=True)
            )
            self._mark(chunk, drawn)

    def _mark(self, node_ids: Iterable[str], drawn: set[str] | frozenset[str]) -> None:
        for node_id in node_ids:
            self.known[node_id] = not is_wait(node_id) and bool(set(drawn_as(node_id)) & drawn)

    def __contains__(self, node_id: object) -> bool:
        return isinstance(node_id, str) and self.known.get(node_id, False)


def placed_keys(agent: Agent) -> frozenset[str]:
    """Row node ids that are drawn on a canvas of the agent now (read once per ingest)."""
    from sessions.models import CanvasNode

    ids = CanvasNode.objects.filter(agent=agent).values_list("node_id", flat=True).distinct()
    return frozenset(row_keys(ids))


def agent_totals_refresh(agent: Agent, *, canvases: bool = True) -> None:
    """Set the agent's figures from its sessions, canvases and kept counters (no row is read);
    ``canvases`` False: none changed, keep their figures."""
    sessions = list(
        AgentSession.objects.filter(agent=agent).values_list(
            "rows_count", "summary_bytes", "problems"
        )
    )
    agent.sessions_count = len(sessions)
    agent.rows_count = sum(s[0] for s in sessions)
    agent.summary_bytes = sum(s[1] for s in sessions)
    agent.problems_count = sum(len(s[2]) for s in sessions)
    if canvases:
        figures = agent.canvases.aggregate(n=Count("id"), size=Sum("size"))
        agent.canvases_count = figures["n"] or 0
        agent.canvas_bytes = figures["size"] or 0
    unplaced = unplaced_counts(agent)
    agent.unmapped_count = unplaced.null + unplaced.wait
