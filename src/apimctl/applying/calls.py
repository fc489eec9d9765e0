"""The calls apply makes that need care: create exactly once, delete idempotently.

A create whose outcome is unknown (5xx, timeout, dropped connection) is looked up by its
natural key before it is tried again, so nothing is created twice. Used by
:mod:`apimctl.applying.writes` and :mod:`apimctl.applying.collections`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping
from typing import Any, Protocol

from apimctl.api.ratelimit import Backoff
from apimctl.errors import Invalid, NotFound, ServerError, TransportError

UNKNOWN_OUTCOME_RETRIES = 4  # further POSTs of one create after unknown outcomes, each after a lookup


class Counts(Protocol):
    """The calls a client has sent so far (``apimctl.api.calls.CallStats``)."""

    def reads(self) -> int: ...
    def writes(self) -> int: ...


class Client(Protocol):
    """The part of ``apimctl.api.client.ApiClient`` apply uses: the reads of
    :class:`~apimctl.state.live.Lister`, one GET, the writes, and the counts of the calls
    sent (``stats``: the calls of a run are what its summary reports)."""

    @property
    def stats(self) -> Counts: ...

    async def get(self, path: str, params: Any = None) -> Any: ...
    async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                       page_index: bool = False) -> list[dict[str, Any]]: ...
    def pages(self, path: str, params: Any = None, *, page_size: int = 1000,
              page_index: bool = False) -> AsyncGenerator[Iterable[dict[str, Any]], None]: ...
    async def post(self, path: str, body: Any, params: Any = None) -> dict[str, Any]: ...
    async def put(self, path: str, body: Any, params: Any = None) -> Any: ...
    async def delete(self, path: str) -> None: ...


# --------------------------------------------------------------------------- creating once


LookupFn = Callable[[], Awaitable[dict[str, Any] | None]]


async def find_by_name(client: Client, path: str, name: str, *, key: str = "name",
                       params: Mapping[str, str] | None = None, page_index: bool = False) -> dict[str, Any] | None:
    """The object under ``path`` whose natural key ``key`` is exactly ``name``, if any."""
    query: dict[str, str] = {"filter": f"{key}:{name}", "fields": f"id,{key}", **(params or {})}
    for obj in await client.list_all(path, query, page_index=page_index):
        if obj.get(key) == name:
            return obj
    return None


async def create_once(client: Client, path: str, body: Any, lookup: LookupFn, *,
                      params: Any = None, backoff: Backoff | None = None,
                      retries: int = UNKNOWN_OUTCOME_RETRIES) -> dict[str, Any]:
    """POST ``body``; when the outcome is unknown, look the object up before trying again.

    A ``duplicate`` refusal after an unknown outcome means an earlier attempt did create it
    (and the lookup ran before the write was visible): it is looked up once more.
    """
    backoff = backoff or Backoff()
    attempt = 0
    while True:
        try:
            return await client.post(path, body, params)
        except Invalid as exc:
            if attempt == 0 or "duplicate" not in str(exc).lower():
                raise
            found = await lookup()
            if found is None:
                raise
            return found
        except (ServerError, TransportError):
            if attempt >= retries:
                raise
            await asyncio.sleep(backoff.delay(attempt))
            attempt += 1
            found = await lookup()
            if found is not None:
                return found


async def delete_quietly(client: Client, path: str) -> None:
    """DELETE, where an object already gone counts as deleted (a retried or repeated delete)."""
    with contextlib.suppress(NotFound):
        await client.delete(path)


def as_items(data: Any) -> list[dict[str, Any]]:
    if data is None:
        return []
    if isinstance(data, list):
        return [d for d in data if isinstance(d, dict)]
    return [data] if isinstance(data, dict) else []


async def find_in(client: Client, path: str, name: str, key: str = "name") -> dict[str, Any] | None:
    """An item of a small (unpaged) collection by its key field (its name): its id and key
    (every read names its fields, SUPPLEMENT §10.10.8)."""
    return next((i for i in as_items(await client.get(path, {"fields": f"id,{key}"})) if i.get(key) == name), None)
