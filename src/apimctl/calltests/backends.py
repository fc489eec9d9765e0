"""Back ends of call tests: stubs answering in-process, and real back ends by URL.

:class:`BackendTransport` is the transport of the traffic manager's back-end client in a
test run: a call to a system domain that a test file declares is answered by its stub
(status, headers, body, or an echo of the request as JSON; after its delay, which on a
virtual clock moves the clock instead of waiting, and which at or above the endpoint's
response timeout is a timeout) or sent to the back end's real ``url`` (scheme, host and port
replaced, path and query kept). Other hosts go to the network as they are, unless the
transport is given ``refuse`` (``apimctl test``, whose files may come from anyone who opens a
pull request): then a call to a back end the test file does not declare is never made, and
``refuse`` makes the error that says why (the traffic manager answers it as unreachable).

An echo shows what the back end received with every value registered with
:mod:`apimctl.sensitive` masked (the password of ``systemDomainAuthentication`` in the
``Authorization`` header, an environment value in the query): a test file can check the
request's shape, not read a secret through its checks or the report.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from apimctl import sensitive
from apimctl.calltests.timing import ClockError


@dataclass
class Stub:
    address: str  # host[:port] of the system domain, lower case
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    echo: bool = False  # answer the request received, as JSON
    delay: float = 0.0
    url: str | None = None  # a real back end instead of a stub

    def answer(self, request: httpx.Request) -> httpx.Response:
        if self.echo:
            echo = {"method": request.method, "path": sensitive.scrub_url(request.url.path),
                    "query": sensitive.scrub_url(request.url.query.decode()),
                    "headers": {name: sensitive.scrub(value) for name, value in request.headers.items()},
                    "body": sensitive.scrub(request.content.decode("utf-8", "replace"))}
            return httpx.Response(self.status, headers={"Content-Type": "application/json", **self.headers},
                                  content=json.dumps(echo).encode())
        return httpx.Response(self.status, headers=self.headers, content=self.body)


def _address(url: httpx.URL) -> str:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.host.lower() + (f":{url.port}" if url.port and url.port != default else "")


class BackendTransport(httpx.AsyncBaseTransport):
    """Routes back-end calls to stubs, to real back ends by URL, or to the network."""

    def __init__(self, stubs: list[Stub], *, wait: Callable[[float], None] | None = None,
                 network: httpx.AsyncBaseTransport | None = None,
                 refuse: Callable[[str, httpx.Request], Exception] | None = None) -> None:
        self.stubs = {s.address.lower(): s for s in stubs}
        self.wait = wait  # a virtual clock's advance; None: real waiting
        self.network = network or httpx.AsyncHTTPTransport()
        self.refuse = refuse  # None: undeclared back ends are called over the network
        self.received: list[httpx.Request] = []

    def _stub(self, url: httpx.URL) -> Stub | None:
        return self.stubs.get(_address(url)) or self.stubs.get(url.host.lower())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        stub = self._stub(request.url)
        if stub is None and self.refuse is not None:
            raise self.refuse(f"back end {_address(request.url)} is not declared in the test file's backends; "
                              "declare it with a url to allow calls", request)
        if stub is None:
            return await self.network.handle_async_request(request)
        if stub.url:
            target = httpx.URL(stub.url)
            request.url = request.url.copy_with(scheme=target.scheme, host=target.host, port=target.port)
            request.headers["host"] = _address(request.url)
            return await self.network.handle_async_request(request)
        await request.aread()
        self.received.append(request)
        if stub.delay:
            timeout = (request.extensions.get("timeout") or {}).get("read")
            if timeout is not None and stub.delay >= timeout:
                raise httpx.ReadTimeout(f"the stub answers after {stub.delay:g} s", request=request)
            if self.wait is not None:
                try:
                    self.wait(stub.delay)
                except ClockError as exc:  # the virtual clock cannot show the instant of the answer
                    raise httpx.ReadTimeout(f"the stub answers after {stub.delay:g} s: {exc}", request=request) from None
            else:
                await asyncio.sleep(stub.delay)
        return stub.answer(request)

    async def aclose(self) -> None:
        await self.network.aclose()


def stubs_of(backends: list[dict[str, Any]]) -> list[Stub]:
    """Stubs of a test file's ``backends`` entries (already checked against the schema)."""
    out = []
    for entry in backends:
        body = entry.get("body", b"")
        headers = {str(k): str(v) for k, v in (entry.get("headers") or {}).items()}
        if not isinstance(body, str | bytes):
            body = json.dumps(body)
            headers.setdefault("Content-Type", "application/json")
        out.append(Stub(str(entry["address"]).lower(), int(entry.get("status", 200)), headers,
                        body.encode() if isinstance(body, str) else body, bool(entry.get("echo", False)),
                        float(entry.get("delay", 0)), entry.get("url")))
    return out
