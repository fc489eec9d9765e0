"""Token exchange (SUPPLEMENT §7): the form, renewal before expiry, renewal once on a 401."""

from __future__ import annotations

import asyncio
import base64
from urllib.parse import parse_qs

import httpx
import pytest

from apimctl.api.auth import Credentials, token_url
from apimctl.errors import AuthError, ServerError

from .clientkit import FakeApi, reply

pytestmark = pytest.mark.anyio

CREDS = Credentials(
    api_key="key-1", api_secret="sec-ret-1", username="ops", password="pa55word", area="area-1"
)


class TokenServer:
    """The token endpoint plus an API that accepts only the latest token issued."""

    def __init__(self, api: FakeApi, *, expires_in: int | None = 3600) -> None:
        self.api = api
        self.expires_in = expires_in
        self.issued = 0
        self.grants: list[dict[str, list[str]]] = []
        self.valid: set[str] = set()
        self.refuse_refresh = False
        self.token_replies: list[httpx.Response] = []
        api.handler = self.handle

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v3/token":
            return self.token(request)
        if request.headers.get("authorization", "").removeprefix("Bearer ") not in self.valid:
            return reply(401, {"errorCode": 401, "errorMessage": "Invalid or expired token"})
        return reply(200, [{"id": "s1"}], X_Total_Count="1")

    def token(self, request: httpx.Request) -> httpx.Response:
        form = parse_qs(request.content.decode())
        self.grants.append(form)
        if self.token_replies:
            return self.token_replies.pop(0)
        basic = base64.b64decode(request.headers["authorization"].removeprefix("Basic ")).decode()
        if basic != "key-1:sec-ret-1":
            return reply(401, {"error": "invalid_client"})
        if form["grant_type"] == ["refresh_token"] and self.refuse_refresh:
            return reply(
                400, {"error": "invalid_grant", "error_description": "refresh token expired"}
            )
        if form["grant_type"] == ["password"] and form.get("password") != ["pa55word"]:
            return reply(
                400, {"error": "invalid_grant", "error_description": "Bad user credentials"}
            )
        self.issued += 1
        access = f"access-{self.issued}"
        self.valid = {access}
        body: dict[str, object] = {
            "token_type": "bearer",
            "access_token": access,
            "refresh_token": f"refresh-{self.issued}",
            "scope": "area-1",
        }
        if self.expires_in is not None:
            body["expires_in"] = self.expires_in
        return reply(200, body)

    def revoke(self) -> None:
        self.valid = set()


def test_token_url_drops_the_api_path() -> None:
    assert token_url("https://h:8443/v3/rest") == "https://h:8443/v3/token"
    assert token_url("https://h/v3/rest/") == "https://h/v3/token"
    assert token_url("https://h/prefix/v3/rest") == "https://h/prefix/v3/token"


def test_credentials_repr_hides_secrets() -> None:
    text = repr(CREDS)
    assert "sec-ret-1" not in text and "pa55word" not in text and "key-1" in text


async def test_exchange_then_bearer(api: FakeApi) -> None:
    server = TokenServer(api)
    async with api.client(credentials=CREDS) as client:
        assert await api.clock.run(client.get("/services")) == [{"id": "s1"}]
    token_call, call = api.seen
    assert (token_call.method, token_call.path) == ("POST", "/v3/token")
    assert server.grants[0] == {
        "grant_type": ["password"],
        "username": ["ops"],
        "password": ["pa55word"],
        "scope": ["area-1"],
    }
    assert token_call.headers["content-type"] == "application/x-www-form-urlencoded"
    assert call.headers["authorization"] == "Bearer access-1"
    assert client.stats.token_calls == 1 and client.stats.total() == 1


async def test_renewed_shortly_before_expiry_with_the_refresh_token(api: FakeApi) -> None:
    server = TokenServer(api, expires_in=600)
    async with api.client(credentials=CREDS) as client:
        await api.clock.run(client.get("/services"))
        api.clock.now = 530.0  # 600 s lifetime, renewed 60 s early at the latest
        await api.clock.run(client.get("/services"))
        api.clock.now = 541.0
        await api.clock.run(client.get("/services"))
    assert [g["grant_type"] for g in server.grants] == [["password"], ["refresh_token"]]
    assert server.grants[1]["refresh_token"] == ["refresh-1"]
    assert api.seen[-1].headers["authorization"] == "Bearer access-2"


async def test_short_lifetimes_renew_a_tenth_early(api: FakeApi) -> None:
    server = TokenServer(api, expires_in=100)
    async with api.client(credentials=CREDS) as client:
        await api.clock.run(client.get("/services"))
        api.clock.now = 89.0
        await api.clock.run(client.get("/services"))
        assert server.issued == 1
        api.clock.now = 90.0
        await api.clock.run(client.get("/services"))
        assert server.issued == 2


async def test_refused_refresh_falls_back_to_the_password_grant(api: FakeApi) -> None:
    server = TokenServer(api, expires_in=100)
    server.refuse_refresh = True
    async with api.client(credentials=CREDS) as client:
        await api.clock.run(client.get("/services"))
        api.clock.now = 95.0
        await api.clock.run(client.get("/services"))
    assert [g["grant_type"][0] for g in server.grants] == ["password", "refresh_token", "password"]
    assert api.seen[-1].headers["authorization"] == "Bearer access-2"


