"""memviz.body_gate applied inside daphne, while the headers are in and before the body is stored.

daphne (Twisted underneath) stores a request's whole body, then parses a multipart form in
memory (about 11x its size), and only then calls the application; no ASGI middleware can refuse
earlier. ``install()`` gives daphne a request class that, once the headers are in:

- answers 413 at once to a declared Content-Length over the path's limit, and to a chunked body
  as soon as it grows past it (bytes are counted as they arrive, never stored past the limit);
- holds the body (the socket is not read) while a push's token or an upload's session is checked
  in a thread, and answers 401/403 without reading it when they are not valid;
- never parses form bodies itself (daphne hands Django the raw body; Django streams uploads).

A refused request is answered ``Connection: close``; the rest of its body is dropped for a moment
so the client reads the answer, then the connection is closed.
"""

from __future__ import annotations

import json
from io import BytesIO
from typing import Any
from urllib.parse import unquote

LINGER_SECONDS = 2.0  # how long a refused request's remaining body is read and dropped
REASONS = {401: "Unauthorized", 403: "Forbidden", 413: "Content Too Large"}


def _checked_in_thread(check: Any, *args: Any) -> Any:
    """Run a database check in Twisted's thread pool, with Django's connection hygiene."""
    from django.db import close_old_connections
    from twisted.internet.threads import deferToThread

    def run() -> bool:
        close_old_connections()
        try:
            return bool(check(*args))
        except Exception:  # noqa: BLE001 - a failed check refuses; the view would refuse too
            return False
        finally:
            close_old_connections()

    return deferToThread(run)


def _request_class() -> type:
    from daphne.http_protocol import WebRequest
    from django.conf import settings

    from intake.push_tokens import push_allowed
    from memviz.body_gate import gate_for, session_signed_in

    class GatedRequest(WebRequest):
        _refused = False
        _pending: tuple | None = None  # requestReceived's arguments while a check runs
        _checking = False
        _continue = False
        _limit = 0
        _received = 0

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._parsePOSTFormSubmission = False  # Django parses forms, streaming uploads

        def gotLength(self, length: int | None) -> None:
            raw = getattr(self.channel, "_path", b"/") or b"/"
            path = unquote(raw.split(b"?", 1)[0].decode("latin-1"))
            gate = gate_for(path)
            self._limit = gate.limit
            if length is not None and length > gate.limit:
                self._refuse(413, f"the body of {length} bytes is over this path's {gate.limit}")
                return
            super().gotLength(length)
            if not length and length is not None:
                return  # no body to protect; the view decides
            if gate.push_agent is not None:
                header = self.requestHeaders.getRawHeaders(b"authorization", [b""])[0]
                self._hold(push_allowed, gate.push_agent, header.decode("latin-1"), status=401)
            elif gate.login:
                cookie = self.received_cookies.get(settings.SESSION_COOKIE_NAME.encode(), b"")
                self._hold(session_signed_in, cookie.decode("latin-1"), status=403)

        def _hold(self, check: Any, *args: Any, status: int) -> None:
            self._checking = True
            # "Expect: 100-continue" is answered once the check passes, not before it
            expect = self.requestHeaders.getRawHeaders(b"expect", [b""])[0]
            self._continue = expect.lower() == b"100-continue"
            self.requestHeaders.removeHeader(b"expect")
            self.channel.transport.pauseProducing()  # the body waits in the client's socket
            deferred = _checked_in_thread(check, *args)
            deferred.addCallback(self._checked, status)

        def _checked(self, allowed: bool, status: int) -> None:
            self._checking = False
            if self._refused or self.channel.transport is None:
                return
            if not allowed:
                message = "missing or wrong bearer token" if status == 401 else "sign in first"
                self._refuse(status, message)
                return
            if self._continue and getattr(self.channel, "_version", b"") == b"HTTP/1.1":
                self.channel.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.channel.transport.resumeProducing()
            if self._pending is not None:  # the whole (small) body came in during the check
                args, self._pending = self._pending, None
                super().requestReceived(*args)

        def handleContentChunk(self, data: bytes) -> None:
            if self._refused:
                return
            self._received += len(data)
            if self._received > self._limit:
                self._refuse(413, f"the body is over this path's {self._limit} bytes")
                return
            super().handleContentChunk(data)

        def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
            if self._refused:
                return
            if self._checking:
                self._pending = (command, path, version)
                return
            super().requestReceived(command, path, version)

        def _refuse(self, status: int, message: str) -> None:
            self._refused = True
            self.content = BytesIO()
            channel, transport = self.channel, self.channel.transport
            if transport is None:
                return
            body = json.dumps({"error": message, "status": status}).encode()
            head = [
                f"HTTP/1.1 {status} {REASONS[status]}",
                "Content-Type: application/json",
                f"Content-Length: {len(body)}",
                "Connection: close",
            ]
            if status == 401:
                head.append('WWW-Authenticate: Bearer realm="memviz-stream"')
            self.requestHeaders.removeHeader(b"expect")  # no "100 Continue" after this
            transport.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
            channel.dataReceived = lambda data: None  # the rest of the body is dropped unread
            channel.setTimeout(None)
            transport.resumeProducing()
            try:
                transport.loseWriteConnection()  # the answer goes out; reading goes on briefly
            except (AttributeError, NotImplementedError):
                transport.loseConnection()
            channel.callLater(LINGER_SECONDS, transport.abortConnection)  # the reactor's, via the channel

    return GatedRequest


def _websocket_class() -> type:
    from daphne.ws_protocol import WebSocketProtocol

    from memviz.body_gate import ws_message_limit

    class GatedWebSocketProtocol(WebSocketProtocol):
        """Each socket's message limit follows its path (a push batch: the HTTP push's limit)."""

        def onConnect(self, request: Any) -> Any:
            limit = ws_message_limit(request.path)
            self.maxMessagePayloadSize = self.maxFramePayloadSize = limit
            return super().onConnect(request)

    return GatedWebSocketProtocol


def install() -> None:
    """Make daphne build gated requests and sockets (call before the server starts)."""
    from daphne import http_protocol, ws_protocol

    if getattr(http_protocol, "memviz_gated", False):
        return
    http_protocol.WebRequest = _request_class()  # HTTPFactory.buildProtocol reads this name
    ws_protocol.WebSocketFactory.protocol = _websocket_class()
    http_protocol.memviz_gated = True
