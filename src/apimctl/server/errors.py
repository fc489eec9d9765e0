"""The reference server's own errors: HTTP problems, and a bad start-up setting.

Anything below the HTTP layer raises an :class:`HttpProblem`; :func:`apimctl.server.app.error_response`
is the one place that turns it into an answer (SUPPLEMENT §6). The server keeps this tree
apart from the reconciler's client errors, so that neither side imports the other's
internals::

    HttpProblem            {"errorCode": status, "errorMessage": message}
    ├── Invalid            400, body: the validation items [{"property", "message"}]
    │   └── EventVeto      (apimctl.server.events) a pre event refused the write
    ├── Unauthorized       401
    ├── NotFound           404
    ├── MethodNotAllowed   405
    ├── PayloadTooLarge    413
    └── UriTooLong         414
    ServerConfigError      a bad start-up setting (the ``--events-config`` file); a ValueError
"""

from __future__ import annotations

from typing import Any


class HttpProblem(Exception):
    """A request the server answers with an error status and a JSON body."""

    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def body(self) -> Any:
        """The JSON body of the answer."""
        return {"errorCode": self.status, "errorMessage": self.message}


class Invalid(HttpProblem):
    """400: the request is invalid; ``items`` name every property at fault."""

    status = 400

    def __init__(self, message: str, items: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.items = list(items or [])

    @classmethod
    def at(cls, path: str, message: str) -> Invalid:
        """One problem at the property ``path`` of the request ("" for the whole request)."""
        where = f"{path}: " if path else ""
        return cls(f"{where}{message}", [{"property": path, "message": message}])

    def body(self) -> Any:
        return self.items or [{"property": "", "message": self.message}]


class Unauthorized(HttpProblem):
    status = 401


class NotFound(HttpProblem):
    status = 404


class MethodNotAllowed(HttpProblem):
    status = 405


class PayloadTooLarge(HttpProblem):
    status = 413


class UriTooLong(HttpProblem):
    status = 414


class ServerConfigError(ValueError):
    """A start-up setting of the server is unusable; the message says where and what."""
