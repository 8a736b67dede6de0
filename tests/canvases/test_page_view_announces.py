"""A canvas page that finds the file rewritten on disk records it once and tells other pages."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.test import Client

from canvases.models import Canvas, Revision
from memviz.broadcast import canvas_group
from sessions.ingest import ingest_path

pytestmark = pytest.mark.django_db(transaction=True)


async def _subscribe(layer, group: str) -> str:  # type: ignore[no-untyped-def]
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    return channel


async def _receive(layer, channel: str) -> dict:  # type: ignore[no-untyped-def]
    return await asyncio.wait_for(layer.receive(channel), timeout=3)


def test_page_view_of_a_rewritten_canvas_broadcasts_once(fixtures_root: Path, settings) -> None:  # type: ignore[no-untyped-def]
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    agent_dir = fixtures_root / "fixture-a-upstream" / "main"
    ingest_path(agent_dir.parent)
    canvas = Canvas.objects.get(filename="001-fix-login-timeout.mmd")
    layer = get_channel_layer()
    channel = async_to_sync(_subscribe)(layer, canvas_group(canvas.pk))

    mmd = agent_dir / "mmds" / canvas.filename
    mmd.write_text(mmd.read_text("utf-8") + "\n    001-N3 --> 001-N1\n", "utf-8")
    client = Client()
    assert client.get(f"/a/main/c/{canvas.filename}/").status_code == 200
    message = async_to_sync(_receive)(layer, channel)
    assert message["type"] == "canvas.updated"
    assert message["payload"]["canvas"] == canvas.filename
    # a second view, and the watcher's ingest after it, see nothing new: one revision only
    assert client.get(f"/a/main/c/{canvas.filename}/").status_code == 200
    ingest_path(agent_dir.parent)
    assert list(Revision.objects.filter(canvas=canvas).values_list("op", flat=True)) == [
        "disk",
        "imported",
    ]
