"""Small pieces of a request: query pairs, page parameters, list replies and bodies, log lines,
hosts.

Used by :class:`apimctl.api.client.ApiClient`.
"""

from __future__ import annotations

import asyncio
import mmap
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

import httpx
import msgspec

from apimctl import sensitive
from apimctl.api.quirks import as_list

Params = Mapping[str, Any] | Sequence[tuple[str, Any]]
MAX_LOGGED_QUERY = 160  # characters of a query shown in a log line
MAPPED_BODY = 1 << 20  # list bodies from this size on are read into a memory map


def host(base_url: str) -> str:
    """``host:port`` of the API, the name a connection failure is about."""
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL:
        return base_url
    return f"{url.host}:{url.port}" if url.port else url.host or base_url


def hostname(base_url: str) -> str:
    try:
        return httpx.URL(base_url).host
    except httpx.InvalidURL:
        return ""


def route(path: str) -> str:
    """The path without its query: the key of ``CallStats`` and the "where" of messages."""
    return path.split("?", 1)[0]


def page(size: int, offset: int) -> list[tuple[str, Any]]:
    return [("limit", size), ("offset", offset)]


def pairs(params: Params | None) -> list[tuple[str, str]]:
    """Query pairs from a dict or pairs; list values repeat the name (``fields``, ``filter``)."""
    if params is None:
        return []
    entries = params.items() if isinstance(params, Mapping) else params
    pairs: list[tuple[str, str]] = []
    for name, value in entries:
        for one in value if isinstance(value, list | tuple) else [value]:
            if one is not None:
                pairs.append((name, text(one)))
    return pairs


def text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def items(data: Any) -> list[dict[str, Any]]:
    """A list reply as a list: ``null`` → ``[]``, a lone object → ``[object]``."""
    return [item for item in as_list(data) if isinstance(item, dict)]


def total_count(headers: httpx.Headers) -> int | None:
    try:
        return max(0, int(headers["X-Total-Count"]))
    except (KeyError, ValueError):
        return None


def unique(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop repeats of an id (a concurrent write can shift an item onto the next page)."""
    seen: set[Any] = set()
    return [item for item in items if not repeated(item, seen)]


def repeated(item: Mapping[str, Any], seen: set[Any]) -> bool:
    """Whether ``seen`` holds the item's id already (else it is added)."""
    key = item.get("id")
    if key is None or not isinstance(key, str | int):
        return False
    if key in seen:
        return True
    seen.add(key)
    return False


def entries(data: Any) -> list[Any]:
    """A list reply's items, decoded (objects) or still encoded (``msgspec.Raw``)."""
    return [item for item in as_list(data) if isinstance(item, dict | msgspec.Raw)]


class Page:
    """One page of a list, its items decoded one at a time as they are iterated (only the
    page's JSON and the item being read are held); items whose id an earlier page of the same
    list gave are skipped, as :func:`unique` does. ``seen`` is shared by the list's pages."""

    __slots__ = ("_entries", "_seen")

    def __init__(self, items: list[Any], seen: set[Any]) -> None:
        self._entries = items
        self._seen = seen

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for entry in self._entries:
            item = msgspec.json.decode(entry) if isinstance(entry, msgspec.Raw) else entry
            if isinstance(item, dict) and not repeated(item, self._seen):
                yield item


async def gather(
    calls: list[Coroutine[Any, Any, list[dict[str, Any]]]],
) -> list[list[dict[str, Any]]]:
    """Run the page reads concurrently; on the first failure cancel the rest and raise it."""
    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def loggable(path: str, response: httpx.Response) -> str:
    """The path as the caller named it, with the query actually sent (never a body)."""
    query = sensitive.cut(unquote(response.request.url.query.decode()), MAX_LOGGED_QUERY)  # scrubbed, then cut
    return f"{route(path)}?{query}" if query else route(path)


async def body(response: httpx.Response) -> memoryview:
    """A streamed response's body in one buffer. A large one (``Content-Length`` told) goes
    into a memory map of its own, handed back to the system as soon as nothing refers to
    it: the allocator would keep a freed page of 20 MB in the heap, and the process's peak
    memory would grow with the pages read, not with the pages held."""
    try:
        size = int(response.headers.get("content-length", "0"))
    except ValueError:
        size = 0
    body: bytearray | mmap.mmap = mmap.mmap(-1, size) if size >= MAPPED_BODY else bytearray()
    filled = 0
    async for chunk in response.aiter_bytes():
        end = filled + len(chunk)
        if isinstance(body, mmap.mmap) and end > size:  # longer than told: a buffer after all
            body = bytearray(memoryview(body)[:filled])
        body[filled:end] = chunk
        filled = end
    return memoryview(body)[:filled]
