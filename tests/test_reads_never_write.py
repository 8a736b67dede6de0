"""Reads never write: every page, partial, JSON twin and websocket connect leaves the database
and the memory folders exactly as they were — even when a canvas changed on disk meanwhile."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from bs4 import BeautifulSoup
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from canvases import services
from intake.ingest import ingest_path
from sessions.models import Agent, AgentSession, Canvas, Ref

pytestmark = pytest.mark.django_db(transaction=True)
WRITE_SQL = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER)\b", re.IGNORECASE)


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _urls() -> list[str]:
    urls = ["/", "/search/?q=pytest", "/search/?q=失败"]
    for agent in Agent.objects.all():
        base = f"/a/{agent.slug}/"
        urls += [base, f"{base}review/", f"{base}review/?q=x&format=json"]
        for s in AgentSession.objects.filter(agent=agent):
            urls += [f"{base}s/{s.session_id}/", f"{base}review/thread/?kind=session&scope={s.session_id}"]
        ids = list(AgentSession.objects.filter(agent=agent).values_list("session_id", flat=True))
        compare = f"{base}compare/?a={ids[0]}&b={ids[-1]}" if ids else f"{base}compare/"
        urls += [compare, f"{compare}&part=tokens", f"{compare}&show=diff&after=1"]
        urls += [f"{base}refs/{r.name.removeprefix('refs/')}" for r in Ref.objects.filter(agent=agent)[:5]]
        for canvas in Canvas.objects.filter(agent=agent):
            c = f"{base}c/{canvas.filename}/"
            urls += [c, f"{c}history/", f"{c}preview/", f"{c}budget/?target=300", f"{c}lint/", f"{c}live/", f"{c}resume/"]
            urls += [f"{c}history/{r.number}/" for r in canvas.revisions.all()]
            urls += [f"{c}n/{n.node_id}/" for n in canvas.nodes.all()[:3]]  # one page type: three of each canvas
    return urls


def test_no_get_and_no_websocket_connect_writes(fixtures_root: Path) -> None:
    for name in ("fixture-a-upstream", "fixture-b-wild", "fixture-c-enhanced"):
        ingest_path(fixtures_root / name)
    user = User.objects.create_user("reader", password="pw")
    canvas = Canvas.objects.get(filename="002-migrate-orders-api.mmd")
    services.canvas_apply_edit(  # some history to show
        canvas=canvas, op="annotate", params={"node": "002-N2", "text": "seen"},
        base_hash=canvas.content_hash, user=user,
    )
    # the agent rewrites a canvas that memviz has not re-indexed yet
    mmd = fixtures_root / "fixture-a-upstream" / "main" / "mmds" / "001-fix-login-timeout.mmd"
    mmd.write_text(mmd.read_text("utf-8") + "\n    001-N3 --> 001-N1\n", "utf-8")
    before = _snapshot(fixtures_root)
    writes: list[str] = []

    def guard(execute, sql, params, many, context):
        if WRITE_SQL.match(sql):
            writes.append(sql[:120])
        return execute(sql, params, many, context)

    anonymous, signed_in = Client(), Client()
    signed_in.force_login(user)
    urls = _urls()
    assert len(urls) > 60, len(urls)
    with connection.execute_wrapper(guard):
        for client in (anonymous, signed_in):
            for url in urls:
                for variant in (url, url + ("&" if "?" in url else "?") + "format=json"):
                    response = client.get(variant)
                    assert response.status_code in (200, 302, 404), (variant, response.status_code)
                page = client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="editor")
                assert page.status_code in (200, 302, 404)
                client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="diagram")
        from memviz.asgi import application

        async def connect() -> None:
            communicator = WebsocketCommunicator(
                application,
                "/ws/live/main/?canvas=001-fix-login-timeout.mmd",
                headers=[(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")],
            )
            connected, _ = await communicator.connect()
            assert connected
            await communicator.receive_json_from()
            await communicator.disconnect()

        async_to_sync(connect)()
    assert writes == []
    assert _snapshot(fixtures_root) == before
    # and the page did notice the change
    shown = BeautifulSoup(anonymous.get("/a/main/c/001-fix-login-timeout.mmd/").content, "html.parser")
    assert shown.select_one(".disk-note") is not None
