"""Client-side helpers for the specification tests of the reference server.

The tests in ``tests/server/test_*.py`` (other than ``test_engine_*``) check the reference
server against the specification and ``spec/SUPPLEMENT.md`` only, the way any client of the
management API would: over HTTP, with bearer tokens, reading JSON. This module holds the small
vocabulary they share: building a server for a test, a thin client bound to one area, and
assertions for the error shapes of SUPPLEMENT §6.
"""

from __future__ import annotations

import json
import socket
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

with warnings.catch_warnings():
    # newer Starlette prefers a renamed httpx package; the installed httpx works the same
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

BASE = "/v3/rest"

TOKEN_A = "tok-area-a"
TOKEN_B = "tok-area-b"
AREA_A = "area-a"
AREA_B = "area-b"
OPERATOR_TOKEN = "operator-secret-token"
CLIENT_KEY = "client-key-1"
CLIENT_SECRET = "client-secret-1"
USER = ("alice", "alice-password", AREA_A)

# SUPPLEMENT §5: the message catalog, id -> (code, status).
CATALOG: dict[str, tuple[int, str | None]] = {
    "ERR_400_BAD_REQUEST": (400, "Bad Request"),
    "ERR_403_NOT_AUTHORIZED": (403, "Forbidden"),
    "ERR_403_DEVELOPER_INACTIVE": (403, "Forbidden"),
    "ERR_403_DEVELOPER_OVER_QPS": (403, "Forbidden"),
    "ERR_403_DEVELOPER_OVER_RATE": (403, "Forbidden"),
    "ERR_403_DEVELOPER_UNKNOWN_REFERER": (403, "Forbidden"),
    "ERR_403_SERVICE_OVER_QPS": (403, "Forbidden"),
    "ERR_403_SERVICE_REQUIRES_SSL": (403, "Forbidden"),
    "ERR_414_REQUEST_URI_TOO_LONG": (414, "Request-URI Too Long"),
    "ERR_502_BAD_GATEWAY": (502, "Bad Gateway"),
    "ERR_503_SERVICE_UNAVAILABLE": (503, "Service Unavailable"),
    "ERR_504_GATEWAY_TIMEOUT": (504, "Gateway Timeout"),
    "ERR_400_UNSUPPORTED_PARAMETER": (400, None),
    "ERR_400_UNSUPPORTED_SIGNATURE_METHOD": (400, None),
    "ERR_400_MISSING_REQUIRED_CONSUMER_KEY": (400, None),
    "ERR_400_MISSING_REQUIRED_REQUEST_TOKEN": (400, None),
    "ERR_400_MISSING_REQUIRED_ACCESS_TOKEN": (400, None),
    "ERR_400_DUPLICATED_OAUTH_PROTOCOL_PARAMETER": (400, None),
    "ERR_401_TIMESTAMP_IS_INVALID": (401, "Unauthorized"),
    "ERR_401_INVALID_SIGNATURE": (401, None),
    "ERR_401_INVALID_OR_EXPIRED_TOKEN": (401, None),
    "ERR_401_INVALID_CONSUMER_KEY": (401, None),
    "ERR_401_INVALID_NONCE": (401, None),
}

ID24_ALPHABET = set("abcdefghjkmnpqrstuvwxyz23456789")
UUID_RE = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
MS_TIME_RE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$"
Z_TIME_RE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"


def make_config(tmp_path: Path, **overrides: Any) -> Any:
    """A ServerConfig with two areas, a client, a user and an operator token."""
    from apimctl.server import ServerConfig

    settings: dict[str, Any] = {
        "db_path": str(tmp_path / "server.db"),
        "tokens": {TOKEN_A: AREA_A, TOKEN_B: AREA_B},
        "clients": {CLIENT_KEY: CLIENT_SECRET},
        "users": [USER],
        "auto_approve_domains": True,
        "operator_token": OPERATOR_TOKEN,
    }
    settings.update(overrides)
    return ServerConfig(**settings)


@contextmanager
def serve(tmp_path: Path, **overrides: Any) -> Iterator[TestClient]:
    """The reference server in-process, as an HTTP client on its root."""
    from apimctl.server import create_app

    app = create_app(make_config(tmp_path, **overrides))
    try:
        with TestClient(app, raise_server_exceptions=False) as client:
            yield client
    finally:
        app.state.server.close()  # its database connections, one per thread that served


Params = Mapping[str, Any] | list[tuple[str, Any]] | None


@dataclass
class Api:
    """The management API of one area, as seen through one bearer token."""

    http: httpx.Client
    token: str | None

    def headers(self) -> dict[str, str]:
        if self.token is None:
            return {}
        return {"Authorization": f"Bearer {self.token}"}

    def request(
        self, method: str, path: str, body: Any = None, params: Params = None, **kw: Any
    ) -> httpx.Response:
        headers = self.headers()
        content = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            content = json.dumps(body)
        return self.http.request(
            method, BASE + path, content=content, params=params, headers=headers, **kw
        )

    def get(self, path: str, params: Params = None) -> httpx.Response:
        return self.request("GET", path, params=params)

    def head(self, path: str, params: Params = None) -> httpx.Response:
        return self.request("HEAD", path, params=params)

    def post(self, path: str, body: Any, params: Params = None) -> httpx.Response:
        return self.request("POST", path, body, params)

    def put(self, path: str, body: Any, params: Params = None) -> httpx.Response:
        return self.request("PUT", path, body, params)

    def delete(self, path: str) -> httpx.Response:
        return self.request("DELETE", path)

    # shortcuts that expect success -------------------------------------------------

    def create(self, path: str, body: Any, params: Params = None) -> dict[str, Any]:
        return one(self.post(path, body, params))

    def update(self, path: str, body: Any, params: Params = None) -> dict[str, Any]:
        return one(self.put(path, body, params))

    def fetch(self, path: str, params: Params = None) -> dict[str, Any]:
        return one(self.get(path, params))

    def list(self, path: str, params: Params = None) -> list[dict[str, Any]]:
        return many(self.get(path, params))


