"""Over-long request targets: a clean 414 instead of a reset connection.

:func:`apimctl.server.app.create_app` puts :class:`UriLimit` outermost, so a request whose
target (path and query) is longer than :data:`MAX_TARGET_BYTES` is answered 414 with the
JSON error body before anything else looks at it (no counting, no routing, no store).

For uvicorn to hand such a request over at all, its HTTP parser must accept the request
head: h11 refuses a head that arrives in pieces larger than its ``max_incomplete_event_size``
(16 KiB by default) with a bare 400 and a reset connection. :data:`UVICORN_OPTIONS` raises
that bound to :data:`MAX_HEAD_BYTES`; whoever runs the app under uvicorn (``apimctl serve``,
the tests) passes them to ``uvicorn.Config``. Heads beyond that are still refused by uvicorn.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from apimctl.server.dialects import SPEC, Dialect
from apimctl.server.errors import UriTooLong

MAX_TARGET_BYTES = 16 * 1024  # longest request target (path + query) served
MAX_HEAD_BYTES = 8 * 1024 * 1024  # longest request head uvicorn (h11) reads, to answer 414

# h11 by name: the bound is h11's (uvicorn would take httptools where it is installed)
UVICORN_OPTIONS: Mapping[str, Any] = MappingProxyType({"http": "h11", "h11_max_incomplete_event_size": MAX_HEAD_BYTES})


def target_length(scope: Scope) -> int:
    """Bytes of the request target: the raw path and the query string."""
    raw_path = scope.get("raw_path") or str(scope.get("path", "")).encode()
    if b"?" in raw_path:  # some servers (httpx's ASGI transport) keep the query in raw_path
        return len(raw_path)
    query = scope.get("query_string") or b""
    return len(raw_path) + (1 + len(query) if query else 0)


class UriLimit:
    """Pure ASGI middleware answering 414 for request targets over :data:`MAX_TARGET_BYTES`."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_TARGET_BYTES, dialect: Dialect = SPEC) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.dialect = dialect

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and target_length(scope) > self.max_bytes:
            problem = UriTooLong(f"request URI longer than {self.max_bytes} bytes")
            code = "ERR_414_REQUEST_URI_TOO_LONG"
            response = JSONResponse(self.dialect.error_body(problem.status, problem.message, code=code),
                                    status_code=problem.status, headers=self.dialect.error_headers(code))
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
