"""Hostile back ends on 127.0.0.1 and ``apimctl serve --traffic-port`` as a subprocess, for
the tests of the traffic listener's bounds (test_bounds).

:class:`Hostile` is one raw HTTP/1.1 server in a thread of its own; by path it echoes
(``/echo``: the request's header fields as JSON, with its own ``Date`` and ``Server``),
drips (``/drip``: 10 announced bytes, one each 0.5 s), never ends (``/endless``: chunks
until the peer leaves), holds (``/hold``: no answer until :attr:`Hostile.release` is set or
the peer hangs up, counting both and the most held at once) and redirects (``/away``: 307 to
``/landed`` of another server; ``/home``: 307 to its own ``/echo``). Every request head is
kept in :attr:`Hostile.heads`.

:func:`start_serve` starts ``apimctl serve`` with a traffic port and the given options;
:func:`populate` builds an area of one keyless service whose endpoints reach those paths.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

PUBLIC = "api.example.com"
TOKEN, OPERATOR = "bounds-token", "bounds-operator"


class Hostile:
    """A back end that misbehaves on purpose (see the module)."""

    def __init__(self, away: str = "") -> None:
        self.away = away  # base URL of the server /away redirects to
        self.heads: list[bytes] = []
        self.holding = 0
        self.most_held = 0
        self.hung_up = 0  # /hold calls whose peer closed the connection first
        self.release = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> Hostile:
        self._thread.start()
        server = asyncio.run_coroutine_threadsafe(asyncio.start_server(self._serve, "127.0.0.1", 0), self.loop).result(5)
        self._server = server
        self.port = server.sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()

        async def stop() -> None:
            self._server.close()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with suppress(ConnectionError, asyncio.IncompleteReadError, OSError):
            while head := await reader.readuntil(b"\r\n\r\n"):
                self.heads.append(head)
                path = head.split(b" ", 2)[1].decode()
                length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
                if length:
                    await reader.readexactly(int(length.group(1)))
                if not await self._answer(path, head, reader, writer):
                    break
        writer.close()

    async def _answer(self, path: str, head: bytes, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> bool:
        """Answers one request; False when the connection is done."""
        if path.startswith("/echo") or path.startswith("/landed"):
            fields = [line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line]
            body = json.dumps([[n.decode().strip().lower(), v.decode().strip()] for n, v in fields]).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nDate: Mon, 01 Jan 2029 00:00:00 GMT\r\nServer: hostile\r\n"
                         b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        elif path.startswith("/drip"):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
            for _ in range(10):
                await writer.drain()
                writer.write(b"x")
                await asyncio.sleep(0.5)
        elif path.startswith("/endless"):
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            chunk = b"%x\r\n%s\r\n" % (65536, b"e" * 65536)
            while True:
                writer.write(chunk)
                await writer.drain()
        elif path.startswith("/hold"):
            return await self._hold(reader, writer)
        elif path.startswith("/away") or path.startswith("/home"):
            target = f"{self.away}/landed" if path.startswith("/away") else "/echo"
            writer.write(f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {target}\r\nContent-Length: 0\r\n\r\n".encode())
        await writer.drain()
        return True

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        self.holding += 1
        self.most_held = max(self.most_held, self.holding)
        peer = asyncio.ensure_future(reader.read(1))
        try:
            while not self.release.is_set():
                done, _ = await asyncio.wait([peer], timeout=0.05)
                if done:
                    self.hung_up += 1
                    return False
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nheld")
            await writer.drain()
            return True
        finally:
            self.holding -= 1
            peer.cancel()


def wait_for(predicate: Any, seconds: float = 5.0) -> bool:
    """Whether ``predicate()`` came true within ``seconds`` (a hang guard, polled)."""
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@dataclass
class Serve:
    process: subprocess.Popen[str]
    api: str
    traffic: str

    def call(self, path: str, **kwargs: Any) -> httpx.Response:
        headers = {"Host": PUBLIC, **kwargs.pop("headers", {})}
        return httpx.get(f"{self.traffic}{path}", headers=headers, timeout=15, **kwargs)

    def calls(self) -> list[dict[str, Any]]:
        answer = httpx.get(f"{self.api}/operator/traffic", headers={"Authorization": f"Bearer {OPERATOR}"})
        return answer.json()  # type: ignore[no-any-return]


@contextmanager
def start_serve(tmp: Path, dialect: str, *options: str) -> Iterator[Serve]:
    process = subprocess.Popen(
        [sys.executable, "-m", "apimctl", "serve", "--port", "0", "--traffic-port", "0", "--db", str(tmp / "s.db"),
         "--token", f"{TOKEN}=bounds", "--operator-token", OPERATOR, "--auto-approve-domains",
         "--dialect", dialect, *options], stderr=subprocess.PIPE, text=True)
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 30
        while not any(line.startswith("traffic manager on ") for line in lines):
            assert process.stderr is not None and time.monotonic() < deadline, lines
            lines.append(process.stderr.readline())
        api = re.search(r"(http://127\.0\.0\.1:\d+)/v3/rest", "".join(lines))
        traffic = re.search(r"traffic manager on (http://127\.0\.0\.1:\d+)", "".join(lines))
        assert api and traffic
        yield Serve(process, api.group(1), traffic.group(1))
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=15)


def _one(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.json()
    return body[0] if isinstance(body, list) else body  # type: ignore[no-any-return]


def populate(serve: Serve, dialect: str, backend: Hostile, other: Hostile) -> None:
    """One keyless service: an endpoint per path of ``backend`` (``Other`` reaches ``other``)."""
    def api(method: str, path: str, **kwargs: Any) -> httpx.Response:
        return httpx.request(method, f"{serve.api}/v3/rest{path}", headers={"Authorization": f"Bearer {TOKEN}"},
                             **kwargs)

    for domain in ("example.com", "127.0.0.1"):
        _one(api("POST", "/domains", json={"domain": domain}))
    prefix = "svc" if dialect == "spec" else "mashery"
    common = {"publicDomains": [{"address": PUBLIC}], "trafficManagerDomain": PUBLIC, "allowMissingApiKey": True,
              "supportedHttpMethods": ["get"], "outboundTransportProtocol": "http",
              "systemDomains": [{"address": f"127.0.0.1:{backend.port}"}],
              "connectionTimeoutForSystemDomainRequest": 2, "connectionTimeoutForSystemDomainResponse": 2}
    endpoints = [
        {"name": "Echo", "requestPathAlias": "/echo", "forwardedHeaders": [f"{prefix}-host", f"{prefix}-message-id"]},
        {"name": "Drip", "requestPathAlias": "/drip"},
        {"name": "Endless", "requestPathAlias": "/endless", "connectionTimeoutForSystemDomainResponse": 20},
        {"name": "Hold", "requestPathAlias": "/hold", "connectionTimeoutForSystemDomainResponse": 30},
        {"name": "Away", "requestPathAlias": "/away", "numberOfHttpRedirectsToFollow": 3},
        {"name": "Home", "requestPathAlias": "/home", "numberOfHttpRedirectsToFollow": 3},
        {"name": "Other", "requestPathAlias": "/other", "outboundRequestTargetPath": "/echo",
         "systemDomains": [{"address": f"127.0.0.1:{other.port}"}]},
    ]
    created = _one(api("POST", "/services", json={"name": "Hostile", "endpoints": [{**common, **e} for e in endpoints]}))
    service = _one(api("GET", f"/services/{created['id']}", params={"fields": "id,endpoints"}))
    for endpoint in service["endpoints"]:
        if endpoint["name"] in ("Away", "Home"):
            _one(api("POST", f"/services/{service['id']}/endpoints/{endpoint['id']}/systemDomainAuthentication",
                     json={"type": "httpBasic", "username": "backend-user", "password": "backend-password"}))
    package = _one(api("POST", "/packages", json={"name": "P", "plans": [{"name": "Open", "services": [
        {"id": service["id"], "endpoints": [{"id": e["id"]} for e in service["endpoints"]]}]}]}))
    package = _one(api("GET", f"/packages/{package['id']}", params={"fields": "id,plans"}))
    _one(api("POST", "/members", json={
        "username": "u", "email": "u@example.com", "displayName": "U", "externalId": "u", "passwdNew": "pw-u-1234567",
        "applications": [{"name": "A", "username": "u", "packageKeys": [
            {"apikey": "noapikey", "package": {"id": package["id"]}, "plan": {"id": package["plans"][0]["id"]}}]}]}))
