"""Counts kept by the database and the search indexes (issue 11).

* ``NodeRowCount`` and ``Row.placed`` are kept by triggers on rows (``sessions.db_triggers``,
  re-created after every migrate) and by ``sessions.counters.placement_refresh``.
* SQLite: contentless FTS5 tables, written by ``sessions.search_index`` (not by triggers:
  FTS5 flushes its buffer at every trigger's statement savepoint, 7x slower at ingest).
* PostgreSQL: a ``search`` tsvector column on rows and refs and a table for canvas nodes, GIN
  indexed; no extension is needed.
Existing data is counted, flagged and indexed here once.
"""

import django.db.models.deletion
from django.db import migrations, models

import memviz.fields
from sessions import db_triggers

SQLITE_FORWARD = [
    """CREATE VIRTUAL TABLE agent_sessions_row_fts USING fts5(
        body, tokenize='trigram', content='', detail='none', columnsize=0)""",
    """CREATE VIRTUAL TABLE agent_sessions_row_grams USING fts5(
        body, tokenize='unicode61', content='', detail='none', columnsize=0)""",
    """CREATE VIRTUAL TABLE agent_sessions_row_fts_vocab USING fts5vocab(
        agent_sessions_row_fts, 'row')""",
    """CREATE VIRTUAL TABLE agent_sessions_node_fts USING fts5(
        body, tokenize='trigram', content='', detail='none', columnsize=0)""",
    """CREATE VIRTUAL TABLE agent_sessions_node_grams USING fts5(
        body, tokenize='unicode61', content='', detail='none', columnsize=0)""",
    """CREATE VIRTUAL TABLE agent_sessions_node_fts_vocab USING fts5vocab(
        agent_sessions_node_fts, 'row')""",
    # Ref bodies (MEMVIZ_INDEX_REF_TEXT): the text is gone from disk when a ref is deleted,
    # so these keep their content and delete by rowid.
    """CREATE VIRTUAL TABLE agent_sessions_ref_fts USING fts5(
        body, tokenize='trigram', detail='none', columnsize=0)""",
    """CREATE VIRTUAL TABLE agent_sessions_ref_grams USING fts5(
        body, tokenize='unicode61', detail='none', columnsize=0)""",
]

SQLITE_BACKWARD = [
    f"DROP TABLE IF EXISTS agent_sessions_{name}"
    for name in (
        "row_fts_vocab",
        "row_fts",
        "row_grams",
        "node_fts_vocab",
        "node_fts",
        "node_grams",
        "ref_fts",
        "ref_grams",
    )
]

POSTGRES_FORWARD = [
    "ALTER TABLE agent_sessions_row ADD COLUMN search tsvector",
    "CREATE INDEX agent_sessions_row_search ON agent_sessions_row USING gin (search)",
    "ALTER TABLE agent_sessions_ref ADD COLUMN search tsvector",
    "CREATE INDEX agent_sessions_ref_search ON agent_sessions_ref USING gin (search)",
    # No foreign key: Django's flush truncates canvas nodes and knows nothing of this table.
    "CREATE TABLE agent_sessions_nodesearch (node_id bigint PRIMARY KEY, doc tsvector NOT NULL)",
    "CREATE INDEX agent_sessions_nodesearch_doc ON agent_sessions_nodesearch USING gin (doc)",
]

POSTGRES_BACKWARD = [
    "DROP TABLE IF EXISTS agent_sessions_nodesearch",
    "ALTER TABLE agent_sessions_ref DROP COLUMN IF EXISTS search",
    "ALTER TABLE agent_sessions_row DROP COLUMN IF EXISTS search",
]


def _run(schema_editor, statements) -> None:  # type: ignore[no-untyped-def]
    with schema_editor.connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def forward(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    from sessions import search_index

    connection = schema_editor.connection
    if connection.vendor == "sqlite":
        search_index.sqlite_functions(connection.connection)
        _run(schema_editor, SQLITE_FORWARD)
        summary_bytes, any_placed = "LENGTH(CAST(summary AS BLOB))", "MAX(placed)"
    else:
        _run(schema_editor, POSTGRES_FORWARD)
        summary_bytes, any_placed = "OCTET_LENGTH(summary)", "bool_or(placed)"
    db_triggers.triggers_ensure(connection)
    # Existing rows get their flag, counts and sums (the insert trigger saw none of them).
    placed = db_triggers.PLACED_SQL.format(t="agent_sessions_row")
    _run(
        schema_editor,
        [
            f"UPDATE agent_sessions_row SET placed = {placed}",
            f"""INSERT INTO agent_sessions_noderowcount
                (agent_id, node_id, is_null, rows_count, placed)
            SELECT agent_id, COALESCE(node_id, ''), node_id IS NULL, COUNT(*), {any_placed}
            FROM agent_sessions_row GROUP BY agent_id, COALESCE(node_id, ''), node_id IS NULL""",
            f"""UPDATE agent_sessions_agentsession SET summary_bytes = COALESCE((
                SELECT SUM({summary_bytes}) FROM agent_sessions_row
                WHERE session_id = agent_sessions_agentsession.id), 0)""",
        ],
    )
    search_index.reindex_all(connection)


def backward(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    db_triggers.triggers_drop(schema_editor.connection)
    vendor = schema_editor.connection.vendor
    _run(schema_editor, SQLITE_BACKWARD if vendor == "sqlite" else POSTGRES_BACKWARD)


class Migration(migrations.Migration):
    dependencies = [
        ("agent_sessions", "0002_job_recovery_and_token_owner"),
        ("canvases", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="NodeRowCount",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("node_id", memviz.fields.NulSafeCharField(blank=True, default="", max_length=300)),
                ("is_null", models.BooleanField(default=False)),
                ("rows_count", models.IntegerField(default=0)),
                ("placed", models.BooleanField(default=False)),
            ],
        ),
        migrations.AddField(
            model_name="agentsession",
            name="summary_bytes",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="row",
            name="placed",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="trackedfile",
            name="quick_hash",
            field=memviz.fields.NulSafeCharField(blank=True, default="", max_length=64),
        ),
        migrations.AddField(
            model_name="agent",
            name="checked_at",
            field=models.FloatField(default=0),
        ),
        migrations.AddIndex(
            model_name="row",
            index=models.Index(
                condition=models.Q(("placed", False)),
                fields=["agent", "session", "line_no"],
                name="row_unplaced",
            ),
        ),
        migrations.AddField(
            model_name="noderowcount",
            name="agent",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="agent_sessions.agent",
            ),
        ),
        migrations.AddIndex(
            model_name="noderowcount",
            index=models.Index(
                condition=models.Q(("placed", False)),
                fields=["agent", "node_id"],
                name="nodecount_unplaced",
            ),
        ),
        migrations.AddConstraint(
            model_name="noderowcount",
            constraint=models.UniqueConstraint(
                fields=("agent", "is_null", "node_id"), name="uniq_agent_node_count"
            ),
        ),
        migrations.RemoveIndex(
            model_name="row",
            name="row_agent_node",
        ),
        migrations.AddIndex(
            model_name="row",
            index=models.Index(
                fields=["agent", "node_id", "session", "line_no"], name="row_agent_node"
            ),
        ),
        migrations.RunPython(forward, backward, elidable=False),
    ]
