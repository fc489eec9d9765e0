"""Lists paged by X-Total-Count with the remaining pages fetched concurrently, query
parameters, call statistics and single-object bodies in both renderings."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from apimctl.api.client import ApiClient
from apimctl.errors import IncompleteRead, NotFound, ServerError

from .clientkit import FakeApi, reply

pytestmark = pytest.mark.anyio


class ListServer:
    """A list of ``total`` items paged by limit/offset, answering after ``latency`` seconds."""

    def __init__(
        self,
        api: FakeApi,
        total: int,
        *,
        page_index: bool = False,
        max_limit: int = 1000,
        latency: float = 0.0,
        count_header: bool = True,
    ) -> None:
        self.api, self.total, self.page_index = api, total, page_index
        self.max_limit, self.latency, self.count_header = max_limit, latency, count_header
        self.in_flight = self.peak = 0
        api.handler = self.handle

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        if self.latency:
            await self.api.clock.sleep(self.latency)
        self.in_flight -= 1
        limit = min(int(request.url.params.get("limit", "100")), self.max_limit)
        offset = int(request.url.params.get("offset", "0"))
        start = offset * limit if self.page_index else offset
        items = [
            {"id": f"i{n:05d}", "name": f"item {n}"}
            for n in range(start, min(start + limit, self.total))
        ]
        headers = {"X_Total_Count": str(self.total)} if self.count_header else {}
        return reply(200, items, **headers)


def failing_second_page(server: ListServer) -> Callable[[httpx.Request], Awaitable[httpx.Response]]:
    """``server``'s handler, answering the page at offset 1,000 with a 400."""

    async def handle(request: httpx.Request) -> httpx.Response:
        if request.url.params["offset"] == "1000":
            return reply(400, [{"property": "filter", "message": "unknown property"}])
        return await server.handle(request)

    return handle


def _ids(items: list[dict[str, object]]) -> list[object]:
    return [item["id"] for item in items]


def _expected(total: int) -> list[str]:
    return [f"i{n:05d}" for n in range(total)]


@pytest.mark.parametrize("total", [0, 1, 999, 1000, 1001, 3500])
async def test_pages_by_total_count(api: FakeApi, total: int) -> None:
    ListServer(api, total)
    async with api.client() as client:
        items = await api.clock.run(client.list_all("/services"))
    assert _ids(items) == _expected(total)
    assert len(api.seen) == max(1, math.ceil(total / 1000))
    assert client.stats.calls[("GET", "/services")] == len(api.seen)
    offsets = sorted(int(dict(s.params)["offset"]) for s in api.seen)
    assert offsets == [k * 1000 for k in range(len(api.seen))]
    assert all(dict(s.params)["limit"] == "1000" for s in api.seen)


async def test_page_index_lists(api: FakeApi) -> None:
    ListServer(api, 250, page_index=True)
    async with api.client() as client:
        items = await api.clock.run(client.list_all("/members", page_size=100, page_index=True))
    assert _ids(items) == _expected(250)
    assert sorted(dict(s.params)["offset"] for s in api.seen) == ["0", "1", "2"]


async def test_remaining_pages_run_concurrently(api: FakeApi) -> None:
    server = ListServer(api, 5000, latency=2.0)
    async with api.client(qps=None, parallelism=8) as client:
        items = await api.clock.run(client.list_all("/services"))
    assert len(items) == 5000
    assert server.peak == 4  # pages 2..5 in flight together
    assert [s.at for s in api.seen] == [0.0, 2.0, 2.0, 2.0, 2.0]
    assert api.clock.now == 4.0  # two round trips, not five


async def test_concurrent_pages_stay_within_the_rate_limit(api: FakeApi) -> None:
    ListServer(api, 5000, latency=2.0)
    async with api.client(qps=2.0) as client:
        await api.clock.run(client.list_all("/services"))
    assert [s.at for s in api.seen] == [0.0, 2.0, 2.5, 3.0, 3.5]


async def test_parallelism_bounds_requests_in_flight(api: FakeApi) -> None:
    server = ListServer(api, 10_000, latency=1.0)
    async with api.client(qps=None, parallelism=3) as client:
        items = await api.clock.run(client.list_all("/services"))
    assert len(items) == 10_000 and server.peak == 3
    assert len(api.seen) == 10


