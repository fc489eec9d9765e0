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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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
        entries: list[dict[str, Any]] = self.log.entries()
        return entries[-1] if entries else None


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
                    server.traffic_log, server.store.close)
