"""A real event-trigger receiver for the tests, and a helper to run any ASGI app under uvicorn.

``Receiver`` is a small Starlette app served by uvicorn on 127.0.0.1 (a free port) in a
background thread. It records every request it gets (method, path, query, headers, raw body)
and answers with whatever the test scripted for that event: ``proceed``, ``proceed_with_changes``,
``stop``, an error status, a malformed body, a reply slower than the caller's timeout, a
reply dripped one byte at a time, or a very large reply (sent piece by piece, with or without
``Content-Length``).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp


@dataclass(frozen=True)
class Received:
    """One request as the receiver saw it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: bytes

    @property
    def event(self) -> str:
        return self.query.get("event", "")

    @property
    def txn(self) -> str:
        return self.query.get("txn", "")

    def json(self) -> Any:
        return json.loads(self.body)

    def form(self) -> dict[str, str]:
        return dict(parse_qsl(self.body.decode(), keep_blank_values=True))


@dataclass(frozen=True)
class Reply:
    """What the receiver answers: a JSON body (or raw bytes), a status, an optional delay.

    ``repeat`` sends the content that many times over, streamed one copy at a time (a large
    reply the receiver never holds whole); ``chunked`` leaves out ``Content-Length``; ``drip``
    sends the content one byte at a time, that many seconds apart (headers at once).
    """

    status: int = 200
    body: Any = field(default_factory=lambda: {"type": "proceed"})
    raw: bytes | None = None
    delay: float = 0.0
    repeat: int = 1
    chunked: bool = False
    drip: float = 0.0

    def content(self) -> bytes:
        return self.raw if self.raw is not None else json.dumps(self.body).encode()

    def response(self) -> Response:
        content = self.content()
        if self.drip:
            return self._dripped(content)
        if self.repeat == 1 and not self.chunked:
            return Response(content, status_code=self.status, media_type="application/json")

        async def pieces() -> AsyncIterator[bytes]:
            for _ in range(self.repeat):
                yield content

        headers = {} if self.chunked else {"content-length": str(len(content) * self.repeat)}
        return StreamingResponse(pieces(), status_code=self.status, headers=headers, media_type="application/json")

    def _dripped(self, content: bytes) -> Response:
        async def drops() -> AsyncIterator[bytes]:
            for byte in content:
                yield bytes([byte])
                await asyncio.sleep(self.drip)

        return StreamingResponse(drops(), status_code=self.status, media_type="application/json",
                                 headers={"content-length": str(len(content))})


PROCEED = Reply()


def proceed_with_changes(*params: dict[str, Any]) -> Reply:
    return Reply(body={"type": "proceed_with_changes", "params": list(params)})


def stop(message: str, *data: dict[str, str], code: int = -32600) -> Reply:
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = list(data)
    return Reply(status=400, body={"type": "stop", "error": error})


class Receiver:
    """Records callbacks and answers them as scripted (per event name, else the default)."""

    def __init__(self, base_path: str = "/hooks") -> None:
        self.base_path = base_path
        self.calls: list[Received] = []
        self.replies: dict[str, Reply] = {}
        self.default = PROCEED
        self.url = ""
        self._changed = threading.Condition()
        self.app = Starlette(routes=[Route(base_path + "/{rest:path}", self._handle, methods=["GET", "POST", "PUT", "DELETE"])])

    def answer(self, event: str, reply: Reply, obj: str | None = None) -> None:
        """Answer ``event`` with ``reply`` (only for calls about ``obj``, when given)."""
        self.replies[event if obj is None else f"{obj}:{event}"] = reply

    async def _handle(self, request: Request) -> Response:
        body = await request.body()
        received = Received(
            method=request.method,
            path=request.url.path[len(self.base_path):],
            query=dict(request.query_params),
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
        )
        with self._changed:
            self.calls.append(received)
            self._changed.notify_all()
        obj = received.path.split("/")[2] if received.path.count("/") >= 2 else ""
        reply = self.replies.get(f"{obj}:{received.event}") or self.replies.get(received.event, self.default)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        return reply.response()

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Received]:
        """The calls once at least ``count`` have arrived (post events may come a bit later)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.calls) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {count} calls, got {len(self.calls)}: {self.calls}")
                self._changed.wait(left)
            return list(self.calls)

    def clear(self) -> None:
        with self._changed:
            self.calls.clear()

    @contextmanager
    def running(self) -> Iterator[Receiver]:
        with serve_in_thread(self.app) as base:
            self.url = base + self.base_path
            yield self


@contextmanager
def serve_in_thread(app: ASGIApp, **options: Any) -> Iterator[str]:
    """Run ``app`` under uvicorn on 127.0.0.1 (a free port); yields ``http://127.0.0.1:PORT``.

    ``options`` go to ``uvicorn.Config`` (the reference server's ``UVICORN_OPTIONS``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="critical", lifespan="off", timeout_graceful_shutdown=1, **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
