"""The client against the reference server in-process (httpx.ASGITransport): the token
exchange, both single-object renderings, real paging, throttling and the daily quota, in both
dialects of the server (SUPPLEMENT §10: string error codes, ``X-Mashery-*`` headers, no
``Retry-After`` on throttling)."""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import Any

import httpx
import pytest

from apimctl.api.client import ApiClient, Credentials
from apimctl.errors import AuthError, NotFound, QuotaExhausted

pytestmark = pytest.mark.anyio

try:
    server = importlib.import_module("apimctl.server")
    READY = hasattr(server, "create_app") and hasattr(server, "ServerConfig")
except Exception:  # not written yet, or mid-edit
    READY = False

if not READY:
    pytest.skip(
        "apimctl.server (create_app, ServerConfig) is not available yet", allow_module_level=True
    )

CREDS = Credentials("cli-key", "cli-secret", "ops", "ops-password", "area-1")


def _client(tmp_path: Path, dialect: str, credentials: Credentials = CREDS, **config: Any) -> ApiClient:
    options: dict[str, Any] = {
        "db_path": str(tmp_path / "server.db"),
        "tokens": {"static-token-1": "area-1"},
        "clients": {"cli-key": "cli-secret"},
        "users": [("ops", "ops-password", "area-1")],
        "auto_approve_domains": True,
        "dialect": dialect,
    }
    options.update(config)
    app = server.create_app(server.ServerConfig(**options))
    transport = httpx.ASGITransport(app=app)
    return ApiClient(
        "http://apim.test/v3/rest", credentials=credentials, qps=None, transport=transport
    )


@pytest.mark.parametrize("object_responses", [False, True])
async def test_exchange_write_read_delete(tmp_path: Path, object_responses: bool, dialect: str) -> None:
    if dialect == "mashery" and object_responses:
        pytest.skip("the mashery dialect answers single objects bare either way")
    async with _client(tmp_path, dialect, object_responses=object_responses) as client:
        created = await client.post("/domains", {"domain": "example.com"})
        assert created["domain"] == "example.com" and created["id"]
        fetched = await client.get_object(f"/domains/{created['id']}")
        assert fetched["id"] == created["id"]
        service = await client.post("/services", {"name": "Weather"})
        renamed = await client.put(f"/services/{service['id']}", {"name": "Weather 2"})
        assert renamed["name"] == "Weather 2"
        await client.delete(f"/services/{service['id']}")
        with pytest.raises(NotFound):
            await client.get_object(f"/services/{service['id']}")
        with pytest.raises(NotFound):
            await client.delete(f"/services/{service['id']}")
    assert client.stats.token_calls == 1


async def test_paging_against_the_server(tmp_path: Path, dialect: str) -> None:
    async with _client(tmp_path, dialect) as client:
        for n in range(7):
            await client.post("/domains", {"domain": f"d{n}.example.com"})
        before = client.stats.total()
        domains = await client.list_all("/domains", page_size=3)
        assert sorted(d["domain"] for d in domains) == [f"d{n}.example.com" for n in range(7)]
        assert client.stats.total() - before == 3


async def test_wrong_password_is_an_auth_error(tmp_path: Path, dialect: str) -> None:
    wrong = Credentials("cli-key", "cli-secret", "ops", "nope-nope", "area-1")
    async with _client(tmp_path, dialect, wrong) as client:
        with pytest.raises(AuthError) as caught:
            await client.list_all("/services")
    assert "nope-nope" not in str(caught.value) and "cli-secret" not in str(caught.value)


async def test_throttled_calls_are_retried_until_they_pass(tmp_path: Path, dialect: str) -> None:
    async with _client(tmp_path, dialect, qps=20.0) as client:
        results = await asyncio.gather(*(client.get("/domains") for _ in range(30)))
    assert results == [[]] * 30
    assert client.stats.total() > 30  # some were refused and sent again


async def test_the_daily_quota_stops(tmp_path: Path, dialect: str) -> None:
    async with _client(tmp_path, dialect, daily_quota=3) as client:
        for _ in range(3):
            await client.get("/domains")
        with pytest.raises(QuotaExhausted, match="rerun later"):
            await client.get("/domains")
    assert client.stats.total() == 4