async def test_a_401_renews_once_and_repeats_the_call(api: FakeApi) -> None:
    server = TokenServer(api, expires_in=None)
    async with api.client(credentials=CREDS) as client:
        await api.clock.run(client.get("/services"))
        server.revoke()
        assert await api.clock.run(client.get("/services")) == [{"id": "s1"}]
    paths = [(s.method, s.path, s.headers.get("authorization")) for s in api.seen]
    assert paths[2:] == [
        ("GET", "/v3/rest/services", "Bearer access-1"),
        ("POST", "/v3/token", paths[3][2]),
        ("GET", "/v3/rest/services", "Bearer access-2"),
    ]
    assert paths[3][2] is not None and paths[3][2].startswith("Basic ")


async def test_a_second_401_is_an_auth_error(api: FakeApi) -> None:
    TokenServer(api)
    api.handler = lambda request: (
        reply(200, {"access_token": "short", "expires_in": 3600})
        if request.url.path == "/v3/token"
        else reply(401, {"errorCode": 401, "errorMessage": "Invalid or expired token"})
    )
    async with api.client(credentials=CREDS) as client:
        with pytest.raises(
            AuthError, match="GET /services: 401 Unauthorized: Invalid or expired token"
        ):
            await api.clock.run(client.get("/services"))
    assert [s.path for s in api.seen] == [
        "/v3/token",
        "/v3/rest/services",
        "/v3/token",
        "/v3/rest/services",
    ]


async def test_concurrent_401s_renew_once(api: FakeApi) -> None:
    server = TokenServer(api, expires_in=None)
    async with api.client(credentials=CREDS) as client:
        await api.clock.run(client.get("/services"))
        server.revoke()

        async def many() -> list[object]:
            return list(await asyncio.gather(*(client.get(f"/services/{n}") for n in range(6))))

        assert await api.clock.run(many()) == [[{"id": "s1"}]] * 6
    assert server.issued == 2


async def test_static_token_401_is_not_retried(api: FakeApi) -> None:
    api.script = [reply(401, {"errorCode": 401, "errorMessage": "Invalid or expired token"})]
    async with api.client() as client:
        with pytest.raises(AuthError, match="refused the access token"):
            await api.clock.run(client.get("/services"))
    assert len(api.seen) == 1


async def test_bad_user_credentials(api: FakeApi) -> None:
    TokenServer(api)
    wrong = Credentials("key-1", "sec-ret-1", "ops", "wrong-password-value", "area-1")
    async with api.client(credentials=wrong) as client:
        with pytest.raises(AuthError) as caught:
            await api.clock.run(client.get("/services"))
    message = str(caught.value)
    assert (
        "POST /v3/token: 400 token exchange refused (invalid_grant): Bad user credentials"
        in message
    )
    assert "the user name and password" in message
    assert "wrong-password-value" not in message and "sec-ret-1" not in message
    assert len(api.seen) == 1


async def test_bad_client_key(api: FakeApi) -> None:
    TokenServer(api)
    wrong = Credentials("key-1", "not-the-secret", "ops", "pa55word", "area-1")
    async with api.client(credentials=wrong) as client:
        with pytest.raises(
            AuthError, match=r"401 token exchange refused \(invalid_client\)"
        ) as caught:
            await api.clock.run(client.get("/services"))
    assert "not-the-secret" not in str(caught.value)


async def test_exchange_without_access_token(api: FakeApi) -> None:
    """Retried a bounded number of times, then reported as the endpoint's fault."""
    server = TokenServer(api)
    server.token_replies = [reply(200, {"token_type": "bearer"})] * 3
    async with api.client(credentials=CREDS) as client:
        with pytest.raises(ServerError, match="without an access_token") as caught:
            await api.clock.run(client.get("/services"))
    assert not isinstance(caught.value, AuthError) and "check the API key" not in str(caught.value)
    assert client.stats.token_calls == 3


async def test_exchange_retries_server_failures(api: FakeApi) -> None:
    server = TokenServer(api)
    server.token_replies = [reply(503, text="<html>down</html>", content_type="text/html")] * 2
    async with api.client(credentials=CREDS) as client:
        assert await api.clock.run(client.get("/services")) == [{"id": "s1"}]
    assert client.stats.token_calls == 3 and api.clock.sleeps == [0.5, 1.0]

    server.token_replies = [reply(500)] * 3
    async with api.client(credentials=CREDS, max_retries=2) as client:
        with pytest.raises(ServerError, match="POST /v3/token: 500"):
            await api.clock.run(client.get("/services"))


async def test_no_log_line_carries_a_credential(api: FakeApi) -> None:
    server = TokenServer(api, expires_in=None)
    lines: list[str] = []
    async with api.client(credentials=CREDS, log=lines.append) as client:
        await api.clock.run(client.get("/services"))
        server.revoke()
        await api.clock.run(client.get("/services"))
    assert lines
    for secret in ("sec-ret-1", "pa55word", "access-1", "access-2", "refresh-1"):
        assert not any(secret in line for line in lines)


async def test_refused_credentials_are_asked_once_for_concurrent_calls(api: FakeApi) -> None:
    """Calls waiting for the first token fail with the refusal, without asking again."""
    TokenServer(api)
    wrong = Credentials("key-1", "sec-ret-1", "ops", "wrong-password-value", "area-1")
    async with api.client(credentials=wrong) as client:
        calls = asyncio.gather(*(client.get(f"/services/{i}") for i in range(5)), return_exceptions=True)
        results = await api.clock.run(calls)
    assert all(isinstance(r, AuthError) and "invalid_grant" in str(r) for r in results)
    assert len(api.seen) == 1  # one token request, no API call
