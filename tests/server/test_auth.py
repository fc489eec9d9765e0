"""Authentication and area isolation (SUPPLEMENT §6, §7)."""

from __future__ import annotations

import base64

import httpx
import pytest
from spec_helpers import (
    AREA_A,
    AREA_B,
    CLIENT_KEY,
    CLIENT_SECRET,
    TOKEN_A,
    TOKEN_B,
    USER,
    Api,
    assert_error,
    describe,
    make_service,
)


def basic(key: str, secret: str) -> dict[str, str]:
    raw = base64.b64encode(f"{key}:{secret}".encode()).decode()
    return {"Authorization": f"Basic {raw}"}


def exchange(http: httpx.Client, **form: str) -> httpx.Response:
    return http.post("/v3/token", data=form, headers=basic(CLIENT_KEY, CLIENT_SECRET))


def password_grant(http: httpx.Client, scope: str = AREA_A) -> httpx.Response:
    username, password, _ = USER
    return exchange(
        http, grant_type="password", username=username, password=password, scope=scope
    )


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer not-a-token"},
        {"Authorization": "Bearer "},
        {"Authorization": "Bearer"},
        {"Authorization": f"Basic {TOKEN_A}"},
        {"Authorization": TOKEN_A},
    ],
    ids=["none", "unknown", "empty", "no-value", "wrong-scheme", "no-scheme"],
)
@pytest.mark.parametrize("path", ["/services", "/packages", "/domains", "/members"])
def test_missing_or_bad_token_is_401(
    http: httpx.Client, headers: dict[str, str], path: str
) -> None:
    resp = http.get("/v3/rest" + path, headers=headers)
    assert_error(resp, 401)


def test_401_leaks_nothing(api: Api, http: httpx.Client) -> None:
    make_service(api, "Secret Service", description="top secret description")
    for headers in ({}, {"Authorization": "Bearer nope-nope"}):
        resp = http.get("/v3/rest/services", headers=headers)
        assert_error(resp, 401)
        assert "Secret Service" not in resp.text
        assert TOKEN_A not in resp.text
        assert "nope-nope" not in resp.text


def test_writes_without_token_are_refused_and_not_done(api: Api, http: httpx.Client) -> None:
    resp = http.post("/v3/rest/services", json={"name": "Sneaky"})
    assert_error(resp, 401)
    assert api.list("/services", {"filter": "name:Sneaky"}) == []


def test_area_isolation(api: Api, http: httpx.Client) -> None:
    other = Api(http, TOKEN_B)
    svc = make_service(api, "Area A Service")
    assert [s["name"] for s in api.list("/services")] == ["Area A Service"]
    assert other.list("/services") == []
    for resp in (
        other.get(f"/services/{svc['id']}"),
        other.put(f"/services/{svc['id']}", {"name": "Hijacked"}),
        other.delete(f"/services/{svc['id']}"),
        other.get(f"/services/{svc['id']}/endpoints"),
    ):
        assert resp.status_code in (401, 404), describe(resp)
        assert "Area A Service" not in resp.text
    assert api.fetch(f"/services/{svc['id']}")["name"] == "Area A Service"


def test_same_names_in_two_areas_are_independent(api: Api, http: httpx.Client) -> None:
    other = Api(http, TOKEN_B)
    make_service(api, "Shared Name")
    make_service(other, "Shared Name")
    api.create("/packages", {"name": "Shared Package"})
    other.create("/packages", {"name": "Shared Package"})
    assert len(api.list("/services")) == 1
    assert len(other.list("/services")) == 1


def test_token_exchange_password_grant(http: httpx.Client) -> None:
    resp = password_grant(http)
    assert resp.status_code == 200, describe(resp)
    body = resp.json()
    assert body["token_type"] == "bearer"
    assert body["expires_in"] == 3600
    assert body["scope"] == AREA_A
    assert isinstance(body["access_token"], str) and body["access_token"]
    assert isinstance(body["refresh_token"], str) and body["refresh_token"]
    assert USER[1] not in resp.text
    assert CLIENT_SECRET not in resp.text


def test_exchanged_token_reads_its_area_only(api: Api, http: httpx.Client) -> None:
    make_service(api, "Visible")
    make_service(Api(http, TOKEN_B), "Invisible")
    token = password_grant(http).json()["access_token"]
    user_api = Api(http, token)
    assert [s["name"] for s in user_api.list("/services")] == ["Visible"]


def test_editor_handle_is_the_user_or_null(api: Api, http: httpx.Client) -> None:
    token = password_grant(http).json()["access_token"]
    user_api = Api(http, token)
    by_user = make_service(user_api, "By User")
    got = user_api.fetch(f"/services/{by_user['id']}", {"fields": "id,editorHandle"})
    assert got["editorHandle"] == USER[0]
    by_static = make_service(api, "By Static Token")
    got = api.fetch(f"/services/{by_static['id']}", {"fields": "id,editorHandle"})
    assert got["editorHandle"] is None


