"""The traffic listener's HTTP/1.1: uvicorn's protocol (httptools', else h11's), with the
reason phrase the traffic manager names.

The platform answers an error with its message's ``status`` as the reason phrase (``403
Account Over Queries Per Second Limit``); uvicorn writes the standard phrase of the code and
ASGI has no field for another. :func:`http_protocol` is uvicorn's protocol whose connections
offer the app a setter in the scope's ``state`` (:data:`REASON`): called before the
response starts, it puts its phrase in the status line of that response (only one of that
code: an interim ``100 Continue`` keeps its own). Without the setter (any other ASGI server,
the in-process callers) the standard phrase stays.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any, cast

REASON = "apimctl.reason"  # the key of the setter in the scope's state
ReasonSetter = Callable[[int, str], None]
# RFC 9112 reason-phrase, kept to visible ASCII and space (the phrase is configuration)
_PHRASE = re.compile(r"[\x20-\x7e]{1,200}")
_PREFIX = b"HTTP/1.1 "


def usable(reason: str) -> bool:
    """Whether ``reason`` can be a reason phrase as it is."""
    return bool(_PHRASE.fullmatch(reason)) and reason.strip() == reason


class _Transport:
    """A connection's transport that writes the next status line of a given code with a given
    reason phrase; everything else goes to the connection's transport as it is."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._next: tuple[bytes, bytes] | None = None

    def reason(self, status: int, phrase: str) -> None:
        self._next = (str(status).encode("ascii"), phrase.encode("ascii")) if usable(phrase) else None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._next is not None and bytes(data[:len(_PREFIX) + 4]) == _PREFIX + self._next[0] + b" ":
            code, phrase = self._next
            self._next = None
            raw = bytes(data)
            data = _PREFIX + code + b" " + phrase + raw[raw.index(b"\r\n"):]
        self._transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class _Reasons(asyncio.Protocol):
    """Mixed into uvicorn's protocol: each connection's transport is a :class:`_Transport`
    whose setter is in the state of each request's scope."""

    app_state: dict[str, Any]

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        wrapped = _Transport(cast(asyncio.Transport, transport))
        self.app_state = {**self.app_state, REASON: wrapped.reason}
        super().connection_made(cast(asyncio.Transport, wrapped))


def http_protocol() -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol of choice (``http="auto"``), with reason phrases."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    return type("TrafficHTTPProtocol", (_Reasons, AutoHTTPProtocol), {})


def reason_setter(state: Any) -> ReasonSetter | None:
    """The setter of the connection a scope's ``state`` belongs to, if its server offers one."""
    setter = state.get(REASON) if isinstance(state, dict) else None
    return cast(ReasonSetter, setter) if callable(setter) else None