def describe(resp: httpx.Response) -> str:
    return f"{resp.request.method} {resp.request.url} -> {resp.status_code} {resp.text[:500]}"


def assert_json(resp: httpx.Response) -> None:
    """Spec "Common rules" 1: requests and responses are JSON."""
    content_type = resp.headers.get("content-type", "")
    assert content_type.startswith("application/json"), f"content-type {content_type!r}: {describe(resp)}"


def one(resp: httpx.Response) -> dict[str, Any]:
    """The single object of a success body: a one-element array or a bare object (§1, §9)."""
    assert resp.status_code == 200, describe(resp)
    assert_json(resp)
    body = resp.json()
    if isinstance(body, list):
        assert len(body) == 1, describe(resp)
        body = body[0]
    assert isinstance(body, dict), describe(resp)
    return body


def many(resp: httpx.Response) -> list[dict[str, Any]]:
    """The items of a list read: always a bare array (§1)."""
    assert resp.status_code == 200, describe(resp)
    assert_json(resp)
    body = resp.json()
    assert isinstance(body, list), describe(resp)
    return body


def assert_deleted(resp: httpx.Response) -> None:
    assert resp.status_code == 200, describe(resp)
    assert resp.content.strip() == b"", describe(resp)


def assert_error(resp: httpx.Response, status: int) -> dict[str, Any]:
    """`{"errorCode": N, "errorMessage": "..."}` with status N (§6)."""
    assert resp.status_code == status, describe(resp)
    assert_json(resp)
    body = resp.json()
    assert isinstance(body, dict), describe(resp)
    assert body.get("errorCode") == status, describe(resp)
    assert isinstance(body.get("errorMessage"), str), describe(resp)
    assert "Traceback" not in resp.text
    return body


def validation_items(resp: httpx.Response) -> list[dict[str, Any]]:
    """The validation array of a 400 (§6): items with `property` and `message`."""
    assert resp.status_code == 400, describe(resp)
    assert_json(resp)
    body = resp.json()
    assert isinstance(body, list) and body, describe(resp)
    for item in body:
        assert isinstance(item, dict), describe(resp)
        assert isinstance(item.get("property"), str), describe(resp)
        assert isinstance(item.get("message"), str) and item["message"], describe(resp)
    assert "Traceback" not in resp.text
    return body


def assert_invalid(resp: httpx.Response, prop: str | None = None) -> list[dict[str, Any]]:
    """A 400 validation failure; when `prop` is given, some item names that property."""
    items = validation_items(resp)
    if prop is not None:
        assert any(prop in item["property"] for item in items), (
            f"no item names {prop!r}: {describe(resp)}"
        )
    return items


def assert_duplicate(resp: httpx.Response) -> None:
    items = validation_items(resp)
    assert any("duplicate" in item["message"].lower() for item in items), describe(resp)


def add_domain(api: Api, domain: str) -> dict[str, Any]:
    return api.create("/domains", {"domain": domain})


def approve(http: httpx.Client, area: str, domain_id: str) -> httpx.Response:
    return http.post(
        f"/operator/areas/{area}/domains/{domain_id}/approve",
        headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"},
    )


def endpoint_body(
    name: str = "Forecast",
    path: str = "/forecast",
    host: str = "api.example.com",
    backend: str = "backend.example.net",
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": name,
        "requestPathAlias": path,
        "trafficManagerDomain": host,
        "publicDomains": [{"address": host}],
        "systemDomains": [{"address": backend}],
    }
    body.update(extra)
    return body


def with_domains(api: Api, *domains: str) -> None:
    """Register domains (active at once on a server with auto-approval)."""
    for domain in domains or ("example.com", "example.net"):
        add_domain(api, domain)


def make_service(api: Api, name: str = "Weather", **extra: Any) -> dict[str, Any]:
    return api.create("/services", {"name": name, **extra})


def make_endpoint(api: Api, sid: str, **kw: Any) -> dict[str, Any]:
    return api.create(f"/services/{sid}/endpoints", endpoint_body(**kw))


def revision(api: Api, sid: str) -> int:
    value = api.fetch(f"/services/{sid}", {"fields": "id,revisionNumber"})["revisionNumber"]
    assert isinstance(value, int)
    return value


def member_body(username: str = "dev1", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "username": username,
        "email": f"{username}@example.org",
        "displayName": username.title(),
        "externalId": f"ext-{username}",
        "passwdNew": "S3cret-pass!",
    }
    body.update(extra)
    return body


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
