"""Every committed change reaches the other open pages once, after commit; a page view sends none."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth.models import User
from django.test import Client

from canvases import services
from canvases.models import Revision
from intake.ingest import ingest_path
from memviz.broadcast import agent_group, canvas_group
from memviz.live_types import AgentChanged, CanvasUpdated
from sessions.models import Canvas
from tests.shapes import shape_problems

pytestmark = pytest.mark.django_db(transaction=True)


async def _subscribe(layer, group: str) -> str:
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    return channel


async def _receive(layer, channel: str, timeout: float = 3) -> dict:
    return await asyncio.wait_for(layer.receive(channel), timeout=timeout)


@pytest.fixture
def memory_layer(settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    return get_channel_layer()


def test_page_view_of_a_rewritten_canvas_sends_nothing_the_watcher_sends_once(
    fixtures_root: Path, memory_layer
) -> None:
    agent_dir = fixtures_root / "fixture-a-upstream" / "main"
    ingest_path(agent_dir.parent)
    canvas = Canvas.objects.get(filename="001-fix-login-timeout.mmd")
    channel = async_to_sync(_subscribe)(memory_layer, canvas_group(canvas.pk))

    mmd = agent_dir / "mmds" / canvas.filename
    mmd.write_text(mmd.read_text("utf-8") + "\n    001-N3 --> 001-N1\n", "utf-8")
    client = Client()
    assert client.get(f"/a/main/c/{canvas.filename}/").status_code == 200
    with pytest.raises(asyncio.TimeoutError):
        async_to_sync(_receive)(memory_layer, channel, 0.3)
    ingest_path(agent_dir.parent)  # the watcher's work
    message = async_to_sync(_receive)(memory_layer, channel)
    assert message["payload"] == {
        "type": "canvas.updated",
        "agent": "main",
        "canvas": canvas.filename,
        "revision": 2,
        "author": "agent",
    }
    ingest_path(agent_dir.parent)  # nothing new: nothing sent, nothing recorded twice
    with pytest.raises(asyncio.TimeoutError):
        async_to_sync(_receive)(memory_layer, channel, 0.3)
    ops = list(Revision.objects.filter(canvas=canvas).values_list("op", flat=True))
    assert ops == ["disk", "imported"]


def test_a_human_edit_is_broadcast_once_with_its_author(fixtures_root: Path, memory_layer) -> None:
    ingest_path(fixtures_root / "fixture-a-upstream")
    canvas = Canvas.objects.get(filename="002-migrate-orders-api.mmd")
    canvas_channel = async_to_sync(_subscribe)(memory_layer, canvas_group(canvas.pk))
    agent_channel = async_to_sync(_subscribe)(memory_layer, agent_group(canvas.agent_id))
    user = User.objects.create_user("carol", password="pw")
    out = services.canvas_apply_edit(
        canvas=canvas,
        op="merge",
        params={"nodes": ["002-N2", "002-N3"]},
        base_hash=canvas.content_hash,
        user=user,
    )
    message = async_to_sync(_receive)(memory_layer, canvas_channel)["payload"]
    assert message["type"] == "canvas.updated" and shape_problems(message, CanvasUpdated) == []
    assert (message["author"], message["op"], message["revision"]) == ("carol", "merge", 2)
    assert message["hash"] == out.hash and message["rows_changed"] == out.rows_changed > 0
    agent_message = async_to_sync(_receive)(memory_layer, agent_channel)["payload"]
    assert shape_problems(agent_message, AgentChanged) == []
    assert agent_message["canvases"] == [canvas.filename] and agent_message["author"] == "carol"
    with pytest.raises(asyncio.TimeoutError):  # once
        async_to_sync(_receive)(memory_layer, canvas_channel, 0.3)
    # a refused edit sends nothing
    with pytest.raises(services.EditRefused):
        services.canvas_apply_edit(
            canvas=canvas, op="annotate", params={"node": "nope", "text": "x"},
            base_hash=out.hash, user=user,
        )
    with pytest.raises(asyncio.TimeoutError):
        async_to_sync(_receive)(memory_layer, canvas_channel, 0.3)
