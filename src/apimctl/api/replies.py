"""What a reply of the management API means: a decoded success, or the error it maps to.

``apimctl.api.client.ApiClient`` sends a request and hands the response (or the httpx exception)
here; the result is a :class:`Reply` or one error of ``apimctl.errors`` whose type alone
decides whether the client retries (STYLE §7). Every error body shape of spec/SUPPLEMENT.md
§6 and §9 is read by ``apimctl.api.quirks.read_error_body``. Messages say what and where
(``GET /services: 500 Internal Server Error: <message>``); the access token is redacted from
anything a server or a library might echo.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any

import httpx
import msgspec

from apimctl.api.quirks import read_error_body, unwrap_one
from apimctl.api.requests import route
from apimctl.errors import (
    ApiError,
    AuthError,
    Invalid,
    NotFound,
    QuotaExhausted,
    ServerError,
    Throttled,
    TransportError,
)
from apimctl.kinds.dialects import ERROR_CODE_HEADERS
from apimctl.speed import collector_paused

MASHERY_CODE_HEADER = ERROR_CODE_HEADERS[1]  # its throttling replies carry no Retry-After

OVER_QPS = "ERR_403_DEVELOPER_OVER_QPS"
OVER_RATE = "ERR_403_DEVELOPER_OVER_RATE"
MAX_RETRY_AFTER = 300.0  # never sleep longer than this on one Retry-After
THROTTLE_WAIT = 1.0  # seconds before retrying a throttled call that says no Retry-After


@dataclass(frozen=True)
class Reply:
    """A successful reply: status, headers and the decoded JSON body (``None`` when empty)."""

    status: int
    headers: httpx.Headers
    data: Any


def read_reply(where: str, response: httpx.Response, token: str, *,
               list_content: memoryview | None = None) -> Reply | ApiError:
    """The decoded reply, or the error a failure status (or an unreadable body) means;
    ``list_content``: the body of a list reply, read apart, its items left encoded
    (:func:`decode_list`)."""
    error = error_for(where, response, token)
    if error is not None:
        return error
    try:
        data = decode(response) if list_content is None else decode_list(list_content, response)
    except ValueError as exc:
        status = response.status_code
        return ServerError(
            f"{where}: {status}: {exc}", status=status, method=_method(where), url=url_of(response)
        )
    return Reply(response.status_code, response.headers, data)


def transport_error(
    where: str, exc: httpx.RequestError, timeout: float, token: str = ""
) -> TransportError:
    """No usable reply: a timeout, a refused or dropped connection, a protocol failure."""
    if isinstance(exc, httpx.TimeoutException):
        return TransportError(f"{where}: no reply within {timeout:g} s", method=_method(where))
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return TransportError(
        f"{where}: connection failed ({redact(detail, token)})", method=_method(where)
    )


def connect_failed(exc: httpx.RequestError) -> bool:
    """The request never reached a server: the connection was refused or reset while being
    made, the name did not resolve, or connecting timed out. A slow reply (read timeout) or a
    response dropped midway is a live server's failure, not this."""
    return isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)


def decode(response: httpx.Response) -> Any:
    """The JSON body, ``None`` when empty; ``ValueError`` saying what came instead."""
    content = response.content
    if not content.strip():
        return None
    # fast, straight from the bytes (no text copy of a page of 1,000 services), the cyclic
    # collector paused: the decoded values hold no cycles, and a collection while the area's
    # pages pile up would walk all of them (it tripled the decoding time of a page)
    with collector_paused():
        try:
            return msgspec.json.decode(content)
        except msgspec.DecodeError:
            pass  # what only the standard decoder reads (NaN, a BOM, lone surrogates), or an error
    try:
        return response.json()
    except ValueError:
        body = read_error_body(response.text, response.headers.get("content-type", ""))
        raise ValueError(f"unreadable reply, not JSON: {body.message}") from None


# a list reply with each item left encoded; anything else a list reply may be (one object, null)
_BLANK = re.compile(rb"\s*")
_LIST_REPLY = msgspec.json.Decoder(list[msgspec.Raw] | dict[str, Any] | None)


def decode_list(content: memoryview, response: httpx.Response) -> Any:
    """The JSON body of a list reply (``content``, read apart from ``response``), its items
    left encoded (``msgspec.Raw``, views of ``content`` decoded one by one by whoever reads
    them: a page of 1,000 services is 20 MB of JSON and several times that as Python
    objects); a body of another shape is decoded as :func:`decode` does."""
    if _BLANK.fullmatch(content):
        return None
    try:
        return _LIST_REPLY.decode(content)
    except msgspec.DecodeError:  # another shape, or what only the standard decoder reads
        return decode(httpx.Response(response.status_code, headers=response.headers,
                                     content=bytes(content), request=response.request))


