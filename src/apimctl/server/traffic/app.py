"""The traffic listener: an ASGI application handing every request to the traffic manager.

:func:`create_traffic_app` builds it beside a management app made by
:func:`apimctl.server.create_app` and shares its store, dialect and call log, so an apply
through the management API is visible to the next call. ``apimctl serve --traffic-port``
runs it on a second socket; ``apimctl test`` and ``apimctl call`` run it in-process (with a
virtual clock and stub back ends). Beside a traffic listener the server's areas are one
platform: a public domain belongs to the first area that declares it
(:func:`apimctl.server.domains.claim_public`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, quote

import httpx
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from apimctl.server.traffic.listener import reason_setter, until_disconnected
from apimctl.server.traffic.manager import Clock, TrafficManager
from apimctl.server.traffic.model import Call


class TrafficApp:
    """ASGI: request -> :class:`Call` -> :class:`TrafficManager` -> response (with the
    answer's reason phrase where the listener's protocol takes one,
    :mod:`~apimctl.server.traffic.listener`)."""

    def __init__(self, manager: TrafficManager, max_body_bytes: int) -> None:
        self.manager = manager
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await self.manager.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        body = b""
        more = True
        while more:  # the body, as Starlette's Request.stream reads it
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body_bytes:
                await Response(b"<h1>Request Entity Too Large</h1>", 413, media_type="text/html")(scope, receive, send)
                return
        raw = scope.get("headers", [])
        query = scope.get("query_string", b"").decode("latin-1")
        call = Call(
            method=scope["method"], scheme=str(scope.get("scheme") or "http"),
            host=next((v.decode("latin-1") for k, v in raw if k.lower() == b"host"), ""), path=_raw_path(scope),
            query=parse_qsl(query, keep_blank_values=True) if query else [],
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw],
            body=body, time=self.manager.clock(),
        )
        handled = await until_disconnected(receive, self.manager.handle(call))
        if handled is None:  # the caller hung up, or the server stops: the call was cancelled
            await Response(b"the server is stopping", 503, media_type="text/plain")(scope, receive, send)
            return
        answer, _ = handled
        head = call.method == "HEAD"
        headers = [(n.lower().encode("latin-1"), v.encode("latin-1", "replace")) for n, v in answer.headers
                   if n.lower() != "content-length" or head]
        if not (head and any(n == b"content-length" for n, _ in headers)):  # HEAD: the back end's length
            headers.append((b"content-length", str(len(answer.body)).encode()))
        setter = reason_setter(scope.get("state")) if answer.reason else None
        if setter is not None:
            setter(answer.status, answer.reason)
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if head else answer.body})


def _raw_path(scope: Scope) -> str:
    """The request target's path as the caller sent it (percent-encoded; the traffic manager
    normalises it), not the server's decoded ``path``."""
    raw = scope.get("raw_path")
    if isinstance(raw, bytes) and raw:
        return raw.decode("latin-1")
    return quote(str(scope.get("path") or "/"), safe="/!$&'()*+,;=:@")


def create_traffic_app(management: Any, *, clock: Clock | None = None,
                       transport: httpx.AsyncBaseTransport | None = None,
                       max_answer_bytes: int | None = None) -> TrafficApp:
    """The traffic listener's app beside ``management`` (an app of
    :func:`apimctl.server.create_app`); ``clock``: seconds since the epoch (default: real
    time); ``transport``: of the back-end client (default: the network);
    ``max_answer_bytes``: the longest answer body forwarded."""
    server = management.state.server
    server.config.exclusive_public_domains = True  # a host routes to one area: the first to declare it
    options: dict[str, Any] = {"transport": transport}
    if clock is not None:
        options["clock"] = clock
    if max_answer_bytes is not None:
        options["max_answer_bytes"] = max_answer_bytes
    manager = TrafficManager(server.store, server.dialect, server.traffic_log, **options)
    return TrafficApp(manager, server.config.max_body_bytes)
