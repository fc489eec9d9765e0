"""Server-side controls of the reference server, for testing clients against a hostile platform.

``create_app`` installs ``ControlsMiddleware`` around the whole application (outermost, so that
it sees the server's own ``send``). It

- counts every call per method and route template (``GET /v3/rest/services/{serviceId}``; the
  raw path when no route matches), readable with ``GET /operator/calls`` and reset with
  ``DELETE /operator/calls``, both behind ``Authorization: Bearer <operator token>``;
- enforces ``--qps`` (token bucket per bearer token: 403 with ``X-Svc-Error-Code:
  ERR_403_DEVELOPER_OVER_QPS`` and ``Retry-After``) and ``--daily-quota`` (calls per token and UTC
  day: 403 with ``ERR_403_DEVELOPER_OVER_RATE``) on the management API (spec/SUPPLEMENT.md §6;
  the headers and body are the dialect's, §10.1 and §10.10.6: ``X-Mashery-Error-Code``,
  ``X-Error-Detail-Header``, ``Retry-After: 1`` over QPS, a ``text/xml`` body
  ``<h1>Developer Over Qps</h1>``); with ``--quota-headers`` every admitted call's answer
  carries what is used of the quota (``X-Packagekey-Quota-Allotted``, ``-Current``,
  ``X-Plan-Quota-Reset``, as the traffic manager's answers do: SUPPLEMENT §10 fact 1);
- injects faults at ``--fault-rate`` with a RNG seeded by ``--fault-seed`` on the management API:
  ``503``, ``500``, ``drop`` (connection closed, nothing sent), ``delay`` (the request runs, its
  response is held past a client's timeout) and ``lost`` (the request runs and commits, then the
  connection is dropped); ``--fault-token`` keeps them to the calls of some tokens, ``--fault-kind`` to some kinds.

Throttled calls do not count against the daily quota; calls refused by the quota or the rate
limit never reach the application.
"""

from __future__ import annotations

import asyncio
import hmac
import inspect
import json
import math
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from apimctl.server.config import ServerConfig
from apimctl.server.dialects import SPEC, Dialect

API_PREFIX = "/v3/rest"
CALLS_PATH = "/operator/calls"
FAULT_KINDS = ("503", "500", "drop", "delay", "lost")
DEFAULT_FAULT_DELAY = 35.0

# --- call counter --------------------------------------------------------------------------


