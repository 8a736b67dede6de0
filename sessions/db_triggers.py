"""Database triggers that keep ``NodeRowCount`` and ``Row.placed`` in step with every row write.

Whoever inserts, deletes or re-points rows (ingest, the canvas editor's ORM updates, a cascade)
moves the counts with them, in the same statement. SQLite gets row triggers (about 1 us per
row); PostgreSQL gets statement triggers over transition tables, so a COPY of 5,000 rows costs
one grouped upsert. A node_id update also recomputes ``placed`` for that row.

``triggers_ensure`` is idempotent and runs after every ``migrate``: Django rebuilds a SQLite
table to alter it, which silently drops the triggers on it.
"""

from __future__ import annotations

from typing import Any

from agentfs.row_fields import WAIT_SQL, drawn_as_sql

ROW = "agent_sessions_row"
COUNTS = "agent_sessions_noderowcount"
KEY = "COALESCE({t}.node_id, ''), {t}.node_id IS NULL"
# Is this node_id drawn on a canvas of the agent? (The Go port draws "n_<id>" for row "<id>".)
PLACED_SQL = (
    f"({{t}}.node_id IS NOT NULL AND {{t}}.node_id <> {WAIT_SQL} AND EXISTS (\n"
    "    SELECT 1 FROM canvases_canvasnode c WHERE c.agent_id = {t}.agent_id\n"
    f"    AND c.node_id IN {drawn_as_sql('{t}.node_id')}))"
)
_DECREMENT = f"""UPDATE {COUNTS} SET rows_count = rows_count - 1
    WHERE agent_id = OLD.agent_id AND is_null = (OLD.node_id IS NULL)
    AND node_id = COALESCE(OLD.node_id, '')"""

SQLITE = [
    f"""CREATE TRIGGER IF NOT EXISTS {ROW}_count_insert AFTER INSERT ON {ROW} BEGIN
        INSERT INTO {COUNTS} (agent_id, node_id, is_null, rows_count, placed)
        VALUES (NEW.agent_id, {KEY.format(t="NEW")}, 1, NEW.placed)
        ON CONFLICT (agent_id, is_null, node_id) DO UPDATE SET rows_count = rows_count + 1;
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS {ROW}_count_delete AFTER DELETE ON {ROW} BEGIN
        {_DECREMENT};
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS {ROW}_node_update AFTER UPDATE OF node_id ON {ROW}
    WHEN OLD.node_id IS NOT NEW.node_id BEGIN
        UPDATE {ROW} SET placed = {PLACED_SQL.format(t="NEW")} WHERE id = NEW.id;
        {_DECREMENT};
        INSERT INTO {COUNTS} (agent_id, node_id, is_null, rows_count, placed)
        SELECT NEW.agent_id, {KEY.format(t="NEW")}, 1, placed FROM {ROW} WHERE id = NEW.id
        ON CONFLICT (agent_id, is_null, node_id) DO UPDATE SET rows_count = rows_count + 1;
    END""",
]

_PG_UPSERT = f"""ON CONFLICT (agent_id, is_null, node_id) DO UPDATE
    SET rows_count = {COUNTS}.rows_count + EXCLUDED.rows_count"""
_PG_GROUP = "GROUP BY agent_id, COALESCE(node_id, ''), node_id IS NULL"

_PG_FUNCTIONS = {
    "counts_insert": f"""
        INSERT INTO {COUNTS} (agent_id, node_id, is_null, rows_count, placed)
        SELECT agent_id, COALESCE(node_id, ''), node_id IS NULL, COUNT(*), bool_or(placed)
        FROM new_rows {_PG_GROUP} {_PG_UPSERT};
        RETURN NULL;""",
    "counts_delete": f"""
        UPDATE {COUNTS} c SET rows_count = c.rows_count - d.n
        FROM (SELECT agent_id, COALESCE(node_id, '') AS node_id, node_id IS NULL AS is_null,
                     COUNT(*) AS n FROM old_rows {_PG_GROUP}) d
        WHERE c.agent_id = d.agent_id AND c.is_null = d.is_null AND c.node_id = d.node_id;
        RETURN NULL;""",
    "counts_update": f"""
        WITH moved AS (
            SELECT o.agent_id, o.node_id AS old_id, n.node_id AS new_id, n.placed
            FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE o.node_id IS DISTINCT FROM n.node_id
        ), d AS (
            SELECT agent_id, old_id AS node_id, -1 AS n, false AS placed FROM moved
            UNION ALL SELECT agent_id, new_id, 1, placed FROM moved
        )
        INSERT INTO {COUNTS} (agent_id, node_id, is_null, rows_count, placed)
        SELECT agent_id, COALESCE(node_id, ''), node_id IS NULL, SUM(n), bool_or(placed)
        FROM d {_PG_GROUP} {_PG_UPSERT};
        RETURN NULL;""",
    "placed": f"""
        NEW.placed := {PLACED_SQL.format(t="NEW")};
        RETURN NEW;""",
}
_PG_TRIGGERS = {
    "counts_insert": "AFTER INSERT ON {row} REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT",
    "counts_delete": "AFTER DELETE ON {row} REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT",
    "counts_update": (
        "AFTER UPDATE ON {row} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows "
        "FOR EACH STATEMENT"
    ),
    "placed": (
        "BEFORE UPDATE OF node_id ON {row} FOR EACH ROW "
        "WHEN (OLD.node_id IS DISTINCT FROM NEW.node_id)"
    ),
}


def _postgres_statements(existing: set[str]) -> list[str]:
    statements = []
    for name, body in _PG_FUNCTIONS.items():
        function = f"{ROW}_{name}"
        statements.append(
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
            f"BEGIN{body}\nEND $$"
        )
        if function not in existing:
            statements.append(
                f"CREATE TRIGGER {function} {_PG_TRIGGERS[name].format(row=ROW)} "
                f"EXECUTE FUNCTION {function}()"
            )
    return statements


def triggers_ensure(connection: Any) -> None:
    """Create the triggers where they are missing (safe to run any number of times)."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            statements = SQLITE
        elif connection.vendor == "postgresql":
            cursor.execute(
                "SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal",
                [ROW],
            )
            statements = _postgres_statements({name for (name,) in cursor.fetchall()})
        else:
            raise RuntimeError(f"memviz supports SQLite and PostgreSQL, not {connection.vendor}")
        for statement in statements:
            cursor.execute(statement)


def triggers_drop(connection: Any) -> None:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            for name in ("count_insert", "count_delete", "node_update"):
                cursor.execute(f"DROP TRIGGER IF EXISTS {ROW}_{name}")
            return
        for name in _PG_FUNCTIONS:
            cursor.execute(f"DROP TRIGGER IF EXISTS {ROW}_{name} ON {ROW}")
            cursor.execute(f"DROP FUNCTION IF EXISTS {ROW}_{name}()")
