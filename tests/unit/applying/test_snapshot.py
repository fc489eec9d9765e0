"""What apply keeps of the read it plans from (``apimctl.applying.reading``), the check under
the lease that the area did not change meanwhile (``apimctl.applying.snapshot``), and the calls
and seconds the apply command counts."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from apimctl import kinds
from apimctl.applying.command import ApplyRequest, Meter, apply
from apimctl.applying.reading import Keeper, Watched
from apimctl.applying.snapshot import Snapshot, snapshot_fields
from apimctl.kinds.role import LEASE_NAME
from apimctl.plans.result import ApplyResult

from ..areakit import ROLES, FakeArea, role
from .test_command_lease import UniqueRoles

SERVICE = {"id": "s1", "name": "W", "updated": "2026-01-01T00:00:00.000+0000", "revisionNumber": 3,
           "description": "d", "endpoints": [{"id": "e1", "name": "F", "updated": "2026-01-01T00:00:00.000+0000",
                                              "requestPathAlias": "/f", "methods": [{"id": "m1", "name": "get"}]}],
           "errorSets": [{"id": "es1", "name": "Default"}]}


def snap(**rows: list[dict[str, Any]]) -> Snapshot:
    return Snapshot.of(rows)


# --- the snapshot -------------------------------------------------------------------------------


def test_the_fields_that_tell_a_change_are_taken_from_the_read_projection() -> None:
    fields = snapshot_fields(kinds.SERVICE)
    assert {"id", "name", "updated", "revisionNumber", "endpoints.id", "endpoints.name",
            "endpoints.updated", "errorSets.id", "errorSets.name", "errorSets.updated"} == set(fields)
    assert set(fields) <= set(kinds.SERVICE.fields)
    assert snapshot_fields(kinds.DOMAIN) == kinds.DOMAIN.fields  # no ``updated``: the whole (small) object


def test_the_snapshot_ignores_order_other_fields_and_the_lease() -> None:
    other = {"id": "s2", "name": "V", "updated": "u", "revisionNumber": 1}
    heads = {f.partition(".")[0] for f in snapshot_fields(kinds.SERVICE)}
    light = {k: v for k, v in SERVICE.items() if k in heads and k != "description"}
    assert snap(service=[SERVICE, other]) == snap(service=[other, light])
    lease = role(LEASE_NAME, "l1")
    assert snap(role=[role("A", "r1")]) == snap(role=[lease, role("A", "r1")])


def test_the_snapshot_tells_every_kind_of_change() -> None:
    base = snap(service=[SERVICE], role=[role("A", "r1")])
    assert base != snap(service=[{**SERVICE, "revisionNumber": 4}], role=[role("A", "r1")])
    assert base != snap(service=[SERVICE], role=[role("A", "r1", updated="2026-02-02T00:00:00Z")])
    assert base != snap(service=[SERVICE], role=[role("A", "r1"), role("B", "r2")])
    assert base != snap(service=[SERVICE], role=[])
    renamed_child = {**SERVICE, "endpoints": [{**SERVICE["endpoints"][0], "name": "G"}]}
    assert base != snap(service=[renamed_child], role=[role("A", "r1")])
    assert base != snap(service=[SERVICE], role=[role("A", "r1")], domain=[{"id": "d1", "domain": "x", "status": "waiting"}])


def test_the_light_read_asks_for_the_snapshot_fields_only() -> None:
    area = FakeArea({"/services": [SERVICE]})
    asked: list[tuple[str, dict[str, str]]] = []
    original = area.list_all

    async def listing(path: str, params: Any = None, **options: Any) -> list[dict[str, Any]]:
        asked.append((path, dict(params or [])))
        return await original(path, params, **options)

    area.list_all = listing  # type: ignore[method-assign]
    assert asyncio.run(Snapshot.read(area)) == snap(service=[SERVICE])
    # the data sources (organizations, email template sets) are written by no apply
    assert [p for p, _ in asked] == [k.collection_path() for k in kinds.TOP_LEVEL if not k.read_only]
    assert dict(asked)["/services"]["fields"] == ",".join(snapshot_fields(kinds.SERVICE))


# --- what apply keeps of its read ---------------------------------------------------------------


class Paged:
    """A client with ``pages`` (items handed over one at a time), like ``ApiClient``."""

    def __init__(self, rows: dict[str, list[dict[str, Any]]]) -> None:
        self.rows = rows
        self.handed = 0

    async def list_all(self, path: str, params: Any = None, **options: Any) -> list[dict[str, Any]]:
        return list(self.rows.get(path, []))

    async def pages(self, path: str, params: Any = None, **options: Any) -> AsyncIterator[Iterable[dict[str, Any]]]:
        def lazily() -> Iterator[dict[str, Any]]:
            for item in self.rows.get(path, []):
                self.handed += 1
                yield item
        yield lazily()


ROWS = {"/services": [SERVICE], ROLES: [role("A", "r1"), role(LEASE_NAME, "l1")]}
KEPT_IDS = {"service:W": "s1", "endpoint:W/F": "e1", "method:W/F/get": "m1", "errorSet:W/Default": "es1",
            "role:A": "r1"}


def test_the_watched_read_keeps_ids_and_the_snapshot_of_the_lists_read() -> None:
    keeper = Keeper()
    watched = Watched(FakeArea(ROWS), keeper)
    asyncio.run(watched.list_all("/services"))
    asyncio.run(watched.list_all(ROLES))
    assert keeper.index.ids == KEPT_IDS  # the lease left out
    assert keeper.snapshot == snap(service=[SERVICE], role=[role("A", "r1")])


def test_the_watched_read_takes_pages_as_the_reader_takes_them() -> None:
    keeper = Keeper()
    client = Paged(ROWS)
    watched = Watched(client, keeper)

    async def take() -> list[str]:
        names = []
        async for page in watched.pages("/services"):
            assert client.handed == 0 and keeper.index.ids == {}  # nothing before the reader takes it
            names += [i["name"] for i in page]
        async for page in watched.pages(ROLES):
            names += [i["name"] for i in page]
        return names

    assert asyncio.run(take()) == ["W", "A", LEASE_NAME]
    assert client.handed == 3
    assert keeper.index.ids == KEPT_IDS
    assert keeper.snapshot == snap(service=[SERVICE], role=[role("A", "r1")])


def test_lists_that_are_not_top_level_pass_unwatched() -> None:
    keeper = Keeper()
    client = FakeArea({"/services/s1/endpoints": [{"id": "e1", "name": "F"}]})
    asyncio.run(Watched(client, keeper).list_all("/services/s1/endpoints"))
    assert keeper.index.ids == {}


# --- under the lease ----------------------------------------------------------------------------


class Listing(UniqueRoles):
    """Records the ``fields`` of every list."""

    def __init__(self, rows: dict[str, list[dict[str, Any]]] | None = None) -> None:
        super().__init__(rows)
        self.projections: list[tuple[str, str]] = []

    async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                       page_index: bool = False) -> list[dict[str, Any]]:
        self.projections.append((path, dict(params or []).get("fields", "")))
        return await super().list_all(path, params, page_size=page_size, page_index=page_index)


def test_an_unchanged_area_is_not_planned_again_under_the_lease(manifests: Callable[..., str]) -> None:
    area = Listing({ROLES: [role("Partners", "r1")]})
    result = asyncio.run(apply(ApplyRequest(paths=(manifests("roles: [Partners, Interns]\n"),)), area.connect))
    assert result.ok and [w[0] for w in area.writes()] == ["POST", "POST", "DELETE"]  # lease, Interns, lease
    # no data source is read: the manifests name none, and no apply writes one
    by_path = {k.collection_path(): k for k in kinds.TOP_LEVEL if not k.read_only}
    same = {p for p, k in by_path.items() if ",".join(snapshot_fields(k)) == k.fields_param()}
    assert all(k.collection_path() not in {p for p, _ in area.projections} for k in kinds.TOP_LEVEL if k.read_only)
    full = Counter(p for p, f in area.projections if p in by_path and f == by_path[p].fields_param())
    light = Counter(p for p, f in area.projections
                    if p not in same and p in by_path and f == ",".join(snapshot_fields(by_path[p])))
    # read whole: the area once (the plan), the touched roles once more (the convergence check),
    # and under the lease the kinds whose snapshot is the whole (small) object
    assert full == {p: 1 + (p in same) + (p == ROLES) for p in by_path}
    # under the lease, every other kind's snapshot fields only
    assert light == {p: 1 for p in by_path if p not in same}
    assert ROLES in light and "/services" in light
    assert result.calls == len(area.calls)


# --- counting -----------------------------------------------------------------------------------


def test_the_meter_counts_every_call_and_the_seconds_without_the_question() -> None:
    area = FakeArea({ROLES: [role("A", "r1")]})
    asyncio.run(area.list_all(ROLES))  # before the meter: not counted
    meter = Meter(area)
    asyncio.run(area.list_all(ROLES))
    asyncio.run(area.post(ROLES, {"name": "B"}))
    with meter.paused():
        time.sleep(0.2)
    result = meter.counted(ApplyResult())
    assert (result.calls, result.write_calls, result.read_calls) == (2, 1, 1)
    assert result.seconds < 0.2
