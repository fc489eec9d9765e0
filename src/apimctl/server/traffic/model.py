"""What flows through the traffic manager: a call, the decisions taken on it, the answer.

A :class:`Call` is one request as the emulator sees it (method, scheme, host, path, query,
headers, body, time); each step of SUPPLEMENT §11 adds a :class:`Decision` to the call's
trace, and the first step that refuses the call raises :class:`Refused` naming a message of
the error catalog (§5). :class:`Answer` is what goes back to the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from starlette.datastructures import QueryParams


@dataclass
class Call:
    """One call to the traffic manager."""

    method: str
    scheme: str
    host: str  # the Host header, port included
    # the path, percent-encoded: as sent, until the traffic manager normalises it
    # (traffic.request); the steps route, entitle and forward on the normalised one
    path: str
    query: list[tuple[str, str]]
    headers: list[tuple[str, str]]
    body: bytes
    time: float  # seconds since the epoch (the traffic manager's clock)

    @cached_property
    def header_map(self) -> dict[str, str]:
        """Header name (lower case) -> the first value the call sends for it."""
        first: dict[str, str] = {}
        for name, value in self.headers:
            first.setdefault(name.lower(), value)
        return first

    @cached_property
    def params(self) -> QueryParams:
        return QueryParams(self.query)

    def header(self, name: str) -> str | None:
        return self.header_map.get(name.lower())


@dataclass
class Decision:
    step: str  # request, route, transport, maintenance, cors, key, entitlement, limits, forward, return
    text: str


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    reason: str = ""  # the reason phrase, when not the standard one (an error message's status)


@dataclass
class Trace:
    """The decisions taken on one call, in order, and what was learnt on the way."""

    message_id: str
    decisions: list[Decision] = field(default_factory=list)
    deciding: str = ""  # the step that answered (the refusing one, or return)
    service: dict[str, Any] | None = None
    endpoint: dict[str, Any] | None = None
    secrets: list[str] = field(default_factory=list)  # never shown: the key of the call
    key: str = ""  # the key the key step found (the call-log export's api_key; never in the trace)

    def masked(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "(key)")
        return text

    def add(self, step: str, text: str) -> None:
        self.decisions.append(Decision(step, text))


class Refused(Exception):
    """A step refuses the call with a message of the error catalog (rendered through the
    endpoint's error set)."""

    def __init__(self, step: str, message_id: str, reason: str,
                 headers: list[tuple[str, str]] | None = None) -> None:
        super().__init__(f"{message_id}: {reason}")
        self.step, self.message_id, self.reason = step, message_id, reason
        self.headers = headers or []


class Final(Exception):
    """A step answers the call itself, outside the error set (596 Service Not Found, 405,
    a CORS pre-flight)."""

    def __init__(self, step: str, reason: str, answer: Answer) -> None:
        super().__init__(reason)
        self.step, self.reason, self.answer = step, reason, answer