async def test_a_server_clamping_limit_is_paged_by_what_it_returns(api: FakeApi) -> None:
    ListServer(api, 250, max_limit=100)
    async with api.client() as client:
        items = await api.clock.run(client.list_all("/services"))
    assert _ids(items) == _expected(250)
    assert sorted(int(dict(s.params)["offset"]) for s in api.seen) == [0, 100, 200]


async def test_without_total_count_reads_until_a_short_page(api: FakeApi) -> None:
    ListServer(api, 2500, count_header=False)
    async with api.client() as client:
        items = await api.clock.run(client.list_all("/services"))
    assert _ids(items) == _expected(2500)
    assert len(api.seen) == 3


async def test_a_failing_page_fails_the_list(api: FakeApi) -> None:
    server = ListServer(api, 3000)
    api.handler = failing_second_page(server)
    async with api.client() as client:
        with pytest.raises(
            Exception, match="GET /services: 400 Bad Request: filter: unknown property"
        ):
            await api.clock.run(client.list_all("/services"))


async def test_repeated_ids_from_shifting_pages_are_dropped(api: FakeApi) -> None:
    api.script = [
        reply(200, [{"id": "a"}, {"id": "b"}], X_Total_Count="3"),
        reply(200, [{"id": "b"}, {"id": "c"}], X_Total_Count="3"),
    ]
    async with api.client() as client:
        items = await api.clock.run(client.list_all("/services", page_size=2))
    assert _ids(items) == ["a", "b", "c"]


async def test_a_short_read_is_read_again(api: FakeApi) -> None:
    """A repeated item hid one (4 announced, 3 distinct): the list is read once more
    (SUPPLEMENT §10.10.9), never answered short."""
    api.script = [
        reply(200, [{"id": "a"}, {"id": "b"}], X_Total_Count="4"),
        reply(200, [{"id": "b"}, {"id": "c"}], X_Total_Count="4"),
        reply(200, [{"id": "a"}, {"id": "b"}], X_Total_Count="4"),
        reply(200, [{"id": "c"}, {"id": "d"}], X_Total_Count="4"),
    ]
    async with api.client() as client:
        items = await api.clock.run(client.list_all("/services", page_size=2))
    assert _ids(items) == ["a", "b", "c", "d"]


async def test_a_read_short_twice_is_refused(api: FakeApi) -> None:
    api.script = [
        reply(200, [{"id": "a"}, {"id": "b"}], X_Total_Count="4"),
        reply(200, [{"id": "b"}], X_Total_Count="4"),
    ] * 2
    async with api.client() as client:
        with pytest.raises(IncompleteRead, match="read 2 of the 4 objects"):
            await api.clock.run(client.list_all("/services", page_size=2))


async def test_pages_read_short_are_refused(api: FakeApi) -> None:
    api.script = [
        reply(200, [{"id": "a"}, {"id": "b"}], X_Total_Count="4"),
        reply(200, [{"id": "b"}, {"id": "c"}], X_Total_Count="4"),
    ]

    async def read_all(client: Any) -> list[str]:
        return [item["id"] async for page in client.pages("/services", page_size=2) for item in page]

    async with api.client() as client:
        with pytest.raises(IncompleteRead, match="read 3 of the 4 objects"):
            await api.clock.run(read_all(client))


@pytest.mark.parametrize(("body", "expected"), [(None, []), ({"id": "a"}, [{"id": "a"}]), ([], [])])
async def test_list_bodies_in_every_rendering(
    api: FakeApi, body: object, expected: list[object]
) -> None:
    api.script = [reply(200, body, X_Total_Count=str(len(expected)))]
    async with api.client() as client:
        assert await api.clock.run(client.list_all("/domains")) == expected


