"""The debugging pages only read: no SQL write and no file change, memo or not."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from debugging.debug_cache import memo_clear
from intake.ingest import ingest_path
from sessions.models import AgentSession, Canvas
from tests.debug import diagnosis_fixture as dfx
from tests.test_reads_never_write import WRITE_SQL, _snapshot

pytestmark = pytest.mark.django_db


def test_debug_pages_write_nothing(fixtures_root: Path, tmp_path: Path) -> None:
    for name in ("fixture-a-upstream", "fixture-b-wild", "fixture-c-enhanced"):
        ingest_path(fixtures_root / name)
    dfx.build(tmp_path / "gen")
    urls = ["/sessions/", "/sessions/?diagnosis=loop&sort=findings", "/no/such/page/"]
    for s in AgentSession.objects.select_related("agent"):
        a = f"/a/{s.agent.slug}/"
        urls += [f"{a}diagnostics/", f"{a}ledger/"]
        base = f"{a}s/{s.session_id}/"
        urls += [
            f"{base}{p}"
            for p in ("replay/", "replay/?row=2", "diagnostics/", "ledger/", "report.md")
        ]
    for c in Canvas.objects.select_related("agent"):
        urls.append(f"/a/{c.agent.slug}/c/{c.filename}/compare/")
        urls += [f"/a/{c.agent.slug}/node/{n.node_id}/" for n in c.nodes.all()[:2]]
    before = {**_snapshot(fixtures_root), **_snapshot(tmp_path / "gen")}
    writes: list[str] = []

    def guard(execute, sql, params, many, context):
        if WRITE_SQL.match(sql):
            writes.append(sql[:120])
        return execute(sql, params, many, context)

    client = Client()
    with connection.execute_wrapper(guard):
        for round_ in range(2):  # a cold memo, then a warm one
            if round_ == 0:
                memo_clear()
            for url in urls:
                for variant in (url, url + ("&" if "?" in url else "?") + "format=json"):
                    assert client.get(variant).status_code in (200, 302, 404), variant
    assert writes == []
    assert {**_snapshot(fixtures_root), **_snapshot(tmp_path / "gen")} == before
