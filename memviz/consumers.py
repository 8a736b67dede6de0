"""Websocket consumers: live pages (relay only) and the pushed memory stream."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer, WebsocketConsumer
from django.conf import settings

from memviz import broadcast, outage
from memviz.live_types import GroupMessage, LiveReady
from memviz.odd_requests import CONTROL

_CHANNEL_LAYER_DOWN = outage.channel_layer_errors()


def _query(scope: dict[str, Any]) -> dict[str, str]:
    raw = scope.get("query_string", b"").decode("latin-1")
    return {k: v[-1] for k, v in parse_qs(raw).items()}


def _may_view(scope: dict[str, Any]) -> bool:
    if settings.MEMVIZ_ANONYMOUS_VIEW:
        return True
    user = scope.get("user")
    return bool(user is not None and user.is_authenticated)


@database_sync_to_async
def _share_opens(scope: dict[str, Any], agent: str) -> bool:
    """A share link of the whole agent follows it live, as its pages would (sessions/access.py)."""
    from sessions.access import share_opens

    return share_opens(scope.get("session"), "agent", {"agent": agent})


@database_sync_to_async
def _groups_for(agent_slug: str, canvas_name: str) -> list[str] | None:
    from sessions.models import Agent, Canvas

    agent = Agent.objects.filter(slug=agent_slug).only("pk").first()
    if agent is None:
        return None
    groups = [broadcast.agent_group(agent.pk)]
    if canvas_name:
        canvas = Canvas.objects.filter(agent=agent, filename=canvas_name).only("pk").first()
        if canvas is not None:
            groups.append(broadcast.canvas_group(canvas.pk))
    return groups


class LiveConsumer(AsyncJsonWebsocketConsumer):
    """``ws/live/<agent>/?canvas=<file>``: relays ``agent.changed`` and ``canvas.updated``."""

    groups_joined: list[str]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Redis (the channel layer) down while the socket waits on its channel: the socket is
        closed (1013, try again later: the page reconnects) and the outage logged once, not a
        traceback per socket."""
        try:
            await super().__call__(scope, receive, send)
        except _CHANNEL_LAYER_DOWN as exc:
            outage.log_outage("queue", exc)
            with contextlib.suppress(Exception):  # the socket may be gone already
                await send({"type": "websocket.close", "code": 1013})

    async def connect(self) -> None:
        self.groups_joined = []
        agent = self.scope["url_route"]["kwargs"]["agent"]
        if not _may_view(self.scope) and (
            CONTROL.search(agent) or not await _share_opens(self.scope, agent)
        ):
            await self.close(code=4403)
            return
        broadcast.bind_loop(asyncio.get_running_loop())
        if CONTROL.search(agent):  # no agent is named so; the database need not be asked
            await self.close(code=4404)
            return
        groups = await _groups_for(agent, _query(self.scope).get("canvas", ""))
        if groups is None:
            await self.close(code=4404)
            return
        try:
            for group in groups:
                await self.channel_layer.group_add(group, self.channel_name)
                self.groups_joined.append(group)
        except _CHANNEL_LAYER_DOWN as exc:
            # Redis (the channel layer) is down: refused at once, one log line, no traceback;
            # the page says "reconnecting" and tries again (1013: try again later).
            outage.log_outage("queue", exc)
            await self.close(code=1013)
            return
        await self.accept()
        ready: LiveReady = {"type": "live.ready", "agent": agent, "groups": len(groups)}
        await self.send_json(ready)

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        """A message that is not JSON (or nests too deep to read) gets an error frame, no close."""
        raw = text_data if text_data is not None else (bytes_data or b"").decode("utf-8", "replace")
        try:
            content = json.loads(raw)
        except (ValueError, RecursionError):
            await self.send_json({"type": "error", "error": "messages are JSON objects"})
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})
        else:
            await self.send_json(
                {"type": "error", "error": 'unknown message; send {"type": "ping"}'}
            )

    async def agent_changed(self, event: GroupMessage) -> None:
        await self.send_json(event["payload"])

    async def canvas_updated(self, event: GroupMessage) -> None:
        await self.send_json(event["payload"])


class UnknownSocketConsumer(AsyncJsonWebsocketConsumer):
    """Any other websocket path: refused with a clean close (not a routing error and a 500)."""

    async def connect(self) -> None:
        await self.close(code=4404)


class StreamConsumer(WebsocketConsumer):
    """``ws/stream/<agent>/``: the push API over a websocket.

    The token comes as ``?token=`` or as the first message ``{"token": "..."}``; every further
    text message is one or more newline-delimited events, answered with the same JSON result as
    ``POST /api/stream/<agent>/``.
    """

    agent_name = ""
    authorized = False

    def connect(self) -> None:
        from intake.push_tokens import agent_name_check, token_check

        self.agent_name = self.scope["url_route"]["kwargs"]["agent"]
        if agent_name_check(self.agent_name) is not None:
            self.close(code=4400)
            return
        token = _query(self.scope).get("token")
        self.authorized = bool(token) and token_check(self.agent_name, token or "")
        if token and not self.authorized:
            self.close(code=4401)
            return
        self.accept()

    def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        from intake.push_tokens import token_check
        from intake.stream import StreamTooLarge, stream_apply

        body = bytes_data if bytes_data is not None else (text_data or "").encode("utf-8")
        if not self.authorized:
            try:
                token = json.loads(body).get("token", "")
            except Exception:  # noqa: BLE001 - any unreadable first message is a bad token
                token = ""
            token = token if isinstance(token, str) else ""
            self.authorized = bool(token) and token_check(self.agent_name, token)
            if not self.authorized:
                self.send(text_data=json.dumps({"error": "bad token", "status": 401}))
                self.close(code=4401)
                return
            self.send(text_data=json.dumps({"type": "stream.ready", "agent": self.agent_name}))
            return
        try:
            result = stream_apply(agent_name=self.agent_name, body=body)
        except StreamTooLarge as exc:
            self.send(text_data=json.dumps({"error": str(exc), "status": 413}))
            return
        except Exception as exc:  # noqa: BLE001 - the socket outlives one bad message
            message = f"could not apply these events ({type(exc).__name__})"
            self.send(text_data=json.dumps({"error": message, "status": 500}))
            return
        self.send(text_data=json.dumps(result.as_dict()))
