"""A fake area behind a client, for the core-function tests (fixtures in ``conftest``)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from apimctl.api.calls import CallStats
from apimctl.api.dialect import DialectChoice

ROLES = "/roles"
DOMAINS = "/domains"


class Stats:
    """The calls counted the way ``ApiClient.stats`` counts them."""

    def __init__(self, calls: list[tuple[str, str]]) -> None:
        self.calls = calls

    def reads(self) -> int:
        return sum(1 for method, _ in self.calls if method in ("LIST", "GET"))

    def writes(self) -> int:
        return len(self.calls) - self.reads()


class ClientDefaults:
    """What a fake client answers for the members of the client protocols it does not play
    itself: each list as one page (read through its ``list_all``), a dialect already probed
    (``spec`` unless the replies said otherwise: no probe call), no calls counted."""

    @functools.cached_property
    def dialect(self) -> DialectChoice:
        return DialectChoice(probed=True)

    @functools.cached_property
    def stats(self) -> Any:
        return CallStats()

    async def pages(self, path: str, params: Any = None, *, page_size: int = 1000,
                    page_index: bool = False) -> AsyncGenerator[list[dict[str, Any]], None]:
        yield await self.list_all(path, params, page_size=page_size, page_index=page_index)  # type: ignore[attr-defined]


class FakeArea(ClientDefaults):
    """An area held in memory, reached like ``ApiClient``: lists answer from ``rows``
    (per collection path), writes change it and are recorded."""

    def __init__(self, rows: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self.rows = {path: [dict(r) for r in items] for path, items in (rows or {}).items()}
        self.calls: list[tuple[str, str]] = []
        self.opened = 0
        self._next = 0
        self.stats = Stats(self.calls)

    async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                       page_index: bool = False) -> list[dict[str, Any]]:
        self.calls.append(("LIST", path))
        return [dict(r) for r in self.rows.get(path, [])]

    async def get(self, path: str, params: Any = None) -> Any:
        self.calls.append(("GET", path))
        folder, _, wanted = path.rpartition("/")
        return [dict(r) for r in self.rows.get(folder, []) if r.get("id") == wanted]

    async def post(self, path: str, body: Any, params: Any = None) -> dict[str, Any]:
        self.calls.append(("POST", path))
        self._next += 1
        row = {"id": f"id{self._next}", **body}
        self.rows.setdefault(path, []).append(row)
        return dict(row)

    async def put(self, path: str, body: Any, params: Any = None) -> Any:
        self.calls.append(("PUT", path))
        folder, _, wanted = path.rpartition("/")
        for row in self.rows.get(folder, []):
            if row.get("id") == wanted:
                row.update(body)
                return dict(row)
        return body

    async def delete(self, path: str) -> None:
        self.calls.append(("DELETE", path))
        folder, _, wanted = path.rpartition("/")
        self.rows[folder] = [r for r in self.rows.get(folder, []) if r.get("id") != wanted]

    def writes(self) -> list[tuple[str, str]]:
        return [c for c in self.calls if c[0] in ("POST", "PUT", "DELETE")]

    def connect(self) -> contextlib.AbstractAsyncContextManager[FakeArea]:
        """What the CLI's ``open_client`` is to the core: opened only when a call is due."""

        @contextlib.asynccontextmanager
        async def opened() -> AsyncIterator[FakeArea]:
            self.opened += 1
            yield self

        return opened()


def role(name: str, rid: str, **fields: Any) -> dict[str, Any]:
    """A role as the area lists it."""
    return {"id": rid, "name": name, "description": "", "created": "2026-01-01T00:00:00Z",
            "updated": "2026-01-01T00:00:00Z", **fields}
