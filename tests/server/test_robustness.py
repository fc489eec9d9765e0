"""Bad input never breaks the server: malformed JSON, wrong types, huge bodies, unknown paths
and methods all answer a clean 4xx JSON body, never a stack trace (SUPPLEMENT §6).

Property-based with hypothesis; each property keeps to a small number of examples."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_helpers import (
    BASE,
    TOKEN_A,
    Api,
    describe,
    endpoint_body,
    make_service,
    member_body,
)

FAST = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)

COLLECTIONS = ["/services", "/packages", "/roles", "/domains", "/members", "/scheduledMaintenanceEvents"]

SERVICE_FIELDS = ["name", "description", "version", "qpsLimitOverall", "rfc3986Encode", "endpoints", "errorSets", "cache", "securityProfile"]
ENDPOINT_FIELDS = [
    "name",
    "requestPathAlias",
    "trafficManagerDomain",
    "publicDomains",
    "systemDomains",
    "apiKeyValueLocations",
    "supportedHttpMethods",
    "connectionTimeoutForSystemDomainRequest",
    "numberOfHttpRedirectsToFollow",
    "cors",
    "cache",
    "processor",
    "methods",
    "systemDomainAuthentication",
    "errorSet",
    "requestAuthenticationType",
    "oauthGrantTypes",
    "highSecurity",
]

# the shared `api` fixture (conftest.py) declares the test domains first
WITH_DOMAINS = True


def assert_clean(resp: httpx.Response, allowed: tuple[int, ...] = ()) -> None:
    """A 4xx (or one of `allowed`) with a JSON body and no stack trace."""
    assert resp.status_code < 500 or resp.status_code in allowed, describe(resp)
    assert "Traceback" not in resp.text, describe(resp)
    assert 'File "' not in resp.text, describe(resp)
    if resp.status_code >= 400 and resp.request.method != "HEAD":
        assert resp.headers.get("content-type", "").startswith("application/json"), describe(resp)
        body = resp.json()
        assert isinstance(body, dict | list), describe(resp)


def raw_post(http: httpx.Client, path: str, content: bytes, content_type: str = "application/json") -> httpx.Response:
    headers = {"Authorization": f"Bearer {TOKEN_A}", "Content-Type": content_type}
    return http.post(BASE + path, content=content, headers=headers)


@pytest.mark.parametrize(
    "content",
    [b"{", b"not json", b"{'name': 'single quotes'}", b'{"name": "x",}', b"\xff\xfe\x00", b"", b"[1, 2", b"NaN"],
)
@pytest.mark.parametrize("path", COLLECTIONS)
def test_malformed_json_is_a_clean_400(http: httpx.Client, path: str, content: bytes) -> None:
    resp = raw_post(http, path, content)
    assert resp.status_code == 400, describe(resp)
    assert_clean(resp)


@pytest.mark.parametrize("body", [b"[]", b'[{"name": "x"}, {"name": "y"}]', b'"name"', b"42", b"null", b"true"])
@pytest.mark.parametrize("path", COLLECTIONS)
def test_non_object_bodies_are_a_clean_400(http: httpx.Client, path: str, body: bytes) -> None:
    resp = raw_post(http, path, body)
    assert resp.status_code == 400, describe(resp)
    assert_clean(resp)


@FAST
@given(content=st.binary(max_size=200))
def test_arbitrary_bytes_never_break_service_create(http: httpx.Client, content: bytes) -> None:
    resp = raw_post(http, "/services", content)
    assert_clean(resp)


@FAST
@given(body=st.dictionaries(st.sampled_from(SERVICE_FIELDS), json_values, max_size=5))
def test_arbitrary_service_bodies(api: Api, body: dict[str, Any]) -> None:
    resp = api.post("/services", body)
    assert_clean(resp)
    assert resp.status_code in (200, 400), describe(resp)
    if resp.status_code == 200:
        created = resp.json()
        created = created[0] if isinstance(created, list) else created
        assert api.delete(f"/services/{created['id']}").status_code == 200


@FAST
@given(field=st.sampled_from(ENDPOINT_FIELDS), value=json_values)
def test_arbitrary_endpoint_field_values(api: Api, field: str, value: Any) -> None:
    sid = api.list("/services", {"filter": "name:Fuzz"})
    if not sid:
        sid = [make_service(api, "Fuzz")]
    service_id = sid[0]["id"]
    body = endpoint_body("Fuzzed", "/fuzzed")
    body[field] = value
    resp = api.post(f"/services/{service_id}/endpoints", body)
    assert_clean(resp)
    assert resp.status_code in (200, 400), describe(resp)
    if resp.status_code == 200:
        created = resp.json()
        created = created[0] if isinstance(created, list) else created
        assert api.delete(f"/services/{service_id}/endpoints/{created['id']}").status_code == 200


@FAST
@given(
    segments=st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789-_.~%", min_size=1, max_size=12),
        min_size=1,
        max_size=6,
    ),
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS"]),
)
def test_arbitrary_paths_and_methods(http: httpx.Client, segments: list[str], method: str) -> None:
    path = BASE + "/" + "/".join(segments)
    resp = http.request(
        method,
        path,
        headers={"Authorization": f"Bearer {TOKEN_A}", "Content-Type": "application/json"},
        content=b"{}" if method in ("POST", "PUT", "PATCH") else None,
    )
    assert_clean(resp)


@pytest.fixture
def seeded(api: Api) -> Api:
    sid = make_service(api, "Weather", description="forecasts")["id"]
    api.create(f"/services/{sid}/endpoints", endpoint_body())
    api.create("/roles", {"name": "Partners"})
    member = api.create("/members", member_body("dev1"))
    api.create(f"/members/{member['id']}/applications", {"name": "App", "username": "dev1"})
    api.create("/packages", {"name": "P", "plans": [{"name": "Gold"}]})
    return api


PROPERTY_NAMES = ["name", "id", "description", "endpoints.name", "plans.name", "username", "domain", "x"]
filters = st.one_of(
    st.text(max_size=30),
    st.builds("{}:{}".format, st.sampled_from(PROPERTY_NAMES), st.text(max_size=10)),
)
sorts = st.one_of(
    st.text(max_size=30),
    st.builds("{}:{}".format, st.sampled_from(PROPERTY_NAMES), st.sampled_from(["asc", "desc", "up", ""])),
)


@FAST
@given(
    fields=st.text(max_size=30),
    filt=filters,
    sort=sorts,
    limit=st.text(max_size=6),
    offset=st.text(max_size=6),
)
@pytest.mark.parametrize(
    "path", ["/services", "/packages", "/members", "/applications", "/roles", "/domains"]
)
def test_arbitrary_query_parameters(
    seeded: Api, path: str, fields: str, filt: str, sort: str, limit: str, offset: str
) -> None:
    params = {"fields": fields, "filter": filt, "sort": sort, "limit": limit, "offset": offset}
    if path in ("/packages", "/applications"):
        params["search"] = filt
    resp = seeded.get(path, params)
    assert_clean(resp)
    assert resp.status_code in (200, 400), describe(resp)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PATCH", "/services"),
        ("DELETE", "/services"),
        ("PUT", "/roles"),
        ("POST", "/packageKeys"),
        ("POST", "/applications"),
        ("DELETE", "/domains"),
        ("TRACE", "/services"),
    ],
)
def test_unsupported_methods_are_clean(api: Api, method: str, path: str) -> None:
    resp = api.request(method, path, {} if method in ("PATCH", "PUT", "POST") else None)
    assert resp.status_code in (404, 405), describe(resp)
    assert_clean(resp)


@pytest.mark.parametrize("path", ["/nothing", "/services/x/y/z/w", "/v4/services", "/../../etc/passwd"])
def test_unknown_paths_are_clean_404(api: Api, path: str) -> None:
    resp = api.get(path)
    assert resp.status_code == 404, describe(resp)
    assert_clean(resp)


def test_unknown_path_outside_the_api(http: httpx.Client) -> None:
    resp = http.get("/definitely/not/here")
    assert resp.status_code == 404, describe(resp)
    assert_clean(resp)


def test_huge_body_is_refused_cleanly(api: Api) -> None:
    huge = json.dumps({"name": "Huge", "description": "x" * (16 * 1024 * 1024)}).encode()
    resp = raw_post(api.http, "/services", huge)
    assert resp.status_code in (400, 413), describe(resp)
    assert_clean(resp)
    assert api.list("/services", {"filter": "name:Huge"}) == []


def test_deeply_nested_body_is_clean(api: Api) -> None:
    content = '{"name": "Deep", "description": ' + "[" * 5000 + "]" * 5000 + "}"
    resp = raw_post(api.http, "/services", content.encode())
    assert resp.status_code == 400, describe(resp)
    assert_clean(resp)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_other_content_types_are_clean(http: httpx.Client, content_type: str) -> None:
    resp = raw_post(http, "/services", b"name=Weather", content_type)
    assert resp.status_code in (400, 415), describe(resp)
    assert_clean(resp)


def test_wrong_types_in_nested_objects_name_the_path(api: Api) -> None:
    sid = make_service(api, "Typed")["id"]
    resp = api.post(
        f"/services/{sid}/endpoints", endpoint_body(cors={"maxAge": "sixty"})
    )
    assert resp.status_code == 400, describe(resp)
    assert any("maxAge" in item["property"] for item in resp.json())


@pytest.mark.parametrize(
    "path",
    ["/%0A/0", "/services/%0A", "/services/%0A/endpoints", "/roles/%0A", "/%00", "/services/%20"],
)
def test_odd_path_segments_are_a_clean_404(api: Api, path: str) -> None:
    make_service(api, "Present")
    resp = api.get(path)
    assert resp.status_code == 404, describe(resp)
    assert_clean(resp)


@pytest.mark.parametrize(
    "params",
    [
        {"filter": "name:' OR 1=1 --"},
        {"filter": "name:%"},
        {"filter": "name:_"},
        {"filter": 'name:") OR ("1"="1'},
        {"sort": "name; DROP TABLE documents"},
        {"fields": "id,name) FROM x; --"},
        {"filter": "name\":x"},
    ],
)
def test_query_values_are_data_not_code(api: Api, params: dict[str, str]) -> None:
    make_service(api, "Weather")
    make_service(api, "Maps")
    resp = api.get("/services", params)
    assert_clean(resp)
    if resp.status_code == 200 and "filter" in params:
        assert resp.json() == [], describe(resp)
    assert sorted(s["name"] for s in api.list("/services")) == ["Maps", "Weather"]


# --- over-long request targets: 414, in-process and under a real uvicorn ----------------------

MAX_TARGET = 16 * 1024  # the server's limit on path + query


def _target(size: int) -> str:
    """``/v3/rest/services?x=...`` of exactly ``size`` bytes."""
    head = BASE + "/services?x="
    return head + "a" * (size - len(head))


def assert_414(status: int, headers: dict[str, str], body: bytes) -> None:
    assert status == 414, (status, body[:200])
    assert headers.get("content-type", "").startswith("application/json"), headers
    error = json.loads(body)
    assert error["errorCode"] == 414 and "URI" in error["errorMessage"], error
    assert headers.get("x-svc-error-code") == "ERR_414_REQUEST_URI_TOO_LONG", headers


def test_long_request_target_is_414(http: httpx.Client) -> None:
    auth = {"Authorization": f"Bearer {TOKEN_A}"}
    assert http.get(_target(MAX_TARGET), headers=auth).status_code == 200
    resp = http.get(_target(MAX_TARGET + 1), headers=auth)
    assert_414(resp.status_code, dict(resp.headers), resp.content)
    resp = http.get("/" + "p" * 40_000)  # outside the API too, before any routing
    assert_414(resp.status_code, dict(resp.headers), resp.content)


def raw_get(base: str, target: str, token: str) -> tuple[int, dict[str, str], bytes]:
    """One GET over a plain socket (httpx refuses URLs over 64 KiB); status, headers, body."""
    port = int(base.rsplit(":", 1)[1])
    request = (f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
               "Connection: close\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):  # a reset connection raises here
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


def test_long_request_target_is_414_under_uvicorn(server_config: Any, uvicorn_runner: Any) -> None:
    token = next(iter(server_config.tokens))
    with uvicorn_runner(server_config) as base:
        status, _, body = raw_get(base, _target(MAX_TARGET), token)
        assert status == 200 and json.loads(body) == [], body[:200]
        for size in (MAX_TARGET + 1, 70_000, 1024 * 1024, 4 * 1024 * 1024):
            assert_414(*raw_get(base, _target(size), token))
