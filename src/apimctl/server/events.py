"""Event triggers of the reference server: callbacks around member, application and key writes.

The management-API resources for members, applications and package keys call an
``EventDispatcher`` around every create, update and delete: ``pre`` inside the request before
the write (its reply may enrich or veto the write), ``post`` after the commit (its failures are
only recorded). The configuration is the ``--events-config`` YAML of ``apimctl serve``
(spec/SUPPLEMENT.md section 8), parsed by :mod:`apimctl.server.events_config`. The operator
reads the log of recent calls through ``GET /operator/events`` (``event_log_endpoint``).

Wire format (the specification's "Events" section): ``POST {url}/v1/<object>`` for pre-create,
``PUT {url}/v1/<object>/<id>`` for post-create and both update events, ``DELETE`` with no body
for the delete events; query ``event=<name>&txn=<32 hex digits>``; headers ``Accept``,
``Content-Type`` and the object's agent header. Bodies are the snake_case payloads of
:mod:`apimctl.server.payloads`. With ``encoding: form`` nested objects and arrays are sent as
JSON text in their form field, booleans as ``true``/``false`` and nulls as empty strings.
A reply is read in chunks; one larger than :data:`MAX_REPLY_BYTES` is a failed delivery.

An area's ``timeout`` is a total deadline per call: waiting for a connection, connecting,
sending and reading the whole reply, whatever the receiver drips. The calls run on an event
loop of the dispatcher's own (:class:`_Caller`, a thread), each area with its own connection
pool, under ``asyncio.timeout``; the request's worker thread waits for the outcome and, while
it waits, lends its place in the server's shared worker pool (:func:`_lent_worker`), so that a
slow receiver of one area never stalls another area's calls.

Secrets (a key's ``secret``) travel to the configured receiver, which is part of the protocol,
but never appear in the event log.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import secrets
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import anyio.from_thread
import anyio.to_thread
import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from apimctl.server.errors import Invalid
from apimctl.server.events_config import (
    CONTENT_TYPES,
    DEFAULT_TIMEOUT,
    METHODS,
    OBJECTS,
    AreaEvents,
    load_events_config,
    parse_events_config,
)
from apimctl.server.payloads import (
    WRITABLE,
    application_payload,
    apply_changes,
    key_payload,
    member_payload,
    redact,
    snake_to_camel,
)

__all__ = [
    "AGENT", "DEFAULT_TIMEOUT", "MAX_REPLY_BYTES", "AreaEvents", "EventDispatcher", "EventVeto",
    "application_payload", "apply_changes", "event_log_endpoint", "key_payload",
    "load_events_config", "member_payload", "parse_events_config",
]

AGENT = "Svc Event Trigger 1.0"
LOG_SIZE = 1000
MAX_REPLY_BYTES = 1024 * 1024  # a receiver's reply beyond this is a failed delivery
MAX_LENT = 256  # worker places lent to the shared pool at once, by threads waiting on receivers


class EventVeto(Invalid):
    """A pre event refused the write: ``items`` is the body of the 400 answer."""

    def __init__(self, items: list[dict[str, str]]) -> None:
        super().__init__("; ".join(f"{i['property'] or '-'}: {i['message']}" for i in items), items)


# --- the dispatcher ------------------------------------------------------------------------


@dataclass
class _Call:
    """One callback to make, and what became of it."""

    area: str
    obj: str
    event: str
    txn: str
    url: str
    headers: dict[str, str]
    payload: dict[str, Any] | None
    body: bytes = b""
    status: int | None = None
    reply: Any = None
    outcome: str = ""
    error: str = ""
    duration_ms: float = 0.0


class EventDispatcher:
    """Calls the configured receivers and keeps a bounded log of the calls made.

    Thread-safe: route handlers may call it from Starlette's thread pool.
    """

    def __init__(self, config: dict[str, Any] | None, *, log_size: int = LOG_SIZE) -> None:
        self.areas = parse_events_config(config)
        self._log: deque[dict[str, Any]] = deque(maxlen=log_size)
        self._lock = threading.Lock()
        self._caller = _Caller()

    def enabled(self, area: str, obj: str, event: str) -> bool:
        settings = self.areas.get(area)
        return settings is not None and (obj, event) in settings.events

    def new_txn(self) -> str:
        return secrets.token_hex(16)

    def pre(
        self,
        area: str,
        obj: str,
        event: str,
        payload: dict[str, Any] | None,
        obj_id: str | None,
        txn: str,
    ) -> dict[str, Any]:
        """Ask the receiver about a write; the snake_case changes to apply, or ``EventVeto``."""
        if not self.enabled(area, obj, event):
            return {}
        call = self._send(area, obj, event, payload, obj_id, txn)
        try:
            changes = _pre_outcome(call)
        except EventVeto as veto:
            call.outcome = call.outcome or "failed"
            call.error = call.error or str(veto)
            raise
        finally:
            self._record(call)
        return changes

    def post(
        self,
        area: str,
        obj: str,
        event: str,
        payload: dict[str, Any] | None,
        obj_id: str | None,
        txn: str,
    ) -> None:
        """Tell the receiver about a committed write; failures are only recorded."""
        if not self.enabled(area, obj, event):
            return
        try:
            call = self._send(area, obj, event, payload, obj_id, txn)
        except ValueError as exc:  # a caller's mistake must not break a committed write
            call = _Call(area, obj, event, txn, "", {}, None, outcome="failed", error=str(exc))
        if not call.outcome:
            call.outcome = "ok" if call.status == 200 else "failed"
            if call.status != 200:
                call.error = f"receiver answered HTTP {call.status}"
        self._record(call)

    def log(self, area: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """Recent calls, newest last."""
        with self._lock:
            entries = [e for e in self._log if area is None or e["area"] == area]
        if limit is None:
            return entries
        return entries[-limit:] if limit > 0 else []

    def close(self) -> None:
        self._caller.close()

    # -- one call ---------------------------------------------------------------------------

    def _send(
        self,
        area: str,
        obj: str,
        event: str,
        payload: dict[str, Any] | None,
        obj_id: str | None,
        txn: str,
    ) -> _Call:
        settings = self.areas[area]
        call = _build_call(settings, area, obj, event, payload, obj_id, txn)
        started = time.perf_counter()
        try:
            with _lent_worker():
                answer = self._caller.call(area, call, settings.timeout)
        except (TimeoutError, httpx.TimeoutException):
            call.outcome, call.error = "timeout", f"no complete reply within {settings.timeout:g} s"
        except httpx.HTTPError as exc:
            call.outcome, call.error = "failed", f"cannot reach the receiver: {type(exc).__name__}"
        else:
            call.status = answer.status
            if answer.raw is None:
                call.outcome, call.error = "failed", f"reply larger than {MAX_REPLY_BYTES} bytes"
            else:
                call.reply = _reply_body(answer.raw, answer.charset)
        call.duration_ms = round((time.perf_counter() - started) * 1000, 1)
        if call.status is not None and call.duration_ms > settings.timeout * 1000:
            call.outcome, call.error = "timeout", f"no complete reply within {settings.timeout:g} s"
        return call

    def _record(self, call: _Call) -> None:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "area": call.area,
            "object": call.obj,
            "event": call.event,
            "txn": call.txn,
            "request": {
                "method": METHODS[call.event],
                "url": call.url,
                "headers": call.headers,
                "body": redact(call.payload),
            },
            "status": call.status,
            "reply": redact(call.reply),
            "outcome": call.outcome,
            "error": call.error,
            "duration_ms": call.duration_ms,
        }
        with self._lock:
            self._log.append(entry)


def _build_call(
    settings: AreaEvents,
    area: str,
    obj: str,
    event: str,
    payload: dict[str, Any] | None,
    obj_id: str | None,
    txn: str,
) -> _Call:
    if obj not in OBJECTS or event not in METHODS:
        raise ValueError(f"unknown event {obj}/{event}")
    path = f"/v1/{obj}"
    if event != "pre-create":
        if not obj_id:
            raise ValueError(f"{obj} {event} needs the object's id")
        path += "/" + quote(str(obj_id), safe="")
    url = f"{settings.url}{path}?{urlencode({'event': event, 'txn': txn})}"
    headers = {
        "Accept": "application/json",
        "Content-Type": CONTENT_TYPES[settings.encoding],
        OBJECTS[obj]: AGENT,
    }
    body_payload = None if event.endswith("-delete") else (payload or {})
    body = _encode(body_payload, settings.encoding) if body_payload is not None else b""
    return _Call(area, obj, event, txn, url, headers, body_payload, body)


def _encode(payload: dict[str, Any], encoding: str) -> bytes:
    if encoding == "json":
        return json.dumps(payload, separators=(",", ":")).encode()
    return urlencode([(k, _form_value(v)) for k, v in payload.items()]).encode()


def _form_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


async def _read_reply(response: httpx.Response) -> bytes | None:
    """The reply body, read in chunks; ``None`` (unread beyond the limit) when it is larger
    than :data:`MAX_REPLY_BYTES`."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_REPLY_BYTES:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _reply_body(raw: bytes, charset: str | None) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return _text(raw, charset)[:2000]


