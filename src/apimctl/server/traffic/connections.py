"""The back-end client's default transport: httpcore's HTTP/1.1 connections, kept alive per
origin.

The traffic manager sends its calls to the back end as :class:`httpx.Request` through an
:class:`httpx.AsyncBaseTransport` and reads :class:`httpx.Response` answers, with httpx's
timeouts and exceptions (step 8 of SUPPLEMENT §11). This transport is httpx's own
``AsyncHTTPTransport`` without its connection pool: httpcore's pool looks at every
connection it holds, twice per call, and asks each socket whether the peer hung up, so its
cost grows with the number of keep-alive connections. Here an idle connection waits in a
last-in-first-out list of its origin and only the one taken is checked (keep-alive expiry,
or a peer that closed it). At most :data:`MAX_CONNECTIONS` are open at once (httpx's
default) and at most ``per_backend`` (:data:`PER_BACKEND`) to one origin, so one slow back
end cannot take the connections every other endpoint needs (httpx's pool has no bound per
host): a call that finds none free within its ``pool`` timeout is a
:class:`httpx.PoolTimeout`. The connections read and write asyncio's streams
(:mod:`~apimctl.server.traffic.sockets`); httpcore's errors become httpx's, as httpx maps
them.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterator
from contextlib import contextmanager, suppress

import httpcore
import httpx

from apimctl.server.traffic.sockets import AsyncioBackend

MAX_CONNECTIONS = 100  # httpx's default limits
PER_BACKEND = 20  # connections open at once to one origin (scheme, host, port)
MAX_IDLE = 100  # per origin; more idle connections than that are closed
KEEPALIVE_EXPIRY = 5.0  # seconds an idle connection is kept

_ERRORS: dict[type[Exception], type[httpx.HTTPError]] = {
    httpcore.TimeoutException: httpx.TimeoutException, httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout, httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout, httpcore.NetworkError: httpx.NetworkError,
    httpcore.ConnectError: httpx.ConnectError, httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError, httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol, httpcore.ProtocolError: httpx.ProtocolError,
    httpcore.LocalProtocolError: httpx.LocalProtocolError, httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
}


@contextmanager
def _mapped() -> Iterator[None]:
    """httpcore's exceptions raised as httpx's (the most specific match, as httpx does)."""
    try:
        yield
    except Exception as exc:
        for kind in type(exc).__mro__:
            if kind in _ERRORS:
                raise _ERRORS[kind](str(exc)) from exc
        raise


class _Body(httpx.AsyncByteStream):
    """An answer's body; closing it hands the connection back."""

    def __init__(self, stream: AsyncIterable[bytes], done: Callable[[], None]) -> None:
        self._stream = stream
        self._done = done
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _mapped():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            closing = getattr(self._stream, "aclose", None)
            if closing is not None:
                with _mapped():
                    await closing()
        finally:
            self._done()


class KeepAliveTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 to the back ends over connections kept alive per origin."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None, *, per_backend: int = PER_BACKEND) -> None:
        self._ssl = ssl_context
        self._backend = AsyncioBackend()
        self._idle: dict[tuple[bytes, bytes, int], list[httpcore.AsyncHTTPConnection]] = {}
        self._slots: asyncio.Semaphore | None = None
        self._per_backend = per_backend
        self._origin_slots: dict[tuple[bytes, bytes, int], asyncio.Semaphore] = {}
        self._open: set[httpcore.AsyncHTTPConnection] = set()

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:  # made once, on the first https call (certifi's bundle, no env)
            self._ssl = httpx.create_ssl_context(trust_env=False)
        return self._ssl

    async def _slot(self, key: tuple[bytes, bytes, int], timeout: float | None) -> None:
        """A connection slot of the origin ``key`` and one of all (the origin's first: a slow
        back end waits for its own connections, not for everyone's)."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(MAX_CONNECTIONS)
        mine = self._origin_slots.get(key)
        if mine is None:
            mine = self._origin_slots[key] = asyncio.Semaphore(self._per_backend)
        if not mine.locked() and not self._slots.locked():  # free: no timer to arm
            await mine.acquire()
            await self._slots.acquire()
            return
        try:
            async with asyncio.timeout(timeout):
                await mine.acquire()
                try:
                    await self._slots.acquire()
                except BaseException:
                    mine.release()
                    raise
        except TimeoutError:
            raise httpx.PoolTimeout(f"no connection free within {timeout:g} s") from None

    def _release(self, key: tuple[bytes, bytes, int]) -> None:
        assert self._slots is not None
        self._slots.release()
        self._origin_slots[key].release()

    async def _take(self, origin: httpcore.Origin) -> httpcore.AsyncHTTPConnection:
        idle = self._idle.get((origin.scheme, origin.host, origin.port))
        while idle:
            connection = idle.pop()
            if connection.is_idle() and not connection.has_expired():
                return connection
            self._open.discard(connection)
            await connection.aclose()
        connection = httpcore.AsyncHTTPConnection(
            origin, ssl_context=self._context() if origin.scheme == b"https" else None,
            keepalive_expiry=KEEPALIVE_EXPIRY, network_backend=self._backend)
        self._open.add(connection)
        return connection

    def _give_back(self, origin: httpcore.Origin, connection: httpcore.AsyncHTTPConnection) -> None:
        self._release((origin.scheme, origin.host, origin.port))
        idle = self._idle.setdefault((origin.scheme, origin.host, origin.port), [])
        if connection.is_idle() and len(idle) < MAX_IDLE:
            idle.append(connection)
        elif not connection.is_closed():  # an answer left unread, or too many idle ones
            self._open.discard(connection)
            asyncio.get_running_loop().create_task(connection.aclose())
        else:
            self._open.discard(connection)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        url = request.url
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        origin = core.url.origin
        key = (origin.scheme, origin.host, origin.port)
        await self._slot(key, (request.extensions.get("timeout") or {}).get("pool"))
        connection: httpcore.AsyncHTTPConnection | None = None
        try:
            connection = await self._take(origin)
            with _mapped():
                answer = await connection.handle_async_request(core)
        except BaseException:
            await self._drop(key, connection)
            raise
        assert isinstance(answer.stream, AsyncIterable)
        taken = connection
        return httpx.Response(answer.status, headers=answer.headers, extensions=answer.extensions,
                              stream=_Body(answer.stream, lambda: self._give_back(origin, taken)))

    async def _drop(self, key: tuple[bytes, bytes, int], connection: httpcore.AsyncHTTPConnection | None) -> None:
        """A call that failed: its slots freed, its connection closed."""
        self._release(key)
        if connection is not None:
            self._open.discard(connection)
            with suppress(Exception):
                await connection.aclose()

    async def aclose(self) -> None:
        connections, self._open, self._idle = list(self._open), set(), {}
        for connection in connections:
            with suppress(Exception):
                await connection.aclose()
