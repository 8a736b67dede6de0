"""Kept figures equal a recount from scratch after every kind of write (issue 11).

The recount here is deliberately naive (every row, every canvas node, in Python) and shares no
code with sessions.counters: appends, L2 backfill rewrites, canvas edits through the editor,
canvases rewritten or deleted on disk, and session files deleted must all leave them equal.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from canvases import services
from intake.ingest import ingest_agent_dir, ingest_path
from sessions import counters
from sessions.db_triggers import triggers_ensure
from sessions.models import Agent, AgentSession, Canvas, CanvasNode, NodeRowCount, Row
from tests.pages import one

pytestmark = pytest.mark.django_db
SID = "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90"


def recount(agent: Agent) -> dict:
    nodes = set(CanvasNode.objects.filter(agent=agent).values_list("node_id", flat=True))
    nodes |= {n[2:] for n in nodes if n.startswith("n_")}
    rows = list(Row.objects.filter(agent=agent).values_list("node_id", "placed", "summary"))
    truth = {
        "null": sum(1 for n, _p, _s in rows if n is None),
        "wait": sum(1 for n, _p, _s in rows if n == "wait"),
        "dangling": sum(1 for n, _p, _s in rows if n not in (None, "wait") and n not in nodes),
        "flags": [p for _n, p, _s in rows],
        "per_node": dict(Counter(n for n, _p, _s in rows if n is not None)),
        "rows": len(rows),
        "summary_bytes": sum(len(s.encode()) for _n, _p, s in rows),
    }
    truth["placed"] = [n is not None and n != "wait" and n in nodes for n, _p, _s in rows]
    return truth


def assert_kept(agent: Agent) -> None:
    agent.refresh_from_db()
    truth = recount(agent)
    kept = counters.unplaced_counts(agent)
    assert (kept.null, kept.wait, kept.dangling) == (
        truth["null"],
        truth["wait"],
        truth["dangling"],
    )
    assert truth["flags"] == truth["placed"], "Row.placed disagrees with the canvases"
    per_node = {
        n: c
        for n, c in NodeRowCount.objects.filter(agent=agent, is_null=False).values_list(
            "node_id", "rows_count"
        )
        if c
    }
    assert per_node == truth["per_node"]
    assert NodeRowCount.objects.filter(agent=agent, rows_count__lt=0).count() == 0
    assert agent.rows_count == truth["rows"]
    assert agent.summary_bytes == truth["summary_bytes"]
    assert agent.unmapped_count == truth["null"] + truth["wait"]
    sessions = AgentSession.objects.filter(agent=agent)
    assert {s.session_id: s.rows_count for s in sessions} == dict(
        Counter(Row.objects.filter(agent=agent).values_list("session__session_id", flat=True))
    )


def line(tcid: str, node: str | None, summary: str = "s") -> str:
    return json.dumps({"tool_call_id": tcid, "summary": summary, "node_id": node}) + "\n"


@pytest.fixture
def upstream(fixtures_root: Path) -> tuple[Agent, Path]:
    ingest_path(fixtures_root / "fixture-a-upstream")
    return Agent.objects.get(slug="main"), fixtures_root / "fixture-a-upstream" / "main"


def test_counts_after_ingest_of_every_fixture(fixtures_root: Path) -> None:
    for root in ("fixture-a-upstream", "fixture-b-wild", "fixture-c-enhanced"):
        ingest_path(fixtures_root / root)
    for agent in Agent.objects.all():
        assert_kept(agent)
    coder = counters.unplaced_counts(Agent.objects.get(slug="coder"))
    assert coder.wait == 1 and coder.dangling >= 1  # 004-N9 is on no canvas


def test_counts_follow_appends_on_the_live_path(upstream: tuple[Agent, Path]) -> None:
    agent, agent_dir = upstream
    path = agent_dir / f"offload-{SID}.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line("a1", "002-N2", "摘要 é"))  # placed
        handle.write(line("a2", "999-N1"))  # dangling
        handle.write(line("a3", None) + line("a4", "wait") + line("a5", "n_001-N1"))
    ingest_agent_dir(agent_dir, changed=[path])
    assert_kept(agent)
    assert Row.objects.get(tool_call_id="a1").placed
    assert not Row.objects.get(tool_call_id="a2").placed


def test_counts_follow_an_l2_backfill_rewrite(upstream: tuple[Agent, Path]) -> None:
    agent, agent_dir = upstream
    path = agent_dir / f"offload-{SID}.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line("b1", None) + line("b2", None))
    ingest_agent_dir(agent_dir, changed=[path])
    # L2 claims the null rows ("wait"), then backfills node ids: each a rewrite in place.
    for claimed in ('"wait"', '"002-N5"'):
        rows = [json.loads(x) for x in path.read_text().splitlines()]
        for row in rows:
            if row["tool_call_id"] in ("b1", "b2"):
                row["node_id"] = json.loads(claimed)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        report = ingest_agent_dir(agent_dir, changed=[path])
        assert report.sessions_reread == 1
        assert_kept(agent)
    assert counters.unplaced_counts(agent).wait == 0


def test_counts_follow_canvas_edits_through_the_orm(upstream: tuple[Agent, Path]) -> None:
    agent, agent_dir = upstream
    user = User.objects.create_user("ana", password="pw")
    canvas = Canvas.objects.get(filename="002-migrate-orders-api.mmd")
    path = agent_dir / f"offload-{SID}.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line("c1", "002-N9"))  # on no canvas, until adopted
    ingest_agent_dir(agent_dir)
    assert counters.unplaced_counts(agent).dangling >= 1
    services.canvas_apply_edit(
        canvas=canvas,
        op="merge",
        params={"nodes": ["002-N2", "002-N3"], "label": "merged", "status": "done"},
        base_hash=canvas.content_hash,
        user=user,
    )
    assert_kept(agent)
    canvas.refresh_from_db()
    services.canvas_apply_edit(
        canvas=canvas,
        op="adopt",
        params={"from": "002-N9", "node": "002-N5"},
        base_hash=canvas.content_hash,
        user=user,
    )
    assert_kept(agent)
    assert Row.objects.get(tool_call_id="c1").placed
    services.canvas_undo(canvas=canvas, user=user)
    assert_kept(agent)


def test_counts_follow_canvases_changed_and_deleted_on_disk(upstream: tuple[Agent, Path]) -> None:
    agent, agent_dir = upstream
    mmd = agent_dir / "mmds" / "002-migrate-orders-api.mmd"
    original = mmd.read_text()
    mmd.write_text("\n".join(x for x in original.splitlines() if "002-N5[" not in x))
    ingest_agent_dir(agent_dir, changed=[mmd])
    assert_kept(agent)
    mmd.write_text(original)
    ingest_agent_dir(agent_dir, changed=[mmd])
    assert_kept(agent)
    mmd.unlink()
    ingest_agent_dir(agent_dir, changed=[mmd])
    assert_kept(agent)
    assert counters.unplaced_counts(agent).dangling > 0


def test_counts_follow_a_deleted_session_file(upstream: tuple[Agent, Path]) -> None:
    agent, agent_dir = upstream
    (agent_dir / f"offload-{SID}.jsonl").unlink()
    ingest_agent_dir(agent_dir)
    assert_kept(agent)
    assert agent.rows_count == 5


def test_agent_page_and_home_read_the_kept_figures(client: Client, fixtures_root: Path) -> None:
    ingest_path(fixtures_root / "fixture-b-wild")
    agent = Agent.objects.get(slug="coder")
    truth = recount(agent)
    data = client.get("/a/coder/?format=json").json()
    assert data["unplaced_by_kind"] == {k: truth[k] for k in ("null", "wait", "dangling")}
    assert data["unplaced_rows"] == truth["null"] + truth["wait"] + truth["dangling"]
    listed = [r["tool_call_id"] for r in data["unplaced"]]
    nodes = set(CanvasNode.objects.filter(agent=agent).values_list("node_id", flat=True))
    expected = [
        tcid
        for tcid, node in Row.objects.filter(agent=agent)
        .order_by("session_id", "line_no")
        .values_list("tool_call_id", "node_id")
        if node in (None, "wait") or node not in nodes
    ]
    assert listed == expected
    home = client.get("/?format=json").json()
    assert home["agents"][0]["unmapped_rows"] == truth["null"] + truth["wait"]


def test_agent_page_issues_no_literal_id_list(client: Client, fixtures_root: Path) -> None:
    """The old page built NOT IN (every placed id) three times; now no query grows with ids."""
    from django.test.utils import CaptureQueriesContext

    ingest_path(fixtures_root / "fixture-b-wild")
    with CaptureQueriesContext(connection) as queries:
        client.get("/a/coder/")
    assert not [q["sql"] for q in queries if "NOT IN" in q["sql"].upper()]
    assert len(queries) < 20


def test_triggers_come_back_after_a_table_rebuild(upstream: tuple[Agent, Path]) -> None:
    """Django rebuilds a SQLite table to alter it, which drops its triggers; post_migrate
    re-creates them, and creating them twice is harmless."""
    from sessions.db_triggers import triggers_drop

    agent, agent_dir = upstream
    triggers_drop(connection)
    triggers_ensure(connection)
    triggers_ensure(connection)
    path = agent_dir / f"offload-{SID}.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line("t1", None))
    ingest_agent_dir(agent_dir, changed=[path])
    assert_kept(agent)


def recount_lint(agent: Agent, canvas: Canvas) -> dict:
    """The lint's figures counted from every row and ref name (the slow, obvious way)."""
    from agentfs.row_fields import node_aliases
    from canvases.indexing import parsed
    from canvases.lint import pruned_ids
    from sessions.models import Ref
    from sessions.selectors import placed_node_ids, ref_locate

    doc = parsed(canvas.text)
    counts: Counter[str] = Counter()
    for nid in doc.nodes:
        counts[nid] = Row.objects.filter(agent=agent, node_id__in=node_aliases(nid)).count()
    placed = placed_node_ids(agent)
    pruned = pruned_ids(agent.canvases.all())
    orphans = Counter(
        Row.objects.filter(agent=agent)
        .exclude(node_id__isnull=True)
        .exclude(node_id__in=[*placed, "wait", ""])
        .values_list("node_id", flat=True)
    )
    refs = set(Ref.objects.filter(agent=agent).values_list("name", flat=True))
    missing = []
    for row in Row.objects.filter(agent=agent, node_id__in=list(doc.nodes)).exclude(
        result_ref__isnull=True
    ):
        located = ref_locate(agent, row.result_ref)
        if located and located.get("name") and located["name"] not in refs:
            missing.append(
                {"node_id": row.node_id, "tool_call_id": row.tool_call_id, "ref": row.result_ref}
            )
    return {
        "nodes_without_rows": [n for n in doc.nodes if not counts[n]],
        "rows_on_no_canvas": sorted(
            (node_id, n, node_id in pruned) for node_id, n in orphans.items()
        ),
        "unmapped_rows": Row.objects.filter(agent=agent, node_id__isnull=True).count(),
        "wait_rows": Row.objects.filter(agent=agent, node_id="wait").count(),
        "missing_refs": sorted(missing, key=lambda m: m["tool_call_id"]),
    }


