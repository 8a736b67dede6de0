"""Upgrading a database: canvases and their nodes moved from the canvases app into the index
(agent_sessions 0009, canvases 0005) without a byte of the database changing."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from canvases.models import Revision
from sessions.models import Agent, Canvas, CanvasNode

pytestmark = [pytest.mark.database, pytest.mark.slow]

BEFORE = [("agent_sessions", "0008_share_links"), ("canvases", "0004_canvas_branch")]
MOVED = [("agent_sessions", "0009_canvas_models_from_canvases"), ("canvases", "0005_canvas_models_to_the_index")]


def _migrate(targets: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return MigrationExecutor(connection)  # a fresh loader sees what is applied now


def _tables() -> dict[str, list[str]]:
    with connection.cursor() as cursor:
        names = [
            n
            for n in connection.introspection.table_names(cursor)
            if n.startswith(("canvases_", "agent_sessions_"))
        ]
        return {
            name: sorted(
                c.name for c in connection.introspection.get_table_description(cursor, name)
            )
            for name in sorted(names)
        }


@pytest.mark.django_db(transaction=True)
def test_canvases_nodes_and_revisions_written_before_the_move_read_the_same_after() -> None:
    executor = _migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    agent = old.get_model("agent_sessions", "Agent").objects.create(
        slug="kept", name="kept", path="/nowhere/kept", root="/nowhere"
    )
    canvas = old.get_model("canvases", "Canvas").objects.create(
        agent=agent, filename="001-keep.mmd", content_hash="h1", text="flowchart TD\n  N1[a]"
    )
    old.get_model("canvases", "CanvasNode").objects.create(
        canvas=canvas, agent=agent, node_id="001-N1", title="第一步", status="done"
    )
    old.get_model("canvases", "Revision").objects.create(
        canvas=canvas, number=1, author="agent", op="agent", after_text="flowchart", after_hash="h1"
    )
    tables = _tables()

    _migrate(MOVED)
    assert _tables() == tables  # the app's bookkeeping only: no table or column changed
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())  # today's migrations
    (moved,) = Canvas.objects.filter(agent=Agent.objects.get(slug="kept"))
    assert (moved.pk, moved.filename) == (canvas.pk, "001-keep.mmd")
    assert moved.text == "flowchart TD\n  N1[a]"
    assert [(n.node_id, n.title, n.status) for n in CanvasNode.objects.filter(canvas=moved)] == [
        ("001-N1", "第一步", "done")
    ]
    assert Revision.objects.get(canvas=moved).after_hash == "h1"
    moved.delete()  # the keys between the apps still cascade
    assert not CanvasNode.objects.exists() and not Revision.objects.exists()