class CallCounter:
    """Calls per (method, path), with the statuses answered and the faults injected."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: Counter[tuple[str, str]] = Counter()
        self._statuses: dict[tuple[str, str], Counter[str]] = {}
        self._faults: Counter[str] = Counter()

    def record(self, method: str, path: str, status: str, fault: str | None = None) -> None:
        key = (method, path)
        with self._lock:
            self._calls[key] += 1
            self._statuses.setdefault(key, Counter())[status] += 1
            if fault:
                self._faults[fault] += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            calls = [
                {"method": m, "path": p, "count": n, "statuses": dict(sorted(self._statuses[(m, p)].items()))}
                for (m, p), n in sorted(self._calls.items(), key=lambda kv: (kv[0][1], kv[0][0]))
            ]
            return {"total": sum(self._calls.values()), "calls": calls, "faults": dict(self._faults)}

    def reset(self) -> None:
        with self._lock:
            self._calls.clear()
            self._statuses.clear()
            self._faults.clear()


# --- rate limits ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """Why a call is refused by the limits: the SUPPLEMENT §6 error code and its headers."""

    code: str
    message: str
    retry_after: int | None = None


class RateLimiter:
    """Per-token queries per second (token bucket, burst ``ceil(qps)``) and calls per UTC day."""

    def __init__(
        self,
        qps: float | None,
        daily_quota: int | None,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.qps = qps if qps and qps > 0 else None
        self.daily_quota = daily_quota if daily_quota is not None and daily_quota >= 0 else None
        self._burst = float(max(1, math.ceil(self.qps))) if self.qps else 0.0
        self._monotonic, self._wall = monotonic, wall
        self._buckets: dict[str, tuple[float, float]] = {}  # token -> (tokens, at)
        self._days: dict[str, tuple[int, int]] = {}  # token -> (day number, calls)
        self._lock = threading.Lock()

    def check(self, token: str) -> Refusal | None:
        """Admit the call (``None``) or say why not; an admitted call is counted."""
        with self._lock:
            day = int(self._wall() // 86400)
            seen_day, used = self._days.get(token, (day, 0))
            used = used if seen_day == day else 0
            if self.daily_quota is not None and used >= self.daily_quota:
                return Refusal("ERR_403_DEVELOPER_OVER_RATE", "Developer Over Rate")
            if self.qps is not None:
                wait = self._take(token)
                if wait > 0:
                    return Refusal("ERR_403_DEVELOPER_OVER_QPS", "Developer Over Qps", max(1, math.ceil(wait)))
            self._days[token] = (day, used + 1)
            return None

    def usage_headers(self, token: str) -> list[tuple[bytes, bytes]]:
        """The quota headers of an answer to ``token`` (none without a daily quota)."""
        if self.daily_quota is None:
            return []
        with self._lock:
            day = int(self._wall() // 86400)
            seen_day, used = self._days.get(token, (day, 0))
        reset = time.strftime("%A, %B %d, %Y %I:%M:%S %p GMT", time.gmtime((day + 1) * 86400))
        return [(b"x-packagekey-quota-allotted", str(self.daily_quota).encode()),
                (b"x-packagekey-quota-current", str(used if seen_day == day else 0).encode()),
                (b"x-plan-quota-reset", reset.encode())]

    def _take(self, token: str) -> float:
        """Take one token from the bucket; the seconds to wait when it is empty."""
        assert self.qps is not None
        now = self._monotonic()
        tokens, at = self._buckets.get(token, (self._burst, now))
        tokens = min(self._burst, tokens + (now - at) * self.qps)
        if tokens >= 1.0:
            self._buckets[token] = (tokens - 1.0, now)
            return 0.0
        self._buckets[token] = (tokens, now)
        return (1.0 - tokens) / self.qps


# --- faults --------------------------------------------------------------------------------


class FaultInjector:
    """Draws one number per call from a seeded RNG; below ``rate`` a fault kind is chosen."""

    def __init__(self, rate: float, seed: int | None, kinds: Sequence[str] = FAULT_KINDS) -> None:
        unknown = set(kinds) - set(FAULT_KINDS)
        if unknown or not kinds:
            raise ValueError(f"fault kinds must be some of {', '.join(FAULT_KINDS)}")
        self.rate = min(max(rate, 0.0), 1.0)
        self.kinds = tuple(kinds)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def draw(self) -> str | None:
        with self._lock:
            if self._rng.random() >= self.rate:
                return None
            return self._rng.choice(self.kinds)


# --- the middleware ------------------------------------------------------------------------


class ControlsMiddleware:
    """Pure ASGI middleware: call counter, per-token limits and fault injection."""

    def __init__(
        self,
        app: ASGIApp,
        config: ServerConfig,
        *,
        routes: Sequence[BaseRoute] | None = None,
        fault_kinds: Sequence[str] = FAULT_KINDS,
        fault_delay: float = DEFAULT_FAULT_DELAY,
        limiter: RateLimiter | None = None,
    ) -> None:
        self.app = app
        self.dialect = config.dialect_table
        self.operator_token = config.operator_token
        self.counter = CallCounter()
        self.limiter = limiter or RateLimiter(config.qps, config.daily_quota)
        self.quota_headers = config.quota_headers
        self.fault_tokens = frozenset(config.fault_tokens)
        self.faults = FaultInjector(config.fault_rate, config.fault_seed, config.fault_kinds or fault_kinds)
        self.fault_delay = fault_delay
        self.routes = routes if routes is not None else getattr(app, "routes", None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path.rstrip("/") == CALLS_PATH:
            await self._operator_calls(scope, send)
            return
        template = self._template(scope)  # before the router rewrites root_path in the scope
        recorder = _Recorder(send)
        try:
            await self._handle(scope, receive, recorder)
        finally:
            if not path.startswith("/operator/"):
                self.counter.record(scope["method"], template, recorder.outcome, recorder.fault)

    async def _handle(self, scope: Scope, receive: Receive, send: _Recorder) -> None:
        if not scope["path"].startswith(API_PREFIX + "/"):
            await self.app(scope, receive, send)
            return
        token = _bearer(scope)  # no token: no quota to count against, the API answers 401
        refusal = self.limiter.check(token) if token is not None else None
        if refusal is not None:
            await _refuse(send, refusal, self.dialect)
            return
        if token is not None and self.quota_headers:
            send.extra = self.limiter.usage_headers(token)
        chosen = not self.fault_tokens or token in self.fault_tokens
        fault = send.fault = self.faults.draw() if chosen else None
        if fault is None:
            await self.app(scope, receive, send)
        elif fault in ("503", "500"):
            message = "Service temporarily unavailable" if fault == "503" else "Internal server error"
            await _json(send, int(fault), self.dialect.error_body(int(fault), message))
        elif fault == "drop":
            await _drop(send)
        elif fault == "delay":
            await self.app(scope, receive, send.hold())
            await asyncio.sleep(self.fault_delay)
            await send.release()
        else:  # lost: run the request to completion (commit), then drop the connection
            await self.app(scope, receive, send.hold())
            await _drop(send)

    def _template(self, scope: Scope) -> str:
        path: str = scope["path"]
        if self.routes is None:
            return path
        return _route_template(self.routes, scope) or path

    async def _operator_calls(self, scope: Scope, send: Send) -> None:
        if not self._operator_ok(scope):
            await _error(send, 401, "operator token required (Authorization: Bearer <operator token>)")
            return
        if scope["method"] == "GET":
            await _json(send, 200, self.counter.snapshot())
        elif scope["method"] == "DELETE":
            self.counter.reset()
            await _json(send, 200, self.counter.snapshot())
        else:
            await _error(send, 405, "method not allowed", [(b"allow", b"GET, DELETE")])

    def _operator_ok(self, scope: Scope) -> bool:
        given = _bearer(scope)
        expected = self.operator_token
        return bool(expected and given and hmac.compare_digest(given.encode(), expected.encode()))


def install_controls(app: Starlette, config: ServerConfig, **options: Any) -> ControlsMiddleware:
    """Put ``ControlsMiddleware`` outside Starlette's whole middleware stack and return it.

    ``add_middleware`` would place it inside Starlette's error middleware, which wraps
    ``send``; from the outside the middleware can drop a connection under uvicorn without
    a byte sent. Call it once, after all routes and other middleware are in place.
    """
    controls = ControlsMiddleware(app.build_middleware_stack(), config, routes=app.routes, **options)
    app.middleware_stack = controls
    return controls


def _route_template(routes: Sequence[BaseRoute], scope: Scope, prefix: str = "") -> str | None:
    """The route path template that would serve ``scope`` (mounts included), or ``None``."""
    partial: str | None = None
    for route in routes:
        match, child = route.matches(scope)
        if match is Match.NONE:
            continue
        if isinstance(route, Mount):
            inner = _route_template(route.routes, {**scope, **child}, prefix + route.path)
            if inner is not None:
                return inner
            continue
        template = prefix + str(getattr(route, "path", ""))
        if ":path}" in template:  # a catch-all says nothing about the call: keep its raw path
            continue
        if match is Match.FULL:
            return template
        partial = partial or template
    return partial


# --- sending -------------------------------------------------------------------------------


class _Recorder:
    """Wraps ``send``: remembers the status, or holds the messages back for a later release."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.outcome = "none"
        self.fault: str | None = None
        self.extra: list[tuple[bytes, bytes]] = []  # headers added to the answer
        self._held: list[Message] | None = None

    def hold(self) -> _Recorder:
        self._held = []
        return self

    async def release(self) -> None:
        held, self._held = self._held or [], None
        for message in held:
            await self(message)

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.outcome = str(message["status"])
            if self.extra:
                message = {**message, "headers": [*message.get("headers", []), *self.extra]}
        if self._held is not None:
            self._held.append(message)
            return
        await self.send(message)