def test_refresh_token_grant(http: httpx.Client) -> None:
    first = password_grant(http).json()
    resp = exchange(http, grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert resp.status_code == 200, describe(resp)
    renewed = resp.json()
    assert renewed["token_type"] == "bearer"
    assert renewed["expires_in"] == 3600
    assert renewed["access_token"]
    assert Api(http, renewed["access_token"]).get("/services").status_code == 200


def test_bad_refresh_token(http: httpx.Client) -> None:
    resp = exchange(http, grant_type="refresh_token", refresh_token="made-up")
    assert resp.status_code == 400, describe(resp)
    assert resp.json()["error"] == "invalid_grant"


def test_bad_user_password_is_invalid_grant(http: httpx.Client) -> None:
    resp = exchange(
        http, grant_type="password", username=USER[0], password="wrong", scope=AREA_A
    )
    assert resp.status_code == 400, describe(resp)
    body = resp.json()
    assert body["error"] == "invalid_grant"
    assert isinstance(body.get("error_description"), str)
    assert "access_token" not in body


def test_unknown_user_is_invalid_grant(http: httpx.Client) -> None:
    resp = exchange(http, grant_type="password", username="mallory", password="x", scope=AREA_A)
    assert resp.status_code == 400, describe(resp)
    assert resp.json()["error"] == "invalid_grant"


def test_user_cannot_get_a_token_for_another_area(http: httpx.Client) -> None:
    resp = password_grant(http, scope=AREA_B)
    assert resp.status_code == 400, describe(resp)
    assert "access_token" not in resp.json()


@pytest.mark.parametrize(
    "headers",
    [basic(CLIENT_KEY, "wrong-secret"), basic("unknown-key", CLIENT_SECRET), {}],
    ids=["bad-secret", "bad-key", "no-client"],
)
def test_bad_client_is_invalid_client(http: httpx.Client, headers: dict[str, str]) -> None:
    username, password, area = USER
    form = {"grant_type": "password", "username": username, "password": password, "scope": area}
    resp = http.post("/v3/token", data=form, headers=headers)
    assert resp.status_code == 401, describe(resp)
    assert resp.json()["error"] == "invalid_client"
    assert CLIENT_SECRET not in resp.text


def test_token_endpoint_is_not_a_management_token(http: httpx.Client) -> None:
    """The client key and secret alone give no access to the management API."""
    resp = http.get("/v3/rest/services", headers=basic(CLIENT_KEY, CLIENT_SECRET))
    assert_error(resp, 401)


@pytest.mark.parametrize("token", [None, TOKEN_A])
def test_operator_endpoints_need_the_operator_token(
    api: Api, http: httpx.Client, token: str | None
) -> None:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    dom = api.create("/domains", {"domain": "example.com"})
    resp = http.post(f"/operator/areas/{AREA_A}/domains/{dom['id']}/approve", headers=headers)
    assert resp.status_code in (401, 403), describe(resp)
    resp = http.get("/operator/calls", headers=headers)
    assert resp.status_code in (401, 403), describe(resp)


def test_foreign_area_cannot_write_into_nested_paths(api: Api, http: httpx.Client) -> None:
    other = Api(http, TOKEN_B)
    api.create("/domains", {"domain": "example.com"})
    api.create("/domains", {"domain": "example.net"})
    svc = make_service(api, "Area A Service")
    sid = svc["id"]
    dom = api.list("/domains")[0]
    pkg = api.create("/packages", {"name": "A Package"})
    attempts = [
        other.post(f"/services/{sid}/endpoints", {"name": "x", "requestPathAlias": "/x", "trafficManagerDomain": "api.example.com"}),
        other.post(f"/services/{sid}/errorSets", {"name": "Injected"}),
        other.put(f"/services/{sid}/cache", {"cacheTtl": 99}),
        other.put(f"/domains/{dom['id']}", {"domain": "evil.example"}),
        other.post(f"/packages/{pkg['id']}/plans", {"name": "Injected"}),
        other.put(f"/packages/{pkg['id']}", {"name": "Hijacked"}),
    ]
    for resp in attempts:
        assert resp.status_code in (401, 404), describe(resp)
    assert api.list(f"/services/{sid}/endpoints") == []
    assert [s["name"] for s in api.list(f"/services/{sid}/errorSets")] == ["Default"]
    assert api.fetch(f"/services/{sid}/cache") == {"cacheTtl": 0}
    assert api.fetch(f"/domains/{dom['id']}")["domain"] == dom["domain"]
    assert api.list(f"/packages/{pkg['id']}/plans") == []
    assert api.fetch(f"/packages/{pkg['id']}")["name"] == "A Package"
    assert api.fetch(f"/services/{sid}", {"fields": "revisionNumber"})["revisionNumber"] == 1


def test_editor_handle_follows_the_last_writer(api: Api, http: httpx.Client) -> None:
    """Spec: editorHandle is the handle of the user who last modified the service."""
    user_api = Api(http, password_grant(http).json()["access_token"])
    sid = make_service(api, "Shared")["id"]
    user_api.create(f"/services/{sid}/errorSets", {"name": "By Alice"})  # a nested write
    got = api.fetch(f"/services/{sid}", {"fields": "editorHandle,revisionNumber"})
    assert got == {"editorHandle": USER[0], "revisionNumber": 2}
    api.update(f"/services/{sid}", {"description": "by a static token"})
    got = api.fetch(f"/services/{sid}", {"fields": "editorHandle,revisionNumber"})
    assert got == {"editorHandle": None, "revisionNumber": 3}