async def test_query_parameters(api: FakeApi) -> None:
    ListServer(api, 3)
    params = [
        ("fields", "id,name"),
        ("fields", "endpoints.cors"),
        ("filter", "name:Weather"),
        ("limit", "5"),
        ("offset", "7"),
    ]
    async with api.client() as client:
        await api.clock.run(client.list_all("/services", params))
        await api.clock.run(
            client.get(
                "/services", {"fields": ["id", "name"], "filter": "a:b", "x": True, "skip": None}
            )
        )
    assert api.seen[0].params == [
        ("fields", "id,name"),
        ("fields", "endpoints.cors"),
        ("filter", "name:Weather"),
        ("limit", "1000"),
        ("offset", "0"),
    ]
    assert api.seen[1].params == [
        ("fields", "id"),
        ("fields", "name"),
        ("filter", "a:b"),
        ("x", "true"),
    ]


async def test_stats_count_reads_writes_and_retries(api: FakeApi) -> None:
    api.handler = lambda request: reply(200, [{"id": "x"}])
    api.script = []
    async with api.client() as client:
        await api.clock.run(client.get("/services?fields=id"))
        await api.clock.run(client.get("/services"))
        await api.clock.run(client.post("/services", {"name": "n"}))
        await api.clock.run(client.put("/services/x", {"name": "n"}))
        await api.clock.run(client.delete("/services/x"))
    assert client.stats.calls == {
        ("GET", "/services"): 2,
        ("POST", "/services"): 1,
        ("PUT", "/services/x"): 1,
        ("DELETE", "/services/x"): 1,
    }
    assert (client.stats.reads(), client.stats.writes(), client.stats.total()) == (2, 3, 5)


# -- single objects: bare or one-element arrays -------------------------------------------


@pytest.mark.parametrize("body", [[{"id": "s1", "name": "W"}], {"id": "s1", "name": "W"}])
async def test_single_objects_in_both_renderings(api: FakeApi, body: object) -> None:
    api.handler = lambda request: reply(200, body)
    async with api.client() as client:
        assert await api.clock.run(client.get_object("/services/s1")) == {"id": "s1", "name": "W"}
        assert await api.clock.run(client.post("/services", {"name": "W"})) == {
            "id": "s1",
            "name": "W",
        }
        assert await api.clock.run(client.put("/services/s1", {"name": "W"})) == {
            "id": "s1",
            "name": "W",
        }
        assert await api.clock.run(client.get("/services/s1")) == body


async def test_put_of_an_array_answers_the_array(api: FakeApi) -> None:
    api.script = [reply(200, [{"id": "e1"}])]
    async with api.client() as client:
        assert await api.clock.run(client.put("/services/s/endpoints", [{"id": "e1"}])) == [
            {"id": "e1"}
        ]


async def test_get_object_of_an_empty_list_is_not_found(api: FakeApi) -> None:
    api.script = [reply(200, [])]
    async with api.client() as client:
        with pytest.raises(NotFound, match="GET /services/s1: the API answered an empty list"):
            await api.clock.run(client.get_object("/services/s1"))


async def test_get_object_of_many_is_a_server_error(api: FakeApi) -> None:
    api.script = [reply(200, [{"id": 1}, {"id": 2}])]
    async with api.client() as client:
        with pytest.raises(ServerError, match="expected one object, got an array of 2"):
            await api.clock.run(client.get_object("/services/s1"))


async def test_empty_bodies(api: FakeApi) -> None:
    api.script = [reply(200), reply(200, text="")]
    async with api.client() as client:
        assert await api.clock.run(client.post("/services/s/cache", {"cacheTtl": 1})) == {}
        assert await api.clock.run(client.get("/services/s/cache")) is None


async def test_a_server_ignoring_offset_does_not_loop_forever(api: FakeApi) -> None:
    api.handler = lambda request: reply(200, [{"id": "a"}, {"id": "b"}])
    async with api.client() as client:
        items = await api.clock.run(client.list_all("/services", page_size=2))
    assert _ids(items) == ["a", "b"] and len(api.seen) == 2


async def test_get_object_of_an_empty_body(api: FakeApi) -> None:
    api.script = [reply(200)]
    async with api.client() as client:
        with pytest.raises(ServerError, match="an empty reply where an object was expected"):
            await api.clock.run(client.get_object("/services/s1"))


