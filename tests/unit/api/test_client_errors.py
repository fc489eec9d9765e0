"""Error mapping and retries of the API client: every error shape, retry decided by type."""

from __future__ import annotations

import json

import httpx
import pytest

from apimctl.errors import (
    ApiError,
    Invalid,
    NotFound,
    QuotaExhausted,
    ServerError,
    Throttled,
    TransportError,
    Unreachable,
    is_retryable,
)

from .clientkit import TOKEN, FakeApi, reply

pytestmark = pytest.mark.anyio

GATEWAY_PAGE = (
    "<!DOCTYPE html><html><head><title>503 Service Temporarily Unavailable</title></head>"
    "<body><center><h1>503 Service Temporarily Unavailable</h1></center><hr>"
    "<center>nginx</center></body></html>"
)


async def _fails(api: FakeApi, call: str = "get", *args: object) -> ApiError:
    async with api.client() as client:
        with pytest.raises(ApiError) as caught:
            await api.clock.run(getattr(client, call)(*args))
    return caught.value


# -- every error body shape ----------------------------------------------------------------


async def test_validation_array_is_invalid_with_items(api: FakeApi) -> None:
    api.script = [reply(400, [{"property": "name", "message": "duplicate service name"}])]
    error = await _fails(api, "post", "/services", {"name": "Weather"})
    assert type(error) is Invalid
    assert error.items == [{"property": "name", "message": "duplicate service name"}]
    assert str(error) == "POST /services: 400 Bad Request: name: duplicate service name"
    assert (error.status, error.method) == (400, "POST")
    assert error.url == "https://api.example.test/v3/rest/services"
    assert len(api.seen) == 1


async def test_error_object_with_errors_list(api: FakeApi) -> None:
    body = {
        "errorCode": 400,
        "errorMessage": "Validation failed",
        "errors": [{"property": "endpoints[0].requestPathAlias", "message": "duplicate"}],
    }
    api.script = [reply(400, body)]
    error = await _fails(api, "put", "/services/abc", {"name": "x"})
    assert type(error) is Invalid
    assert error.items == [{"property": "endpoints[0].requestPathAlias", "message": "duplicate"}]
    assert "Validation failed; endpoints[0].requestPathAlias: duplicate" in str(error)
    assert str(error).startswith("PUT /services/abc: 400 Bad Request:")


@pytest.mark.parametrize("status", [409, 422])
async def test_conflict_and_unprocessable_are_invalid(api: FakeApi, status: int) -> None:
    api.script = [reply(status, {"errorCode": status, "errorMessage": "no"})]
    error = await _fails(api, "put", "/services/abc", {})
    assert type(error) is Invalid and error.status == status
    assert len(api.seen) == 1


async def test_not_found(api: FakeApi) -> None:
    api.script = [reply(404, {"errorCode": 404, "errorMessage": "Service not found"})]
    error = await _fails(api, "get_object", "/services/nope")
    assert type(error) is NotFound
    assert str(error) == "GET /services/nope: 404 Not Found: Service not found"


async def test_server_error_message_says_what_and_where(api: FakeApi) -> None:
    api.script = [reply(500, {"errorCode": 500, "errorMessage": "database is locked"})] * 7
    error = await _fails(api, "get", "/services", {"fields": "id,name"})
    assert type(error) is ServerError
    assert str(error) == "GET /services: 500 Internal Server Error: database is locked"


async def test_html_from_a_gateway(api: FakeApi) -> None:
    api.script = [reply(503, text=GATEWAY_PAGE, content_type="text/html")] * 7
    error = await _fails(api, "get", "/services")
    assert type(error) is ServerError and error.status == 503
    message = str(error)
    assert message.startswith("GET /services: 503 Service Unavailable: an HTML page")
    assert "gateway" in message and "<" not in message and "nginx" not in message


async def test_html_with_a_success_status_is_an_unreadable_reply(api: FakeApi) -> None:
    api.script = [reply(200, text=GATEWAY_PAGE, content_type="text/html")] * 7
    error = await _fails(api, "get", "/services")
    assert type(error) is ServerError
    assert "unreadable reply, not JSON: an HTML page" in str(error)
    assert len(api.seen) == 7  # a GET: retried like any server failure


