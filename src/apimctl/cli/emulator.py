"""The traffic emulator for ``apimctl call`` and ``apimctl test``: the reference server's
management API and traffic manager, in-process, on one database.

Like :mod:`apimctl.cli.target` for the management API, this module is where these commands
touch the server package. :func:`open_emulator` builds the two ASGI apps on a database (the
embedded area's ``.apimctl/local.db``, or a throw-away one), with the clock and the back-end
transport the caller gives, and hands back an :class:`Emulator`: transports for an
``httpx`` client of each listener, the token of the management API, the decisions of the
last call and the traffic manager itself (for calls without HTTP).
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

from apimctl.errors import ApimctlError


@dataclass
class Emulator:
    management: httpx.AsyncBaseTransport
    traffic: httpx.AsyncBaseTransport
    token: str
    manager: Any  # apimctl.server.traffic.manager.TrafficManager
    log: Any  # apimctl.server.traffic.log.CallLog
    close: Callable[[], None]

    def last_call(self) -> dict[str, Any] | None:
        """The log entry of the last call (its decisions and the deciding step)."""
        entry: dict[str, Any] | None = self.log.last()
        return entry

    async def send(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> httpx.Response:
        """A call handed to the traffic manager directly (no HTTP in between): ``url`` names
        the public host and path, ``headers`` carry ``Host`` and ``X-Forwarded-Proto``."""
        from apimctl.server.traffic.model import Call

        parts = urlsplit(url)
        call = Call(method, parts.scheme, parts.netloc, parts.path or "/",
                    parse_qsl(parts.query, keep_blank_values=True), headers, body, self.manager.clock())
        answer, _ = await self.manager.handle(call)
        return httpx.Response(answer.status, headers=answer.headers, content=answer.body)


def open_emulator(db_path: str, area: str, *, clock: Callable[[], float] | None = None,
                  transport: httpx.AsyncBaseTransport | None = None, dialect: str = "spec") -> Emulator:
    """The emulator on ``db_path`` (its management API bound to ``area``, domains approved at
    once); ``clock``: seconds since the epoch; ``transport``: of the back-end client."""
    try:
        from apimctl.server import ServerConfig, create_app
        from apimctl.server.traffic import create_traffic_app
    except ImportError as exc:
        raise ApimctlError(f"the reference server is not available ({exc})") from None
    token = secrets.token_urlsafe(24)
    config = ServerConfig(db_path=db_path, tokens={token: area}, auto_approve_domains=True, dialect=dialect)
    try:
        app = create_app(config)
    except (OSError, sqlite3.Error) as exc:
        raise ApimctlError(f"cannot open the database {db_path}: {exc}") from None
    traffic = create_traffic_app(app, clock=clock, transport=transport)
    server = app.state.server
    return Emulator(httpx.ASGITransport(app=app), httpx.ASGITransport(app=traffic), token, traffic.manager,
                    server.traffic_log, server.close)


def unreachable(reason: str, request: httpx.Request) -> Exception:
    """The error of a back-end transport that may not call ``request``: the traffic manager
    answers the call as unreachable, its decision saying ``reason``."""
    from apimctl.server.traffic.forward import Unreachable

    return Unreachable(reason, request=request)


def key_placer(services: Callable[[], Sequence[Mapping[str, Any]]]
               ) -> Callable[..., tuple[str, list[tuple[str, str]], bytes]]:
    """``place_key(method, url, headers, body, key)`` for call tests: the key put where the
    endpoint serving the call reads keys, among the services ``services()`` answers (the
    emulator's, or those read through a management API: :mod:`apimctl.calltests.placing`)."""
    from apimctl.calltests.placing import place_key

    def place(method: str, url: str, headers: list[tuple[str, str]], body: bytes,
              key: str) -> tuple[str, list[tuple[str, str]], bytes]:
        return place_key(services(), method, url, headers, body, key)

    return place


def emulated_services(emulator: Emulator) -> Callable[[], list[dict[str, Any]]]:
    """The services of the emulator's areas as its traffic manager sees them, for
    :func:`key_placer`."""
    def services() -> list[dict[str, Any]]:
        return [s for area in emulator.manager.reader.areas() for s in area.services]

    return services
