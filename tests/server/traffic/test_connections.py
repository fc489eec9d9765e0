"""The back-end client's default transport (KeepAliveTransport over asyncio streams) against
small HTTP/1.1 servers on 127.0.0.1: connections kept alive and reused, a closed one replaced,
httpx's errors and timeouts (a dead port, a silent back end, no free connection), TLS."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
import trustme

from apimctl.server.traffic import connections
from apimctl.server.traffic.connections import KeepAliveTransport
from apimctl.server.traffic.sockets import AsyncioBackend

TIMEOUT = {"connect": 2.0, "read": 2.0, "write": 2.0, "pool": 2.0}
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Backend:
    """Answers each request with the request's head back as the body, counting connections;
    ``close`` adds ``Connection: close``; ``silent`` answers nothing."""

    def __init__(self, close: bool = False, silent: bool = False) -> None:
        self.close, self.silent = close, silent
        self.connections = 0

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                if self.silent:
                    await reader.read()
                    return
                extra = b"Connection: close\r\n" if self.close else b""
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(head), extra, head))
                await writer.drain()
                if self.close:
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()


async def _serve(handler: Handler, body: Callable[[str], Awaitable[Any]],
                 context: ssl.SSLContext | None = None) -> Any:
    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    async with server:
        return await body(f"{'https' if context else 'http'}://127.0.0.1:{port}")


async def _get(transport: httpx.AsyncBaseTransport, url: str, timeout: dict[str, float] = TIMEOUT) -> bytes:
    request = httpx.Request("GET", url, headers={"X-Call": "1"}, extensions={"timeout": timeout})
    response = await transport.handle_async_request(request)
    try:
        assert response.status_code == 200
        return await response.aread()
    finally:
        await response.aclose()


def test_connections_are_kept_alive_and_reused() -> None:
    backend = Backend()

    async def calls(base: str) -> list[bytes]:
        transport = KeepAliveTransport()
        try:
            return [await _get(transport, f"{base}/n/{i}") for i in range(4)]
        finally:
            await transport.aclose()

    heads = asyncio.run(_serve(backend, calls))
    assert [h.split(b"\r\n", 1)[0] for h in heads] == [f"GET /n/{i} HTTP/1.1".encode() for i in range(4)]
    assert b"X-Call: 1" in heads[0]
    assert backend.connections == 1


def test_concurrent_calls_open_one_connection_each_and_keep_them() -> None:
    backend = Backend()

    async def calls(base: str) -> None:
        transport = KeepAliveTransport()
        try:
            for _ in range(3):
                await asyncio.gather(*(_get(transport, f"{base}/c") for _ in range(4)))
        finally:
            await transport.aclose()

    asyncio.run(_serve(backend, calls))
    assert backend.connections == 4


def test_a_connection_the_back_end_closes_is_replaced() -> None:
    backend = Backend(close=True)

    async def calls(base: str) -> None:
        transport = KeepAliveTransport()
        try:
            for _ in range(3):
                await _get(transport, base)
        finally:
            await transport.aclose()

    asyncio.run(_serve(backend, calls))
    assert backend.connections == 3


def test_an_idle_connection_the_peer_closed_is_seen_as_readable() -> None:
    async def body(base: str) -> bool:
        port = int(base.rsplit(":", 1)[1])
        stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=2)
        assert stream.get_extra_info("is_readable") is False
        await stream.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        while await stream.read(65536, timeout=2):
            pass
        closed = bool(stream.get_extra_info("is_readable"))
        await stream.aclose()
        return closed

    assert asyncio.run(_serve(Backend(close=True), body)) is True


def test_dead_port_is_connect_error_and_silent_back_end_a_read_timeout() -> None:
    async def dead() -> None:
        server = await asyncio.start_server(Backend(), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        transport = KeepAliveTransport()
        with pytest.raises(httpx.ConnectError):
            await _get(transport, f"http://127.0.0.1:{port}/")

    async def silent(base: str) -> None:
        transport = KeepAliveTransport()
        with pytest.raises(httpx.ReadTimeout):
            await _get(transport, base, {**TIMEOUT, "read": 0.05})
        await transport.aclose()

    asyncio.run(dead())
    asyncio.run(_serve(Backend(silent=True), silent))


def test_no_free_connection_within_the_pool_timeout_is_a_pool_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connections, "MAX_CONNECTIONS", 1)

    async def calls(base: str) -> None:
        transport = KeepAliveTransport()
        held = await transport.handle_async_request(httpx.Request("GET", base, extensions={"timeout": TIMEOUT}))
        with pytest.raises(httpx.PoolTimeout):
            await _get(transport, base, {**TIMEOUT, "pool": 0.05})
        await held.aclose()  # the connection is free again
        assert (await _get(transport, base)).startswith(b"GET / HTTP/1.1")
        await transport.aclose()

    asyncio.run(_serve(Backend(), calls))


def test_https_back_end() -> None:
    authority = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(server_context)
    client_context = ssl.create_default_context()
    authority.configure_trust(client_context)
    backend = Backend()

    async def calls(base: str) -> list[bytes]:
        transport = KeepAliveTransport(client_context)
        try:
            return [await _get(transport, f"{base}/tls") for _ in range(2)]
        finally:
            await transport.aclose()

    heads = asyncio.run(_serve(backend, calls, server_context))
    assert all(h.startswith(b"GET /tls HTTP/1.1") for h in heads)
    assert backend.connections == 1


def test_one_back_end_gets_at_most_its_connections_and_another_is_not_kept_waiting() -> None:
    async def calls(base: str) -> None:
        transport = KeepAliveTransport(per_backend=1)
        held = await transport.handle_async_request(httpx.Request("GET", base, extensions={"timeout": TIMEOUT}))
        with pytest.raises(httpx.PoolTimeout):  # the origin's one connection is taken
            await _get(transport, base, {**TIMEOUT, "pool": 0.05})
        other = base.replace("127.0.0.1", "localhost")  # another origin, the same server
        assert (await _get(transport, other, {**TIMEOUT, "pool": 0.05})).startswith(b"GET / HTTP/1.1")
        await held.aclose()
        assert (await _get(transport, base)).startswith(b"GET / HTTP/1.1")
        await transport.aclose()

    asyncio.run(_serve(Backend(), calls))