async def test_other_403_is_a_plain_api_error(api: FakeApi) -> None:
    api.script = [
        reply(
            403,
            {"errorCode": 403, "errorMessage": "not authorized"},
            X_Svc_Error_Code="ERR_403_NOT_AUTHORIZED",
        )
    ]
    error = await _fails(api, "get", "/services")
    assert type(error) is ApiError
    assert not is_retryable(error)
    assert str(error) == "GET /services: 403 Forbidden: not authorized"
    assert len(api.seen) == 1


# -- retries decided by type ---------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 403, 404, 405, 409, 413, 414, 422])
async def test_no_4xx_is_ever_retried(api: FakeApi, status: int) -> None:
    api.script = [reply(status, {"errorCode": status, "errorMessage": "no"})]
    error = await _fails(api, "get", "/services")
    assert not is_retryable(error)
    assert len(api.seen) == 1 and api.clock.sleeps == []


@pytest.mark.parametrize("status", [500, 502, 503, 504])
async def test_5xx_is_retried_with_backoff_then_succeeds(api: FakeApi, status: int) -> None:
    api.script = [reply(status, {"errorCode": status, "errorMessage": "hiccup"})] * 3 + [
        reply(200, [{"id": "s1"}])
    ]
    async with api.client() as client:
        assert await api.clock.run(client.get("/services")) == [{"id": "s1"}]
    assert len(api.seen) == 4
    assert api.clock.sleeps == [0.5, 1.0, 2.0]  # exponential (jitter pinned to its top)
    assert client.stats.calls[("GET", "/services")] == 4


async def test_retries_stop_after_max_retries(api: FakeApi) -> None:
    api.script = [reply(502, text="bad gateway")] * 3
    async with api.client(max_retries=2) as client:
        with pytest.raises(ServerError, match="GET /services: 502 Bad Gateway: bad gateway"):
            await api.clock.run(client.get("/services"))
    assert len(api.seen) == 3


async def test_backoff_is_capped(api: FakeApi) -> None:
    api.script = [reply(500)] * 8 + [reply(200, [])]
    async with api.client(max_retries=8) as client:
        await api.clock.run(client.get("/services"))
    assert api.clock.sleeps == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0, 8.0]


@pytest.mark.parametrize(
    ("exc", "says"),
    [
        (httpx.ReadTimeout("timed out"), "GET /services: no reply within 30 s"),
        (httpx.ConnectTimeout("timed out"), "GET /services: no reply within 30 s"),
        (
            httpx.ConnectError("[Errno 111] Connection refused"),
            "connection failed (ConnectError: [Errno 111] Connection refused)",
        ),
        (
            httpx.RemoteProtocolError("Server disconnected without sending a response."),
            "RemoteProtocolError",
        ),
        (httpx.ReadError(""), "connection failed (ReadError)"),
    ],
)
async def test_transport_failures_are_retried(api: FakeApi, exc: Exception, says: str) -> None:
    api.script = [exc, exc, reply(200, [])]
    async with api.client() as client:
        assert await api.clock.run(client.get("/services")) == []
    assert len(api.seen) == 3
    api.script = [exc] * 7
    api.seen.clear()
    error = await _fails_with(api, max_connect_failures=100)  # the breaker apart (see below)
    assert type(error) is TransportError and says in str(error)
    assert len(api.seen) == 7


@pytest.mark.parametrize(
    "exc", [httpx.ConnectError("[Errno 111] Connection refused"), httpx.ConnectTimeout("timed out")]
)
async def test_a_dead_server_fails_fast(api: FakeApi, exc: Exception) -> None:
    """Connection failures in a row, across calls, open the breaker: nothing more is sent."""
    api.script = [exc] * 20
    async with api.client() as client:
        with pytest.raises(Unreachable, match=r"api\.example\.test is unreachable") as caught:
            await api.clock.run(client.get("/services"))
        assert len(api.seen) == 3 and "3 connection attempts in a row failed" in str(caught.value)
        with pytest.raises(Unreachable, match=r"^PUT /services/s1: not sent"):
            await api.clock.run(client.put("/services/s1", {"name": "x"}))
    assert len(api.seen) == 3


async def test_replies_between_connection_failures_keep_the_breaker_closed(api: FakeApi) -> None:
    refused = httpx.ConnectError("[Errno 111] Connection refused")
    api.script = [refused, refused, reply(503), refused, refused, reply(200, [])]
    async with api.client() as client:
        assert await api.clock.run(client.get("/services")) == []
    assert len(api.seen) == 6 and not client.breaker.open
    slow = httpx.ReadTimeout("timed out")
    api.script = [slow] * 4 + [reply(200, [])]
    async with api.client() as client:
        assert await api.clock.run(client.get("/services")) == []  # a slow server is alive