async def _drop(send: Send) -> None:
    """Close the connection without an answer.

    Under uvicorn the ``send`` callable is bound to the request cycle, whose transport is
    aborted so that the client sees the connection go away with nothing sent. Elsewhere (an
    in-process ASGI transport, another server) a response is started and the call fails, which
    servers turn into a closed connection and ``httpx.ASGITransport`` into the same error an
    HTTP client raises for a dropped connection.
    """
    if isinstance(send, _Recorder):
        send.outcome = "dropped"
        send = send.send
    send = inspect.unwrap(send)  # the server's own send, under middleware that wraps it
    cycle = getattr(send, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if transport is not None and hasattr(transport, "abort"):
        transport.abort()
        for _ in range(10):  # let the server notice, so it does not try to answer a 500
            if getattr(cycle, "disconnected", True):
                break
            await asyncio.sleep(0)
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"1")]})
    raise httpx.RemoteProtocolError("Server disconnected without sending a response.")


async def _json(send: Send, status: int, body: Any, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    payload = json.dumps(body).encode()
    start_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": start_headers + (headers or [])})
    await send({"type": "http.response.body", "body": payload})


async def _error(send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await _json(send, status, {"errorCode": status, "errorMessage": message}, headers)


async def _refuse(send: Send, refusal: Refusal, dialect: Dialect = SPEC) -> None:
    """403 with the dialect's error-code headers and body (SUPPLEMENT §6; §10.10.6: a
    ``text/xml`` body ``<h1>Developer Over Qps</h1>`` and ``Retry-After: 1``)."""
    headers = [(name.lower().encode(), value.encode()) for name, value in dialect.error_headers(refusal.code).items()]
    if refusal.retry_after is not None and dialect.retry_after:
        seconds = dialect.fixed_retry_after or refusal.retry_after
        headers.append((b"retry-after", str(seconds).encode()))
    if dialect.throttle_markup is None:
        await _json(send, 403, dialect.error_body(403, refusal.message, code=refusal.code), headers)
        return
    payload = dialect.throttle_markup.format(message=refusal.message).encode()
    start = [(b"content-type", dialect.throttle_content_type.encode()), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": 403, "headers": start + headers})
    await send({"type": "http.response.body", "body": payload})


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = bytes(value).decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None