def test_lint_from_kept_figures_equals_a_recount(fixtures_root: Path) -> None:
    """The lint reads kept figures; they must say what counting every row says."""
    from canvases.lint import canvas_lint

    for root in ("fixture-a-upstream", "fixture-b-wild"):
        ingest_path(fixtures_root / root)
    agent_dir = fixtures_root / "fixture-a-upstream" / "main"
    with (agent_dir / f"offload-{SID}.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(line("l1", "002-N77"))  # on no canvas
        handle.write(
            json.dumps({"tool_call_id": "l2", "node_id": "002-N5", "result_ref": "refs/gone.md"})
            + "\n"
        )
    ingest_agent_dir(agent_dir)
    seen_missing = seen_orphans = 0
    for canvas in Canvas.objects.select_related("agent"):
        lint = canvas_lint(canvas.agent, canvas)
        kept = {
            "nodes_without_rows": [n["id"] for n in lint["nodes_without_rows"]],
            "rows_on_no_canvas": sorted(
                (o["node_id"], o["rows"], o["pruned"]) for o in lint["rows_on_no_canvas"]
            ),
            "unmapped_rows": lint["unmapped_rows"],
            "wait_rows": lint["wait_rows"],
            "missing_refs": sorted(lint["missing_refs"], key=lambda m: m["tool_call_id"]),
        }
        assert kept == recount_lint(canvas.agent, canvas), canvas.filename
        seen_missing += len(lint["missing_refs"])
        seen_orphans += len(lint["rows_on_no_canvas"])
    assert seen_missing and seen_orphans  # the appended rows were found, not just zero == zero


def test_unplaced_rows_page_through_the_index(client: Client, tmp_path: Path) -> None:
    agent_dir = tmp_path / "root" / "many"
    agent_dir.mkdir(parents=True)
    for session in ("s1", "s2"):
        (agent_dir / f"offload-{session}.jsonl").write_text(
            "".join(
                line(f"{session}-{i}", None if i % 2 else "gone", f"{session}-{i}")
                for i in range(70)
            ),
            "utf-8",
        )
    ingest_path(tmp_path / "root")
    expected = [f"{s}-{i}" for s in ("s1", "s2") for i in range(70)]
    page = BeautifulSoup(client.get("/a/many/").content, "html.parser")
    seen = [li["id"] for li in page.select("#unplaced ~ ol.rows li.row")]
    assert len(seen) == 50
    listed = [r["tool_call_id"] for r in client.get("/a/many/?format=json").json()["unplaced"]]
    more = page.select_one("p.more a")
    while more is not None:
        partial = BeautifulSoup(
            client.get(f"/a/many/{more['hx-get']}", HTTP_HX_REQUEST="true").content, "html.parser"
        )
        assert partial.select_one("html") is None
        listed += [one(li, "p.summary").get_text() for li in partial.select("li.row")]
        more = partial.select_one("p.more a")
    assert listed == expected
