"""The token exchange is judged like every other call: throttling waits and is retried, a
garbled or failed answer is retried within bounds, and only a clear refusal (SUPPLEMENT §7,
§10.10.7) blames the credentials."""

from __future__ import annotations

import pytest

from apimctl import sensitive
from apimctl.api.auth import INACTIVE, MAX_GARBLED
from apimctl.api.replies import OVER_QPS
from apimctl.errors import ApiError, AuthError, QuotaExhausted, ServerError

from .clientkit import FakeApi, reply
from .test_auth import CREDS, TokenServer

pytestmark = pytest.mark.anyio

THROTTLED = {
    "mashery header, no Retry-After, XML body": (
        reply(403, text="<h1>Developer Over Qps</h1>", X_Mashery_Error_Code=OVER_QPS), 1.0),
    "spec header with Retry-After": (
        reply(403, {"errorCode": 403, "errorMessage": "over qps"}, X_Svc_Error_Code=OVER_QPS,
              Retry_After="3"), 3.0),
    "429 with Retry-After, text body": (reply(429, text="slow down", Retry_After="2"), 2.0),
    "429 alone": (reply(429), 1.0),
    "code in the JSON body only": (reply(403, {"errorCode": OVER_QPS, "errorMessage": "qps"}), 1.0),
}


@pytest.mark.parametrize("name", THROTTLED)
async def test_a_throttled_exchange_waits_and_recovers(name: str, api: FakeApi) -> None:
    answer, wait = THROTTLED[name]
    server = TokenServer(api)
    server.token_replies = [answer, answer]
    lines: list[str] = []
    async with api.client(credentials=CREDS, log=lines.append) as client:
        assert await api.clock.run(client.get("/services")) == [{"id": "s1"}]
    assert api.clock.sleeps == [wait, wait]
    assert client.stats.token_calls == 3
    assert any("throttled" in line for line in lines), lines


async def test_throttling_is_bounded(api: FakeApi) -> None:
    server = TokenServer(api)
    server.token_replies = [reply(429)] * 4
    async with api.client(credentials=CREDS, max_throttle_waits=2) as client:
        with pytest.raises(ApiError, match="throttled") as caught:
            await api.clock.run(client.get("/services"))
    assert not isinstance(caught.value, AuthError)
    assert client.stats.token_calls == 3


GARBLED = [reply(200, text="<html>maintenance</html>", content_type="text/html"),
           reply(200, {"token_type": "bearer", "access_token": ""}),
           reply(200, ["not", "an", "object"])]


@pytest.mark.parametrize("answer", GARBLED, ids=["html", "empty-token", "list"])
async def test_a_garbled_exchange_is_retried_then_recovers(answer: object, api: FakeApi) -> None:
    server = TokenServer(api)
    server.token_replies = [answer] * (MAX_GARBLED - 1)  # type: ignore[list-item]
    async with api.client(credentials=CREDS) as client:
        assert await api.clock.run(client.get("/services")) == [{"id": "s1"}]
    assert client.stats.token_calls == MAX_GARBLED


async def test_a_garbled_exchange_gives_up_clearly(api: FakeApi) -> None:
    server = TokenServer(api)
    server.token_replies = [GARBLED[0]] * MAX_GARBLED
    async with api.client(credentials=CREDS) as client:
        with pytest.raises(ServerError, match="not JSON") as caught:
            await api.clock.run(client.get("/services"))
    assert "check the API key" not in str(caught.value)
    assert client.stats.token_calls == MAX_GARBLED


async def test_server_failures_are_retried_with_backoff(api: FakeApi) -> None:
    server = TokenServer(api)
    server.token_replies = [reply(502, text="bad gateway"), reply(500, {"error": "oops"})]
    async with api.client(credentials=CREDS) as client:
        assert await api.clock.run(client.get("/services")) == [{"id": "s1"}]
    assert api.clock.sleeps == [0.5, 1.0]


REFUSALS = {
    "400 invalid_grant": reply(400, {"error": "invalid_grant", "error_description": "bad user"}),
    "401 invalid_client": reply(401, {"error": "invalid_client"}),
    "403 inactive (mashery)": reply(403, text="<h1>Developer Inactive</h1>", X_Mashery_Error_Code=INACTIVE),
}


@pytest.mark.parametrize("name", REFUSALS)
async def test_only_a_clear_refusal_blames_the_credentials(name: str, api: FakeApi) -> None:
    server = TokenServer(api)
    server.token_replies = [REFUSALS[name]]
    async with api.client(credentials=CREDS) as client:
        with pytest.raises(AuthError, match="check the API key") as caught:
            await api.clock.run(client.get("/services"))
    assert str(caught.value).startswith(f"POST /v3/token: {name[:3]} token exchange refused")
    assert client.stats.token_calls == 1


async def test_other_answers_do_not_blame_the_credentials(api: FakeApi) -> None:
    server = TokenServer(api)
    server.token_replies = [reply(404, text="not found")]
    async with api.client(credentials=CREDS) as client:
        with pytest.raises(ApiError, match="not a refusal of the credentials") as caught:
            await api.clock.run(client.get("/services"))
    assert not isinstance(caught.value, AuthError)


async def test_the_daily_quota_stops(api: FakeApi) -> None:
    server = TokenServer(api)
    server.token_replies = [reply(403, text="over rate", X_Mashery_Error_Code="ERR_403_DEVELOPER_OVER_RATE")]
    async with api.client(credentials=CREDS) as client:
        with pytest.raises(QuotaExhausted):
            await api.clock.run(client.get("/services"))
    assert client.stats.token_calls == 1


async def test_tokens_are_registered_before_they_are_used(api: FakeApi) -> None:
    TokenServer(api, expires_in=None)
    async with api.client(credentials=CREDS) as client:
        await api.clock.run(client.get("/services"))
    assert {"access-1", "refresh-1"} <= sensitive.registered()
    assert sensitive.scrub("echo access-1 and refresh-1") == "echo (sensitive) and (sensitive)"