def _text(raw: bytes, charset: str | None) -> str:
    try:
        return raw.decode(charset or "utf-8", errors="replace")
    except LookupError:  # an unknown charset: read it as UTF-8
        return raw.decode("utf-8", errors="replace")


# --- the calls: a loop of their own, a total deadline each ----------------------------------


@dataclass(frozen=True)
class _Answer:
    """A receiver's reply: its status, charset and body (``None``: larger than allowed)."""

    status: int
    charset: str | None
    raw: bytes | None


class _Caller:
    """Makes the receivers' calls on an event loop of its own (a daemon thread, started with
    the first call), with a connection pool per area, each call under its total deadline."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._clients: dict[str, httpx.AsyncClient] = {}  # touched on the loop's thread only

    def call(self, area: str, call: _Call, timeout: float) -> _Answer:
        """Send ``call`` and read the whole reply within ``timeout`` seconds, or raise
        ``TimeoutError`` (``httpx.HTTPError`` when the receiver cannot be reached)."""
        future = asyncio.run_coroutine_threadsafe(self._exchange(area, call, timeout), self._running())
        try:
            return future.result(timeout + 1.0)  # the loop cuts it at ``timeout``: a safety net
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no complete reply within {timeout:g} s") from None

    async def _exchange(self, area: str, call: _Call, timeout: float) -> _Answer:
        client = self._client(area)
        async with asyncio.timeout(timeout):
            request = client.build_request(METHODS[call.event], call.url, headers=call.headers,
                                           content=call.body or None, timeout=timeout)
            response = await client.send(request, stream=True)
            try:
                raw = await _read_reply(response)
            finally:
                await response.aclose()
        return _Answer(response.status_code, response.charset_encoding, raw)

    def _client(self, area: str) -> httpx.AsyncClient:
        client = self._clients.get(area)
        if client is None:
            # trust_env off: callbacks go straight to the configured URL, never via a proxy
            # identity: a reply is read as sent, so its size bounds what is held in memory
            client = self._clients[area] = httpx.AsyncClient(
                headers={"User-Agent": "apimctl-reference-server", "Accept-Encoding": "identity"},
                trust_env=False)
        return client

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                                name="event-trigger-calls")
                self._thread.start()
            return self._loop

    def close(self) -> None:
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return

        async def close_clients() -> None:
            for client in self._clients.values():
                await client.aclose()
            self._clients.clear()

        asyncio.run_coroutine_threadsafe(close_clients(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


_lent = 0  # worker places lent right now (see _lent_worker)
_lent_lock = threading.Lock()


@contextmanager
def _lent_worker() -> Iterator[None]:
    """While this thread waits on a receiver, the server's shared worker pool (AnyIO's default
    thread limiter, which runs every request's handler) counts one worker more, so that writes
    waiting on a slow receiver never hold the places other requests need. Outside a worker
    thread of AnyIO (a dispatcher called directly), or past :data:`MAX_LENT`, nothing is lent."""
    global _lent
    try:
        limiter = anyio.from_thread.run_sync(anyio.to_thread.current_default_thread_limiter)
    except RuntimeError:  # not called from a worker thread of the server
        yield
        return
    with _lent_lock:
        lend = _lent < MAX_LENT
        _lent += lend
    if not lend:
        yield
        return
    anyio.from_thread.run_sync(_resize, limiter, 1)
    try:
        yield
    finally:
        anyio.from_thread.run_sync(_resize, limiter, -1)
        with _lent_lock:
            _lent -= 1


def _resize(limiter: anyio.CapacityLimiter, change: int) -> None:
    limiter.total_tokens = max(1, int(limiter.total_tokens) + change)


# --- reading a pre event's reply -----------------------------------------------------------


def _pre_outcome(call: _Call) -> dict[str, Any]:
    """Decide a pre event from its reply (spec "Response to a pre event")."""
    what = f"event trigger {call.event} for {call.obj}"
    if call.outcome == "timeout":
        raise EventVeto([{"property": "", "message": f"{what} timed out ({call.error})"}])
    if call.status is None or call.outcome == "failed":
        raise EventVeto([{"property": "", "message": f"{what} failed: {call.error}"}])
    reply = call.reply if isinstance(call.reply, dict) else {}
    kind = reply.get("type")
    if call.status == 200 and kind == "proceed":
        call.outcome = "proceed"
        return {}
    if call.status == 200 and kind == "proceed_with_changes":
        changes = _changes(call.obj, reply.get("params"))
        call.outcome = "proceed_with_changes"
        return changes
    if call.status == 400 and kind == "stop":
        call.outcome = "stop"
        raise EventVeto(_stop_items(call.obj, reply.get("error")))
    detail = f"HTTP {call.status}" if isinstance(call.reply, dict) else f"HTTP {call.status}, not a JSON object"
    call.error = f"unexpected reply ({detail})"
    raise EventVeto([{"property": "", "message": f"{what} failed: {call.error}"}])


def _changes(obj: str, params: Any) -> dict[str, Any]:
    """Merge ``params`` (``[{field: value}, ...]``) into one snake_case dict of allowed fields."""
    if isinstance(params, dict):
        params = [params]
    if params is None:
        params = []
    if not isinstance(params, list) or not all(isinstance(p, dict) for p in params):
        raise EventVeto([{"property": "", "message": "event trigger failed: params must be a list of objects"}])
    changes: dict[str, Any] = {}
    for item in params:
        changes.update(item)
    refused = sorted(set(changes) - WRITABLE[obj])
    if refused:
        raise EventVeto([
            {"property": name, "message": f"event trigger failed: proceed_with_changes cannot set {name!r} of a {obj}"}
            for name in refused
        ])
    return changes


def _stop_items(obj: str, error: Any) -> list[dict[str, str]]:
    error = error if isinstance(error, dict) else {}
    message = str(error.get("message") or "refused by the event trigger")
    items = []
    for entry in error.get("data") or []:
        if isinstance(entry, dict):
            name = str(entry.get("field") or "")
            prop = snake_to_camel(name) if name in WRITABLE[obj] else name
            items.append({"property": prop, "message": str(entry.get("message") or message)})
    return items or [{"property": "", "message": message}]


# --- operator view -------------------------------------------------------------------------


def event_log_endpoint(dispatcher: EventDispatcher) -> Callable[[Request], Awaitable[Response]]:
    """A Starlette endpoint for ``GET /operator/events`` (``?area=`` and ``?limit=`` optional).

    Operator authentication is the caller's job (the route is mounted behind it).
    """

    async def endpoint(request: Request) -> Response:
        area = request.query_params.get("area")
        raw_limit = request.query_params.get("limit", "")
        if raw_limit and not raw_limit.isdigit():
            return JSONResponse([{"property": "limit", "message": "must be a non-negative integer"}], status_code=400)
        return JSONResponse(dispatcher.log(area, int(raw_limit) if raw_limit else None))

    return endpoint
