"""What the HTTP layer hands the engine, and what it gets back.

:mod:`apimctl.server.app` builds an :class:`ApiRequest` from the HTTP request and renders the
:class:`ApiResponse`; :mod:`apimctl.server.engine` and its read and write paths
(:mod:`~apimctl.server.reads`, :mod:`~apimctl.server.writes`, :mod:`~apimctl.server.nested`,
:mod:`~apimctl.server.eventful`) pass them along.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from apimctl.server.fields import MISSING, Resource


@dataclass
class ApiRequest:
    method: str
    segments: list[str]
    params: Any  # starlette QueryParams (get / getlist)
    body: Any = MISSING
    area: str = ""
    user: str | None = None


@dataclass
class ApiResponse:
    status: int = 200
    body: Any = None  # JSON value; None -> empty body
    headers: dict[str, str] = field(default_factory=dict)
    template: str = ""
    stored: dict[str, Any] | None = None  # the document written (for post events)
    # documents created inside the write besides ``stored``: (resource, document, body path)
    created: list[tuple[Resource, dict[str, Any], str]] = field(default_factory=list)
    raw: bytes | None = None  # the body already encoded (large lists), instead of ``body``
    parts: list[bytes] | None = None  # the body encoded in pieces (pages of lists), sent as they are


def one(obj: Any, object_responses: bool) -> ApiResponse:
    """A single object, bare or as a one-element array (the response style)."""
    return ApiResponse(200, obj if object_responses else [obj])


def dumps(value: Any, indent: bool = False) -> bytes:
    """JSON bytes of a response body."""
    data = msgspec.json.encode(value)
    return msgspec.json.format(data, indent=2) if indent else data
