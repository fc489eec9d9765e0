"""The traffic listener's connections: bounded, so that callers cannot take the server.

``apimctl serve --traffic-port`` runs the traffic app under uvicorn with one of the HTTP
protocols made here (:func:`protocol_class`), uvicorn's own with three bounds added:

- a request head (request line and header fields) longer than :attr:`Bounds.head_bytes` is
  answered ``431 Request Header Fields Too Large`` and the connection closed, before the head
  is kept whole (httptools has no bound of its own; h11's is its
  ``max_incomplete_event_size``, which uvicorn answers with a bare 400);
- a connection that sends no complete request head within :attr:`Bounds.idle_timeout`
  seconds of being opened, or of its last answer, is closed (uvicorn closes an idle
  connection only after an answer, and never one that sends nothing or a head that never
  ends);
- at most :attr:`Bounds.max_connections` connections are open at once: one more is answered
  ``503`` and closed, so idle callers cannot take every file descriptor of the process and
  the management listener stays reachable.

:func:`until_disconnected` runs a call while watching its caller: when the caller hangs up
the call (and with it the back-end call) is cancelled.

The same protocols send the reason phrase the traffic manager names: the platform answers an
error with its message's ``status`` as the reason phrase (``403 Account Over Queries Per
Second Limit``); uvicorn writes the standard phrase of the code and ASGI has no field for
another. Each connection offers the app a setter in the scope's ``state`` (:data:`REASON`,
:func:`reason_setter`): called before the response starts, it puts its phrase in the status
line of that response (only one of that code: an interim ``100 Continue`` keeps its own).
Without the setter (any other ASGI server, the in-process callers) the standard phrase stays.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from starlette.types import Receive

T = TypeVar("T")

HEAD_BYTES = 64 * 1024  # longest request head (request line and header fields)
IDLE_TIMEOUT = 5.0  # seconds a connection may wait without a complete request head
MAX_CONNECTIONS = 1000  # connections open at once to the traffic listener
LINGER = 1.0  # seconds the rest of a refused request head is read and dropped

TOO_LARGE = (b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
             b"content-length: 38\r\nconnection: close\r\n\r\nrequest header fields too large (431)\n")
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"content-length: 38\r\nconnection: close\r\n\r\ntoo many connections to the listener\r\n")


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


def reason_setter(state: Any) -> ReasonSetter | None:
    """The setter of the connection a scope's ``state`` belongs to, if its server offers one."""
    setter = state.get(REASON) if isinstance(state, dict) else None
    return cast(ReasonSetter, setter) if callable(setter) else None


@dataclass(frozen=True)
class Bounds:
    head_bytes: int = HEAD_BYTES
    idle_timeout: float = IDLE_TIMEOUT
    max_connections: int = MAX_CONNECTIONS


class _Bounded:
    """What both protocols add to uvicorn's (a mixin: uvicorn's class comes after it)."""

    bounds = Bounds()
    transport: asyncio.Transport
    connections: set[Any]
    cycle: Any
    _idle: asyncio.TimerHandle | None = None
    _discarding = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        if len(self.connections) > self.bounds.max_connections:
            self.transport.write(BUSY)
            self.transport.close()
            return
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._idle = asyncio.get_running_loop().call_later(self.bounds.idle_timeout, self._idle_out)

    def _disarm(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def _idle_out(self) -> None:
        """No complete request head in time: closed, unless a request is being answered."""
        self._idle = None
        if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if not self._discarding:
            super().data_received(data)  # type: ignore[misc]

    def _too_large(self) -> None:
        """431, then what the caller still sends is read and dropped for a moment before the
        connection closes (closed at once, unread bytes would reset it before the caller
        reads the answer)."""
        self._disarm()
        self._discarding = True
        self.transport.write(TOO_LARGE)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        asyncio.get_running_loop().call_later(LINGER, self.transport.close)


def _httptools() -> type[Any]:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class HttpToolsBounded(_Bounded, HttpToolsProtocol):
        _head = 0  # bytes received since the current request head began
        _in_head = True

        def data_received(self, data: bytes) -> None:
            if self._in_head:
                self._head += len(data)
            super().data_received(data)
            # still no complete head after more bytes than the bound: the parser (which keeps
            # a header field whole before it hands it over) is fed no more
            if self._in_head and self._head > self.bounds.head_bytes and not self._discarding:
                self._too_large()

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._disarm()
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._in_head, self._head = True, 0

    return HttpToolsBounded


def _h11() -> type[Any]:
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class H11Bounded(_Bounded, H11Protocol):
        def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(config, *args, **kwargs)
            import h11

            self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=self.bounds.head_bytes)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before:  # a request head came
                self._disarm()

        def send_400_response(self, msg: str) -> None:
            if len(self.conn.trailing_data[0]) > self.bounds.head_bytes:
                self._too_large()
            else:
                super().send_400_response(msg)

    return H11Bounded


def protocol_class(bounds: Bounds, http: str = "auto") -> type[Any]:
    """uvicorn's HTTP protocol (``auto``: httptools where it is installed, else h11) with
    ``bounds`` and the traffic manager's reason phrases; pass it as ``uvicorn.Config(http=...)``."""
    base: type[Any]
    if http == "h11":
        base = _h11()
    else:
        try:
            import httptools  # noqa: F401
        except ImportError:
            base = _h11()
        else:
            base = _httptools()
    return type(base.__name__, (_Reasons, base), {"bounds": bounds})


async def until_disconnected(receive: Receive, work: Awaitable[T]) -> T | None:
    """``work``'s result, or None when the caller hung up first or the server stops (uvicorn
    cancels the calls still running after its grace): ``work`` is then cancelled and waited
    for, so its back-end connection is closed and the call logged before this returns.

    Called once the request body has been read: uvicorn's next message is then
    ``http.disconnect``, sent when the connection closes."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnect(receive))
    try:
        await asyncio.wait((task, gone), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # the server stops: the caller is answered, not left hanging
        pass
    finally:
        gone.cancel()
    if not task.done():
        task.cancel()
        await asyncio.wait((task,))
    if task.cancelled():
        return None
    return task.result()


async def _disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
