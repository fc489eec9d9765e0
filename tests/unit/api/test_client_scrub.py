"""Every log and retry line of the client goes through the scrubber: a 5xx that echoes the
request body (a resolved secret) or the token form is logged without it."""

from __future__ import annotations

import json

import httpx
import pytest

from apimctl import sensitive

from .clientkit import FakeApi, reply
from .test_auth import CREDS, TokenServer

pytestmark = pytest.mark.anyio

SECRET = 'res"olved/secret+1'


async def test_retry_lines_quoting_a_request_body_are_scrubbed(api: FakeApi) -> None:
    sensitive.register(SECRET)  # as a plan registers the secrets it resolved
    attempts: list[bytes] = []

    def echo(request: httpx.Request) -> httpx.Response:
        attempts.append(request.content)
        if len(attempts) < 3:
            return reply(503, {"errorCode": 503, "errorMessage": f"cannot take {request.content.decode()}"})
        return reply(200, {"id": "s1"})

    api.handler = echo
    lines: list[str] = []
    async with api.client(log=lines.append) as client:
        await api.clock.run(client.put("/services/s1", {"systemDomainCredentialSecret": SECRET}))
    assert SECRET in json.loads(attempts[0])["systemDomainCredentialSecret"]  # sent as it is
    retries = [line for line in lines if "retrying" in line]
    assert len(retries) == 2 and all("(sensitive)" in line for line in retries), lines
    encoded = json.dumps(SECRET)[1:-1]
    assert not any(SECRET in line or encoded in line for line in lines), lines


async def test_a_token_form_echoed_by_a_failing_exchange_is_scrubbed(api: FakeApi) -> None:
    sensitive.register_credentials(CREDS.password, CREDS.api_secret)  # as the CLI does
    server = TokenServer(api)
    server.token_replies = [reply(502, text="bad gateway: grant_type=password&password=pa55word")]
    lines: list[str] = []
    async with api.client(credentials=CREDS, log=lines.append) as client:
        await api.clock.run(client.get("/services"))
    assert any("502" in line and "password=(sensitive)" in line for line in lines), lines
    assert not any("pa55word" in line for line in lines)