def error_for(where: str, response: httpx.Response, token: str = "") -> ApiError | None:
    """The error a non-2xx reply means, or ``None`` for success."""
    status = response.status_code
    if 200 <= status < 300:
        return None
    body = read_error_body(response.text, response.headers.get("content-type", ""))
    head = f"{where}: {status} {reason(response)}".rstrip()
    detail = redact(body.describe(), token)
    message = f"{head}: {detail}" if detail else head
    common: dict[str, Any] = {"status": status, "method": _method(where), "url": url_of(response)}
    code = svc_code(response, body.code)
    if status in (403, 429) and code == OVER_RATE:
        return QuotaExhausted(
            f"{head}: the daily quota of API calls is exhausted ({OVER_RATE}); "
            "nothing more can be done today, rerun later when the quota is reset",
            **common,
        )
    if status == 429 or (status == 403 and code == OVER_QPS):
        # the mashery dialect sends no Retry-After: real clients wait about a second (§10.1)
        wait = retry_after(response.headers.get("Retry-After"))
        if wait is None and code == OVER_QPS and MASHERY_CODE_HEADER in response.headers:
            wait = THROTTLE_WAIT
        why = code or "Too Many Requests"
        return Throttled(f"{head}: throttled by the server ({why})", retry_after=wait, **common)
    if status == 401:
        return AuthError(f"{message} (the API refused the access token)", **common)
    if status == 404:
        return NotFound(message, items=body.items, **common)
    if status in (400, 409, 422):
        return Invalid(message, items=body.items, **common)
    if status >= 500:
        return ServerError(message, **common)
    if 300 <= status < 400 and "location" in response.headers:
        message += f" (redirected to {response.headers['location']}; check the API base URL)"
    return ApiError(message, items=body.items, **common)


def svc_code(response: httpx.Response, body_code: str | None) -> str | None:
    """The platform's error code: the error-code header of either dialect
    (``X-Svc-Error-Code``, ``X-Mashery-Error-Code``: SUPPLEMENT §6, §10.1), the body's code
    (a string in the ``mashery`` dialect), or a rate limit code named in the text (a
    gateway's page)."""
    for name in ERROR_CODE_HEADERS:
        header = str(response.headers.get(name, "")).strip()
        if header:
            return header
    if body_code:
        return body_code
    for code in (OVER_QPS, OVER_RATE):
        if code in response.text:
            return code
    return None


def retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta seconds or an HTTP date), capped."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if math.isnan(seconds):
        return None
    return min(max(0.0, seconds), MAX_RETRY_AFTER)


def reason(response: httpx.Response) -> str:
    """The reason phrase, from the reply or the status code."""
    if response.reason_phrase:
        return response.reason_phrase
    try:
        return HTTPStatus(response.status_code).phrase
    except ValueError:
        return ""


def url_of(response: httpx.Response) -> str:
    """The request's URL without its query."""
    return str(response.request.url.copy_with(query=None))


def redact(text: str, token: str) -> str:
    """``text`` with the access token masked (too short a string would mask ordinary words)."""
    return text.replace(token, "***") if len(token) >= 8 else text


def _method(where: str) -> str:
    return where.split(" ", 1)[0]


def one_object(method: str, path: str, reply: Reply) -> dict[str, Any]:
    """The one object of a reply (bare or as a one-element array); a reply holding none is
    a :class:`ServerError` saying what came instead."""
    where = f"{method} {route(path)}"
    if reply.data is None:
        raise ServerError(
            f"{where}: {reply.status}: an empty reply where an object was expected",
            status=reply.status,
            method=method,
        )
    try:
        obj = unwrap_one(reply.data)
    except ValueError as exc:
        raise ServerError(
            f"{where}: {reply.status}: {exc}",
            status=reply.status,
            method=method,
        ) from None
    if not isinstance(obj, dict):
        raise ServerError(
            f"{where}: {reply.status}: expected an object, got {type(obj).__name__}",
            status=reply.status,
            method=method,
        )
    return obj


def final_error(error: ApiError, idempotent: bool) -> ApiError:
    """The error to raise; a write that may have happened says so."""
    if not idempotent and isinstance(error, ServerError | TransportError):
        error.message += "; the outcome is unknown (the request may have been carried out)"
        error.args = (error.message,)
    return error