async def test_post_is_not_retried_when_the_outcome_is_unknown(api: FakeApi) -> None:
    api.script = [reply(500, {"errorCode": 500, "errorMessage": "boom"})]
    error = await _fails(api, "post", "/services", {"name": "Weather"})
    assert type(error) is ServerError
    assert "outcome is unknown" in str(error)
    assert len(api.seen) == 1

    api.script, api.seen = [httpx.ReadTimeout("timed out")], []
    error = await _fails(api, "post", "/services", {"name": "Weather"})
    assert type(error) is TransportError and "outcome is unknown" in str(error)
    assert len(api.seen) == 1


async def test_put_and_delete_are_retried(api: FakeApi) -> None:
    api.script = [
        reply(503),
        reply(200, [{"id": "a", "name": "x"}]),
        httpx.ReadError("reset"),
        reply(200),
    ]
    async with api.client() as client:
        assert await api.clock.run(client.put("/services/a", {"name": "x"})) == {
            "id": "a",
            "name": "x",
        }
        assert await api.clock.run(client.delete("/services/a")) is None
    assert [s.method for s in api.seen] == ["PUT", "PUT", "DELETE", "DELETE"]


async def test_delete_of_a_missing_object_is_not_found(api: FakeApi) -> None:
    api.script = [reply(404, {"errorCode": 404, "errorMessage": "Service not found"})]
    error = await _fails(api, "delete", "/services/gone")
    assert type(error) is NotFound


async def test_delete_retried_after_an_unknown_outcome_may_find_it_gone(api: FakeApi) -> None:
    api.script = [
        httpx.ReadTimeout("lost"),
        reply(404, {"errorCode": 404, "errorMessage": "not found"}),
    ]
    async with api.client() as client:
        await api.clock.run(client.delete("/services/a"))
    assert len(api.seen) == 2


# -- throttling and the daily quota --------------------------------------------------------


async def test_over_qps_waits_for_retry_after_then_retries(api: FakeApi) -> None:
    api.script = [
        reply(
            403,
            {"errorCode": 403, "errorMessage": "Over QPS"},
            X_Svc_Error_Code="ERR_403_DEVELOPER_OVER_QPS",
            Retry_After="3",
        ),
        reply(200, [{"id": "s1"}]),
    ]
    async with api.client() as client:
        assert await api.clock.run(client.get("/services")) == [{"id": "s1"}]
    assert [s.at for s in api.seen] == [0.0, 3.0]


async def test_over_qps_is_retried_for_post_too(api: FakeApi) -> None:
    api.script = [
        reply(403, text="", X_Svc_Error_Code="ERR_403_DEVELOPER_OVER_QPS", Retry_After="2"),
        reply(200, [{"id": "s1", "name": "Weather"}]),
    ]
    async with api.client() as client:
        created = await api.clock.run(client.post("/services", {"name": "Weather"}))
    assert created == {"id": "s1", "name": "Weather"}
    assert [s.at for s in api.seen] == [0.0, 2.0]


async def test_over_qps_in_the_body_without_header_or_retry_after(api: FakeApi) -> None:
    api.script = [
        reply(403, {"errorCode": "ERR_403_DEVELOPER_OVER_QPS", "errorMessage": "slow down"}),
        reply(200, []),
    ]
    async with api.client() as client:
        await api.clock.run(client.get("/services"))
    assert [s.at for s in api.seen] == [0.0, 0.5]  # no Retry-After: backoff


async def test_over_qps_named_in_a_gateway_page(api: FakeApi) -> None:
    api.script = [
        reply(
            403,
            text="<html><body>ERR_403_DEVELOPER_OVER_QPS</body></html>",
            content_type="text/html",
            Retry_After="1",
        ),
        reply(200, []),
    ]
    async with api.client() as client:
        await api.clock.run(client.get("/services"))
    assert len(api.seen) == 2


async def test_throttling_pauses_every_concurrent_request(api: FakeApi) -> None:
    import asyncio

    first = True

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal first
        if first:
            first = False
            return reply(403, None, X_Svc_Error_Code="ERR_403_DEVELOPER_OVER_QPS", Retry_After="4")
        return reply(200, [])

    api.handler = handler

    async def scenario() -> None:
        async with api.client(parallelism=1) as client:
            await asyncio.gather(*(client.get(f"/services/{n}") for n in range(3)))

    await api.clock.run(scenario())
    assert [s.at for s in api.seen] == [0.0, 4.0, 4.0, 4.0]


