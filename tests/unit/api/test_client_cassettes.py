"""The client against hand-written vcrpy cassettes that carry the quirks of real deployments
(spec/SUPPLEMENT.md §9): replayed through httpx's real transport, never a live network."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import vcr

from apimctl.api.client import ApiClient
from apimctl.api.quirks import as_list, parse_datetime
from apimctl.api.ratelimit import Backoff
from apimctl.errors import Invalid, NotFound, QuotaExhausted, ServerError

from .clientkit import BASE, TOKEN, VirtualClock

pytestmark = pytest.mark.anyio

CASSETTES = vcr.VCR(
    cassette_library_dir=str(Path(__file__).parent / "cassettes"),
    record_mode="none",
    match_on=["method", "scheme", "host", "port", "path", "query"],
)


def _client(clock: VirtualClock) -> ApiClient:
    return ApiClient(
        BASE,
        token=TOKEN,
        qps=None,
        clock=clock,
        sleep=clock.sleep,
        backoff=Backoff(rand=lambda: 1.0),
    )


async def test_services_with_quirks(clock: VirtualClock) -> None:
    with CASSETTES.use_cassette("services_quirks.yaml") as cassette:
        async with _client(clock) as client:
            services = await client.list_all(
                "/services", {"fields": "id,name,created,updated,endpoints.*"}
            )
            bare = await client.get_object("/services/2b3c4d5e6f7g8h9j2k3m4n5p")
            wrapped = await client.get_object("/services/4d5e6f7g8h9j2k3m4n5p6q7r")
            created = await client.post("/services", {"name": "Maps"})
            updated = await client.put(
                f"/services/{created['id']}", {"name": "Maps", "description": "tiles"}
            )
            await client.delete(f"/services/{created['id']}")
        assert cassette.all_played

    weather, geo = services
    assert [weather["name"], geo["name"]] == ["Weather", "Geo"]
    # both datetime renderings are one instant
    assert (
        parse_datetime(weather["created"])
        == parse_datetime(weather["updated"])
        == datetime(2026, 12, 1, 2, tzinfo=UTC)
    )
    assert parse_datetime(geo["created"]) == parse_datetime(geo["updated"])
    endpoint = weather["endpoints"][0]
    assert parse_datetime(endpoint["updated"]) == datetime(2026, 12, 1, 2, 30, tzinfo=UTC)
    # single-string enum arrays, null vs []
    assert as_list(endpoint["apiKeyValueLocations"]) == ["request-header"]
    assert as_list(endpoint["supportedHttpMethods"]) == ["get"]
    assert as_list(endpoint["apiMethodDetectionLocations"]) == ["request-path"]
    assert as_list(endpoint["forwardedHeaders"]) == as_list(endpoint["returnedHeaders"]) == []
    assert endpoint["cors"] is None and as_list(geo["endpoints"]) == []
    # single objects bare or in a one-element array
    assert (bare["revisionNumber"], wrapped["revisionNumber"]) == (3, 1)
    assert created == {
        "id": "5e6f7g8h9j2k3m4n5p6q7r8s",
        "name": "Maps",
        "created": "2026-12-03T00:00:00.000+0000",
        "securityProfile": {"oauth": None},
    }
    assert updated["description"] == "tiles"
    assert client.stats.reads() == 3 and client.stats.writes() == 3


async def test_page_index_list_from_a_cassette(clock: VirtualClock) -> None:
    with CASSETTES.use_cassette("members_paged.yaml") as cassette:
        async with _client(clock) as client:
            members = await client.list_all("/members", page_size=2, page_index=True)
        assert cassette.all_played
    assert [m["username"] for m in members] == ["ada", "bob", "cy"]
    assert [parse_datetime(m["created"]).day for m in members] == [1, 2, 3]


async def test_error_shapes_from_a_cassette(clock: VirtualClock) -> None:
    with CASSETTES.use_cassette("error_shapes.yaml") as cassette:
        async with _client(clock) as client:
            with pytest.raises(Invalid) as bare_array:
                await client.post("/services", {"name": "Weather"})
            with pytest.raises(Invalid) as error_object:
                await client.put("/services/s1/endpoints/e1", {"requestPathAlias": "/v2/forecast"})
            with pytest.raises(
                NotFound, match="GET /services/missing: 404 Not Found: Service not found"
            ):
                await client.get_object("/services/missing")
            # 502 from a gateway, then throttled, then the list: retried by type
            packages = await clock.run(client.list_all("/packages"))
            with pytest.raises(QuotaExhausted, match="daily quota"):
                await client.list_all("/roles")
        assert cassette.all_played

    assert bare_array.value.items == [{"property": "name", "message": "duplicate service name"}]
    assert str(bare_array.value) == "POST /services: 400 Bad Request: name: duplicate service name"
    assert error_object.value.items == [{"property": "requestPathAlias", "message": "duplicate"}]
    assert "Validation failed; requestPathAlias: duplicate" in str(error_object.value)
    assert [p["name"] for p in packages] == ["Partners"] and packages[0]["plans"] is None
    assert clock.sleeps == [0.5, 2.0]  # backoff after the 502, Retry-After after the 403


async def test_gateway_page_message_from_a_cassette(clock: VirtualClock) -> None:
    with CASSETTES.use_cassette("error_shapes.yaml", allow_playback_repeats=True):
        async with ApiClient(
            BASE, token=TOKEN, qps=None, max_retries=0, sleep=clock.sleep
        ) as client:
            with pytest.raises(ServerError) as caught:
                await client.list_all("/packages")
    message = str(caught.value)
    assert message.startswith("GET /packages: 502 Bad Gateway: an HTML page")
    assert "(502 Bad Gateway)" in message and "nginx" not in message and "<" not in message
