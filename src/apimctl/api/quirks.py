"""Readers for the platform's irregular replies (spec/SUPPLEMENT.md §9).

Real deployments render the same thing in more than one way: an array of enums as a single
string, datetimes with ``+0000`` or ``Z``, unset collections as ``null``, single objects as a
one-element array or bare, and error bodies in three shapes (or as a gateway's HTML page).
The API client (``apimctl.api.client``) uses these to read replies; the normaliser uses them to
compare live objects with manifests.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from apimctl.kinds.ops import as_list as as_list  # one definition, re-exported for the client

_TAGS = re.compile(r"<[^>]*>")
_SPACES = re.compile(r"\s+")
_HTML_START = re.compile(r"^\s*(<!doctype html|<html|<head|<body)", re.IGNORECASE)




def parse_datetime(value: str | datetime) -> datetime:
    """An aware UTC datetime from either platform rendering (``.000+0000``, ``Z``) or any offset.

    A rendering without an offset is taken as UTC. Raises ``ValueError`` naming the value when
    it is not an ISO 8601 date-time.
    """
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"not an ISO 8601 date-time: {value!r}") from None
    else:
        raise ValueError(f"not an ISO 8601 date-time: {value!r}")
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def unwrap_one(body: Any) -> Any:
    """The single object of a reply rendered either bare or as a one-element array.

    ``[obj]`` → ``obj``; a bare object is returned as is. Raises ``ValueError`` for an array
    of any other length, which is not one object.
    """
    if isinstance(body, list):
        if len(body) == 1:
            return body[0]
        raise ValueError(f"expected one object, got an array of {len(body)}")
    return body


@dataclass(frozen=True)
class ErrorBody:
    """What an error reply says, whatever its shape."""

    message: str = ""
    code: str | None = None
    items: list[dict[str, Any]] = field(default_factory=list)

    def describe(self) -> str:
        """``message`` followed by ``property: message`` of every item, for error texts."""
        parts = [self.message] if self.message else []
        for item in self.items:
            prop = str(item.get("property") or "")
            text = str(item.get("message") or "")
            parts.append(f"{prop}: {text}" if prop else text)
        return "; ".join(p for p in parts if p)


def read_error_body(text: str, content_type: str = "") -> ErrorBody:
    """Read an error reply: a validation array, an ``errorCode``/``errorMessage`` object
    (optionally with ``errors``), an OAuth ``error``/``error_description`` object, a gateway's
    HTML page (summarised, never dumped) or plain text (shortened)."""
    stripped = text.strip()
    if not stripped:
        return ErrorBody()
    if "html" in content_type.lower() or _HTML_START.match(stripped):
        return ErrorBody(message=_html_summary(stripped))
    try:
        data = json.loads(stripped)
    except ValueError:
        return ErrorBody(message=_shorten(stripped))
    return _read_json_error(data)


def _read_json_error(data: Any) -> ErrorBody:
    if isinstance(data, list):
        items: list[dict[str, Any]] = []
        message, code = "", None
        for entry in data:
            sub = _read_json_error(entry)
            items.extend(sub.items)
            message = message or sub.message
            code = code or sub.code
        return ErrorBody(message=message, code=code, items=items)
    if not isinstance(data, dict):
        return ErrorBody(message=_shorten(str(data)))
    if "property" in data and "message" in data and "errorMessage" not in data:
        return ErrorBody(items=[_item(data)])
    text = data.get("errorMessage") or data.get("error_description") or data.get("message")
    found = data.get("errorCode") if isinstance(data.get("errorCode"), str) else None
    if found is None and isinstance(data.get("error"), str):
        found = data["error"]
        text = text or data["error"]
    errors = data.get("errors")
    items = [_item(e) for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []
    return ErrorBody(message=_shorten(str(text)) if text else "", code=found, items=items)


def _item(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "property": str(entry.get("property") or ""),
        "message": str(entry.get("message") or ""),
    }


def _html_summary(html: str) -> str:
    title = re.search(r"<title[^>]*>(.*?)</title>", html, re.IGNORECASE | re.DOTALL)
    summary = f" ({_shorten(_TAGS.sub('', title.group(1)), 80)})" if title else ""
    return f"an HTML page instead of an API reply, probably from a gateway in front of the API{summary}"


def _shorten(text: str, limit: int = 200) -> str:
    flat = _SPACES.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