async def test_retry_after_as_http_date(api: FakeApi) -> None:
    api.script = [
        reply(
            403,
            None,
            X_Svc_Error_Code="ERR_403_DEVELOPER_OVER_QPS",
            Retry_After="Wed, 21 Oct 2015 07:28:00 GMT",
        ),
        reply(200, []),
    ]
    async with api.client() as client:
        await api.clock.run(client.get("/services"))
    assert [s.at for s in api.seen] == [0.0, 0.0]  # a date in the past: no wait


async def test_throttling_gives_up_after_its_budget(api: FakeApi) -> None:
    api.script = [
        reply(403, None, X_Svc_Error_Code="ERR_403_DEVELOPER_OVER_QPS", Retry_After="1")
    ] * 3
    error = await _fails_with(api, max_throttle_waits=2)
    assert type(error) is Throttled and error.retry_after == 1.0
    assert "throttled by the server (ERR_403_DEVELOPER_OVER_QPS)" in str(error)


async def _fails_with(api: FakeApi, **options: object) -> ApiError:
    async with api.client(**options) as client:
        with pytest.raises(ApiError) as caught:
            await api.clock.run(client.get("/services"))
    return caught.value


@pytest.mark.parametrize(
    "answer",
    [
        reply(
            403,
            {"errorCode": 403, "errorMessage": "Over rate"},
            X_Svc_Error_Code="ERR_403_DEVELOPER_OVER_RATE",
        ),
        reply(403, {"errorCode": "ERR_403_DEVELOPER_OVER_RATE", "errorMessage": "Over rate"}),
    ],
)
async def test_daily_quota_stops_with_a_clear_message(api: FakeApi, answer: httpx.Response) -> None:
    api.script = [answer]
    for call, args in (("get", ("/services",)), ("post", ("/services", {"name": "x"}))):
        api.script, api.seen = [answer], []
        error = await _fails(api, call, *args)
        assert type(error) is QuotaExhausted and not is_retryable(error)
        assert "daily quota" in str(error) and "rerun later" in str(error)
        assert len(api.seen) == 1


# -- secrets never leak --------------------------------------------------------------------


async def test_the_token_never_appears_in_messages_or_logs(api: FakeApi) -> None:
    lines: list[str] = []
    api.script = [
        reply(500, {"errorCode": 500, "errorMessage": f"bad token {TOKEN}"}),
        httpx.ConnectError(f"failed with {TOKEN}"),
        reply(400, [{"property": "x", "message": f"echo {TOKEN}"}]),
    ]
    async with api.client(log=lines.append, max_retries=2) as client:
        with pytest.raises(Invalid) as caught:
            await api.clock.run(client.get("/services"))
    assert api.seen[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in str(caught.value)
    assert lines and not any(TOKEN in line for line in lines)
    assert any("GET /services" in line and "-> 500" in line for line in lines)


async def test_request_bodies_are_never_logged(api: FakeApi) -> None:
    lines: list[str] = []
    secret = "hunter2-backend-secret"
    api.script = [reply(500), reply(200, [{"id": "e1"}])]
    async with api.client(log=lines.append) as client:
        await api.clock.run(
            client.put("/services/s/endpoints/e1", {"systemDomainCredentialSecret": secret})
        )
    assert json.loads(api.seen[-1].body) == {"systemDomainCredentialSecret": secret}
    assert lines and not any(secret in line for line in lines)


async def test_429_from_a_gateway_is_throttling(api: FakeApi) -> None:
    lines: list[str] = []
    api.script = [reply(429, text="Too Many Requests", Retry_After="1.5"), reply(200, [])]
    async with api.client(log=lines.append) as client:
        await api.clock.run(client.get("/services"))
    assert [s.at for s in api.seen] == [0.0, 1.5]
    assert any(
        "throttled by the server (Too Many Requests); every call waits 1.5 s" in line
        for line in lines
    )


async def test_a_redirect_is_reported_not_followed(api: FakeApi) -> None:
    api.script = [reply(301, text="", Location="https://elsewhere.example.test/v3/rest/services")]
    error = await _fails(api, "get", "/services")
    assert type(error) is ApiError and len(api.seen) == 1
    assert str(error) == (
        "GET /services: 301 Moved Permanently (redirected to "
        "https://elsewhere.example.test/v3/rest/services; check the API base URL)"
    )
