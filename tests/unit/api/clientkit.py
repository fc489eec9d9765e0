"""Helpers of the API client tests: a virtual clock and a scripted mock transport."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import json
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

from apimctl.api.client import ApiClient
from apimctl.api.ratelimit import Backoff

T = TypeVar("T")
BASE = "https://api.example.test/v3/rest"
TOKEN = "tok-" + "s3cr3t" * 4


class VirtualClock:
    """Time that moves only when every task is waiting: sleeps finish in order, instantly.

    ``clock.run(coro)`` drives a coroutine: whenever the event loop has nothing ready to run,
    time jumps to the earliest pending sleep. Tests assert on ``clock.now`` instead of wall time.
    """

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self._timers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._timers, (self.now + seconds, next(self._seq), future))
        await future

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        task = asyncio.ensure_future(coro)
        while not task.done():
            for _ in range(50):  # let every runnable task reach its next wait
                await asyncio.sleep(0)
                if task.done():
                    break
            if task.done():
                break
            if not self._timers:
                task.cancel()
                raise AssertionError("deadlock: no task runnable and no sleep pending")
            when, _, future = heapq.heappop(self._timers)
            self.now = max(self.now, when)
            if not future.cancelled():
                future.set_result(None)
        return task.result()


@dataclass
class Seen:
    """One request as the server saw it."""

    method: str
    path: str
    params: list[tuple[str, str]]
    headers: httpx.Headers
    body: bytes
    at: float


Handler = Callable[[httpx.Request], httpx.Response | Awaitable[httpx.Response]]


@dataclass
class FakeApi:
    """A MockTransport whose handler is a script of replies, recording every request."""

    clock: VirtualClock
    handler: Handler | None = None
    seen: list[Seen] = field(default_factory=list)
    script: list[httpx.Response | Exception] = field(default_factory=list)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._handle)

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(
            Seen(
                request.method,
                request.url.path,
                list(request.url.params.multi_items()),
                request.headers,
                request.content,
                self.clock.now,
            )
        )
        if self.handler is not None:
            result = self.handler(request)
            return await result if isinstance(result, Awaitable) else result
        reply = self.script.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def client(self, **kwargs: Any) -> ApiClient:
        options: dict[str, Any] = {
            "token": TOKEN,
            "qps": None,
            "transport": self.transport(),
            "clock": self.clock,
            "sleep": self.clock.sleep,
            "backoff": Backoff(rand=lambda: 1.0),
        }
        options.update(kwargs)
        if "credentials" in kwargs:
            options.pop("token")
        return ApiClient(BASE, **options)


def reply(
    status: int = 200, body: Any = None, *, text: str | None = None, **headers: str
) -> httpx.Response:
    """A response: JSON ``body`` (or raw ``text``), with headers given as keyword arguments
    (underscores become dashes)."""
    hdrs = {name.replace("_", "-"): value for name, value in headers.items()}
    if text is not None:
        return httpx.Response(status, text=text, headers=hdrs)
    if body is None:
        return httpx.Response(status, headers=hdrs)
    return httpx.Response(
        status,
        content=json.dumps(body).encode(),
        headers={"content-type": "application/json", **hdrs},
    )
