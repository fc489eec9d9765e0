"""Headers every answer of the management API carries in a dialect.

Real areas (SUPPLEMENT §10.10.5) answer every call of the management API and of the token
endpoint with ``X-Mashery-Responder``, and JSON with ``application/json;charset=UTF-8``.
:class:`AnswerHeaders` (put outermost by :func:`apimctl.server.app.create_app` when the
dialect has something to add) does that for every answer under ``/v3/``, whoever produced
it: the engine, the error handlers, the throttling and fault controls, the 414 of
:mod:`~apimctl.server.uri_limit`. The values are the dialect's
(:attr:`~apimctl.server.dialects.Dialect.answer_headers`,
:attr:`~apimctl.server.dialects.Dialect.json_content_type`).
"""

from __future__ import annotations

import functools

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from apimctl.server.dialects import Dialect

PREFIX = "/v3/"
JSON = b"application/json"


def needed(dialect: Dialect) -> bool:
    """Whether the dialect adds or changes anything."""
    return bool(dialect.answer_headers) or dialect.json_content_type != JSON.decode()


class AnswerHeaders:
    """Pure ASGI middleware: the dialect's headers on every answer under ``/v3/``."""

    def __init__(self, app: ASGIApp, dialect: Dialect) -> None:
        self.app = app
        self.extra = [(name.lower().encode("latin-1"), value.encode("latin-1"))
                      for name, value in dialect.answer_headers.items()]
        self.json = dialect.json_content_type.encode("latin-1")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(PREFIX):
            await self.app(scope, receive, send)
            return

        @functools.wraps(send)  # ``__wrapped__``: the controls drop connections through it
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": self._headers(message.get("headers") or [])}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _headers(self, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        out = []
        for name, value in headers:
            if name.lower() == b"content-type" and value.split(b";")[0].strip().lower() == JSON:
                value = self.json
            out.append((name, value))
        return out + self.extra
