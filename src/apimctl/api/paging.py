"""Reading a list of the management API page by page, by ``X-Total-Count``.

:class:`apimctl.api.client.ApiClient` answers ``list_all``, ``list_page`` and ``pages`` with
the functions here, handing them its GET (:class:`Fetch`: one call with the client's
authentication, pacing, retries and deadline). After the first page, the remaining pages are
requested concurrently within the client's limiter: :func:`list_all` answers every item at
once; :func:`pages` hands the pages over in order as they arrive, a few requested ahead, their
items decoded one by one by the reader (reading a large area never holds all of it as Python
objects).
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import AsyncGenerator, Awaitable
from typing import Any, Protocol

from apimctl.api import requests as req
from apimctl.api.replies import Reply
from apimctl.errors import IncompleteRead

Params = req.Params
Page = req.Page

MAX_PAGE = 1000  # the platform's largest `limit`
PAGES_AHEAD = 1  # pages :func:`pages` requests beyond the one being read


class Fetch(Protocol):
    """One GET of the client (``lazy``: a list's items are left encoded)."""

    def __call__(self, path: str, params: Params, *, lazy: bool = False) -> Awaitable[Reply]: ...


async def list_all(fetch: Fetch, path: str, params: Params | None = None, *,
                   page_size: int = MAX_PAGE, page_index: bool = False) -> list[dict[str, Any]]:
    """Every item of a list: the first page, then the rest (per ``X-Total-Count``) at once.

    ``page_index=True`` for ``/members``, ``/applications``, ``/packageKeys`` and ``/roles``,
    where ``offset`` counts pages rather than items.

    What was read is checked against ``X-Total-Count``: a read that gave fewer distinct
    objects (short or repeated pages, SUPPLEMENT §10.10.9) is read once more, and then
    refused (:class:`IncompleteRead`) rather than answered short.
    """
    items, total = await _list_once(fetch, path, params, page_size, page_index)
    if total is not None and len(items) < total:
        items, total = await _list_once(fetch, path, params, page_size, page_index)
        if total is not None:
            check_count(path, len(items), total)
    return items


async def _list_once(
    fetch: Fetch, path: str, params: Params | None, page_size: int, page_index: bool,
) -> tuple[list[dict[str, Any]], int | None]:
    """One read of every item of a list, with the ``X-Total-Count`` of its first page."""
    size = max(1, min(page_size, MAX_PAGE))
    query = _query(params)
    first = await fetch(path, [*query, *req.page(size, 0)])
    items = req.items(first.data)
    total = req.total_count(first.headers)
    if total is None:
        return await _pages_until_short(fetch, path, query, size, items, page_index), None
    # A server that clamps `limit` lower than asked: page by what it actually returns.
    if 0 < len(items) < min(size, total):
        size = len(items)
    offsets = [k if page_index else k * size for k in range(1, math.ceil(total / size))]
    pages = await req.gather([_page(fetch, path, query, size, offset) for offset in offsets])
    for page in pages:
        items.extend(page)
    return req.unique(items), total


async def list_page(fetch: Fetch, path: str, params: Params | None = None, *,
                    size: int = MAX_PAGE, offset: int = 0) -> tuple[list[dict[str, Any]], int | None]:
    """One page of a list (``offset`` as the list counts it: an item or a page index) and
    the list's ``X-Total-Count`` (``None`` when the server sends none), for a reader that
    checks the count it got against the total itself."""
    reply = await fetch(path, [*_query(params), *req.page(size, offset)])
    return req.items(reply.data), req.total_count(reply.headers)


async def pages(
    fetch: Fetch,
    path: str,
    params: Params | None = None,
    *,
    page_size: int = MAX_PAGE,
    page_index: bool = False,
    ahead: int = PAGES_AHEAD,
) -> AsyncGenerator[Page, None]:
    """The items of a list page by page, in order (the calls of :func:`list_all`).

    Each page's JSON is kept as it came and its items decoded as they are iterated; after
    the first page, ``ahead`` more are requested while a page is being read, so the server
    works while the caller does and at most ``ahead + 1`` pages are held. Repeated ids are
    skipped across pages, as :func:`list_all` does; when every page has been read, fewer
    distinct objects than ``X-Total-Count`` announced raise :class:`IncompleteRead` (the
    pages were handed over already: the caller must not plan from them).
    """
    size = max(1, min(page_size, MAX_PAGE))
    query = _query(params)
    seen: set[Any] = set()
    first = await fetch(path, [*query, *req.page(size, 0)], lazy=True)
    entries = req.entries(first.data)
    total = req.total_count(first.headers)
    if total is None:
        items = list(req.Page(entries, set()))
        yield Page(await _pages_until_short(fetch, path, query, size, items, page_index), seen)
        return
    if 0 < len(entries) < min(size, total):
        size = len(entries)
    offsets = iter([k if page_index else k * size for k in range(1, math.ceil(total / size))])
    pending: deque[asyncio.Task[list[Any]]] = deque()

    def request_more() -> None:
        for offset in offsets:
            pending.append(asyncio.ensure_future(_entries(fetch, path, query, size, offset)))
            if len(pending) >= max(1, ahead):
                return

    try:
        request_more()
        yield Page(entries, seen)
        del entries
        while pending:
            page = await pending.popleft()
            request_more()
            yield Page(page, seen)
            del page
        if seen:  # objects carry ids: the distinct ones are counted
            check_count(path, len(seen), total)
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


def _query(params: Params | None) -> list[tuple[str, Any]]:
    """The query of a list call without its page parameters (each page sets its own)."""
    return [(k, v) for k, v in req.pairs(params) if k not in ("limit", "offset")]


async def _page(
    fetch: Fetch, path: str, query: list[tuple[str, Any]], size: int, offset: int
) -> list[dict[str, Any]]:
    reply = await fetch(path, [*query, *req.page(size, offset)])
    return req.items(reply.data)


async def _entries(
    fetch: Fetch, path: str, query: list[tuple[str, Any]], size: int, offset: int
) -> list[Any]:
    """One page for :func:`pages`, its items left encoded."""
    reply = await fetch(path, [*query, *req.page(size, offset)], lazy=True)
    return req.entries(reply.data)


async def _pages_until_short(
    fetch: Fetch,
    path: str,
    query: list[tuple[str, Any]],
    size: int,
    first: list[dict[str, Any]],
    page_index: bool,
) -> list[dict[str, Any]]:
    """Without ``X-Total-Count``: read page after page until one comes back short."""
    items = list(first)
    seen = {item.get("id") for item in first}
    page, last = 1, len(first)
    while last >= size:
        batch = await _page(fetch, path, query, size, page if page_index else page * size)
        ids = {item.get("id") for item in batch}
        if batch and None not in ids and ids <= seen:
            break  # the server ignores `offset`: the same page again
        seen |= ids
        items.extend(batch)
        page, last = page + 1, len(batch)
    return req.unique(items)


def check_count(path: str, got: int, total: int) -> None:
    """Refuse a list read that gave fewer distinct objects than ``X-Total-Count`` announced."""
    if got < total:
        raise IncompleteRead(
            f"GET {req.route(path)}: read {got} of the {total} objects X-Total-Count announced "
            "(pages short or repeated); nothing is planned from an incomplete read: run again",
            method="GET")