async def test_verbose_log_lines_are_readable(api: FakeApi) -> None:
    lines: list[str] = []
    ListServer(api, 1)
    async with api.client(log=lines.append) as client:
        await api.clock.run(client.list_all("/services", {"fields": "id,name,endpoints.*"}))
    assert lines == ["GET /services?fields=id,name,endpoints.*&limit=1000&offset=0 -> 200 (0 ms)"]


# -- page by page: the pages of a list handed over in order, a few requested ahead ---------


async def _pages(client: ApiClient, path: str, **kwargs: Any) -> list[list[dict[str, Any]]]:
    return [list(page) async for page in client.pages(path, **kwargs)]


@pytest.mark.parametrize("total", [0, 1, 1000, 1001, 3500])
async def test_pages_make_the_calls_of_list_all(api: FakeApi, total: int) -> None:
    ListServer(api, total)
    async with api.client() as client:
        pages = await api.clock.run(_pages(client, "/services", params=[("fields", "id")]))
    assert [_ids(p) for p in pages] == [_expected(total)[k:k + 1000]
                                        for k in range(0, max(1, total), 1000)]
    assert len(api.seen) == max(1, math.ceil(total / 1000))
    assert all(("fields", "id") in s.params for s in api.seen)


async def test_pages_are_requested_a_few_ahead_of_the_reader(api: FakeApi) -> None:
    server = ListServer(api, 6000, latency=1.0)

    async def read(client: ApiClient) -> list[float]:
        received = []
        async for page in client.pages("/services", ahead=2):
            received.append(api.clock.now)
            assert len(list(page)) == 1000
            await api.clock.sleep(3.0)  # the reader is slower than the server
        return received

    async with api.client(qps=None, parallelism=8) as client:
        received = await api.clock.run(read(client))
    assert server.peak == 2  # never more than ``ahead`` requests in flight
    assert len(api.seen) == 6
    assert received == [1.0, 4.0, 7.0, 10.0, 13.0, 16.0]  # the next page is always there


async def test_pages_decode_items_as_they_are_read(api: FakeApi) -> None:
    api.script = [reply(200, [{"id": "a"}, 3, {"id": "b"}], X_Total_Count="5"),
                  reply(200, [{"id": "b"}, {"id": "c"}], X_Total_Count="5")]
    async with api.client() as client:
        pages = [page async for page in client.pages("/services", page_size=3)]
        assert [len(p) for p in pages] == [3, 2]  # still encoded: what they are is not known
        assert [[item["id"] for item in p] for p in pages] == [["a", "b"], ["c"]]


@pytest.mark.parametrize(("body", "expected"), [(None, []), ({"id": "a"}, [{"id": "a"}]), ([], [])])
async def test_pages_of_list_bodies_in_every_rendering(
    api: FakeApi, body: object, expected: list[object]
) -> None:
    api.script = [reply(200, body, X_Total_Count=str(len(expected)))]
    async with api.client() as client:
        assert await api.clock.run(_pages(client, "/domains")) == [expected]


async def test_pages_without_total_count_read_until_a_short_page(api: FakeApi) -> None:
    ListServer(api, 2500, count_header=False)
    async with api.client() as client:
        pages = await api.clock.run(_pages(client, "/services"))
    assert [item["id"] for page in pages for item in page] == _expected(2500)
    assert len(api.seen) == 3


async def test_a_failing_page_fails_the_pages_and_cancels_the_rest(api: FakeApi) -> None:
    server = ListServer(api, 5000, latency=1.0)
    api.handler = failing_second_page(server)
    async with api.client() as client:
        with pytest.raises(Exception, match="GET /services: 400 Bad Request"):
            await api.clock.run(_pages(client, "/services", ahead=3))
    assert len(api.seen) == 4  # the first page, then three ahead; none after the failure


async def test_pages_of_what_only_the_standard_decoder_reads(api: FakeApi) -> None:
    api.script = [reply(200, text='[{"id": "a", "ratio": NaN}]', X_Total_Count="1"),
                  reply(200, text='"not a list"', X_Total_Count="0")]
    async with api.client() as client:
        (page,) = await api.clock.run(_pages(client, "/services"))
        assert page[0]["id"] == "a" and math.isnan(page[0]["ratio"])
        assert await api.clock.run(_pages(client, "/services")) == [[]]
