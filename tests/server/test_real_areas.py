"""What real areas hold and answer (SUPPLEMENT §10.10), in the ``mashery`` dialect; the
``spec`` dialect keeps sections 1-9 (each test of a difference checks both).

One server per dialect for the whole module: every test writes under names and paths of
its own (:func:`fresh`), since endpoint routes are unique in the whole area.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from real_area import BACKEND, seed_real_area
from spec_helpers import (
    AREA_A,
    CLIENT_KEY,
    CLIENT_SECRET,
    TOKEN_A,
    USER,
    Api,
    assert_deleted,
    describe,
    endpoint_body,
    one,
    serve,
    with_domains,
)

DIALECTS = ("spec", "mashery")
_COUNTER = itertools.count(1)


def fresh(prefix: str = "n") -> str:
    return f"{prefix}{next(_COUNTER)}"


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Api]]:
    with ExitStack() as stack:
        out = {}
        for dialect in DIALECTS:
            http = stack.enter_context(serve(tmp_path_factory.mktemp(dialect), dialect=dialect))
            out[dialect] = Api(http, TOKEN_A)
            with_domains(out[dialect])
        yield out


@pytest.fixture(params=DIALECTS)
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def api(servers: dict[str, Api], dialect: str) -> Api:
    return servers[dialect]


@pytest.fixture
def m(servers: dict[str, Api]) -> Api:
    return servers["mashery"]


@pytest.fixture
def s(servers: dict[str, Api]) -> Api:
    return servers["spec"]


def service(api: Api, **body: Any) -> str:
    return str(one(api.post("/services", {"name": fresh("Service"), **body}))["id"])


def endpoint(api: Api, sid: str, **body: Any) -> dict[str, Any]:
    """An endpoint on a path of its own (unless ``path`` is given), read with every field."""
    body.setdefault("path", "/" + fresh("p"))
    return one(api.post(f"/services/{sid}/endpoints", endpoint_body(name=fresh("E"), **body), {"fields": "*"}))


def errors_of(resp: httpx.Response) -> list[dict[str, Any]]:
    """The validation items of a 400, whatever the dialect's error body."""
    assert resp.status_code == 400, describe(resp)
    body = resp.json()
    items = body["errors"] if isinstance(body, dict) else body
    assert isinstance(items, list) and items, describe(resp)
    return items


# 10.10.5 headers and bodies ------------------------------------------------------------------


def _calls(api: Api) -> dict[str, httpx.Response]:
    sid = service(api)
    ep = endpoint(api, sid)
    return {
        "list": api.get("/services"),
        "list-fields": api.get("/services", {"fields": "id,endpoints.name"}),
        "fetch": api.get(f"/services/{sid}"),
        "nested list": api.get(f"/services/{sid}/endpoints"),
        "create": api.post("/services", {"name": fresh("Service")}),
        "update": api.put(f"/services/{sid}", {"description": "d"}),
        "invalid": api.post("/services", {}),
        "not found": api.get("/services/nosuchservice"),
        "not allowed": api.request("PATCH", "/services"),
        "unauthorized": Api(api.http, "no-such-token").get("/services"),
        "too long": api.get("/services", {"filter": "name:" + "x" * 17000}),
        "head": api.head("/services"),
        "delete": api.delete(f"/services/{sid}/endpoints/{ep['id']}"),
    }


def test_mashery_answers_carry_the_responder_and_a_charset(m: Api) -> None:
    for what, resp in _calls(m).items():
        assert resp.headers.get("X-Mashery-Responder"), (what, describe(resp))
        if resp.content or what == "head":
            assert resp.headers["Content-Type"] == "application/json;charset=UTF-8", (what, describe(resp))


def test_spec_answers_keep_plain_json(s: Api) -> None:
    for what, resp in _calls(s).items():
        assert "X-Mashery-Responder" not in resp.headers, what
        if resp.content:
            assert resp.headers["Content-Type"] == "application/json", (what, describe(resp))


def test_delete_answers_an_empty_body(api: Api) -> None:
    sid = service(api)
    ep = endpoint(api, sid)
    assert_deleted(api.delete(f"/services/{sid}/endpoints/{ep['id']}"))
    assert_deleted(api.delete(f"/services/{sid}"))


def test_mashery_validation_errors_carry_the_status_as_code(m: Api) -> None:
    resp = m.post("/services", {"name": 7})
    body = resp.json()
    assert resp.status_code == 400 and body["errorCode"] == "400", describe(resp)
    assert body["errors"] == [{"property": "name", "message": "must be a string"}]
    assert body["errorMessage"]
    missing = m.get("/services/nosuchservice").json()
    assert missing["errorCode"] == "ERR_404_NOT_FOUND"  # not a validation failure


def test_spec_validation_errors_stay_an_array(s: Api) -> None:
    assert s.post("/services", {"name": 7}).json() == [{"property": "name", "message": "must be a string"}]


# 10.10.7 tokens --------------------------------------------------------------------------------


def _basic(key: str, secret: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{key}:{secret}".encode()).decode()}


def _token(api: Api, form: dict[str, str], headers: dict[str, str]) -> httpx.Response:
    return api.http.post("/v3/token", data=form, headers=headers)


PASSWORD = {"grant_type": "password", "username": USER[0], "password": USER[1], "scope": AREA_A}


def test_mashery_token_errors(m: Api) -> None:
    good = _token(m, PASSWORD, _basic(CLIENT_KEY, CLIENT_SECRET))
    assert good.status_code == 200 and good.headers.get("X-Mashery-Responder"), describe(good)
    assert good.headers["Content-Type"] == "application/json;charset=UTF-8"
    for headers in (_basic(CLIENT_KEY, "wrong"), _basic("wrong", CLIENT_SECRET), {}):
        bad = _token(m, PASSWORD, headers)
        assert bad.status_code == 403, describe(bad)
        assert bad.headers["X-Mashery-Error-Code"] == "ERR_403_DEVELOPER_INACTIVE"
        assert bad.headers.get("X-Mashery-Responder")
    for refresh in ("no-such-refresh-token", ""):
        stale = _token(m, {"grant_type": "refresh_token", "refresh_token": refresh}, _basic(CLIENT_KEY, CLIENT_SECRET))
        assert stale.status_code == 400 and stale.json()["error"] == "invalid_grant", describe(stale)
        assert stale.headers["X-Mashery-Error-Code"] == "ERR_400_BAD_REQUEST"
    used = good.json()["refresh_token"]
    renewed = _token(m, {"grant_type": "refresh_token", "refresh_token": used}, _basic(CLIENT_KEY, CLIENT_SECRET))
    assert renewed.status_code == 200
    again = _token(m, {"grant_type": "refresh_token", "refresh_token": used}, _basic(CLIENT_KEY, CLIENT_SECRET))
    assert again.status_code == 400 and again.headers["X-Mashery-Error-Code"] == "ERR_400_BAD_REQUEST"


def test_spec_bad_client_stays_401(s: Api) -> None:
    bad = _token(s, PASSWORD, _basic(CLIENT_KEY, "wrong"))
    assert bad.status_code == 401 and bad.json() == {"error": "invalid_client"}
    assert not any(h.lower().startswith("x-mashery") for h in bad.headers)


# 10.10.3 unset values ---------------------------------------------------------------------------


def test_cors_never_set_reads_null_in_mashery(m: Api) -> None:
    sid = service(m)
    ep = endpoint(m, sid)
    assert ep["cors"] is None
    path = f"/services/{sid}/endpoints/{ep['id']}"
    assert one(m.get(path, {"fields": "cors"})) == {"cors": None}
    assert m.get(f"{path}/cors").status_code == 404
    assert m.delete(f"{path}/cors").status_code == 404
    cors = one(m.put(f"{path}/cors", {"maxAge": 60}))
    assert cors["maxAge"] == 60 and cors["allDomainsEnabled"] is True  # the rest: §3's defaults
    assert one(m.get(path, {"fields": "cors.maxAge"})) == {"cors": {"maxAge": 60}}
    assert_deleted(m.delete(f"{path}/cors"))
    assert one(m.get(path, {"fields": "cors"}))["cors"] is None
    written = endpoint(m, sid, cors={"cookiesAllowed": True})
    assert written["cors"]["cookiesAllowed"] is True and written["cors"]["maxAge"] == 0
    cleared = one(m.put(path, {"cors": {"maxAge": 5}}, {"fields": "cors"}))["cors"]
    assert cleared["maxAge"] == 5
    assert one(m.put(path, {"cors": None}, {"fields": "cors"}))["cors"] is None


def test_cors_always_exists_in_spec(s: Api) -> None:
    sid = service(s)
    ep = endpoint(s, sid)
    assert ep["cors"]["allDomainsEnabled"] is True and ep["cors"]["maxAge"] == 0
    assert s.get(f"/services/{sid}/endpoints/{ep['id']}/cors").status_code == 200


UNSET_ENDPOINT = {  # field -> (mashery reads, spec reads) for an endpoint created without it
    "systemDomainCredentialKey": (None, ""),
    "systemDomainCredentialSecret": (None, ""),
    "headersToExcludeFromIncomingCall": (None, []),
    "customRequestAuthenticationAdapter": (None, None),
    "scheduledMaintenanceEvent": ("", None),
}


def test_unset_endpoint_fields(api: Api, dialect: str) -> None:
    sid = service(api)
    ep = endpoint(api, sid)
    expected = {name: reads[0 if dialect == "mashery" else 1] for name, reads in UNSET_ENDPOINT.items()}
    assert {name: ep[name] for name in UNSET_ENDPOINT} == expected
    fetched = one(api.get(f"/services/{sid}/endpoints/{ep['id']}", {"fields": ",".join(UNSET_ENDPOINT)}))
    assert fetched == expected


@pytest.mark.parametrize(("name", "written", "reads"), [
    ("systemDomainCredentialKey", "", None),
    ("systemDomainCredentialKey", None, None),
    ("systemDomainCredentialKey", "key", "key"),
    ("systemDomainCredentialSecret", "", None),
    ("headersToExcludeFromIncomingCall", None, None),
    ("headersToExcludeFromIncomingCall", [], None),
    ("headersToExcludeFromIncomingCall", [""], None),
    ("headersToExcludeFromIncomingCall", ["X-Debug", "Cookie"], ["X-Debug", "Cookie"]),
    ("customRequestAuthenticationAdapter", None, None),
])
def test_mashery_spellings_of_unset(m: Api, name: str, written: Any, reads: Any) -> None:
    sid = service(m)
    assert endpoint(m, sid, **{name: written})[name] == reads
    ep = endpoint(m, sid, **{name: ["X-A"] if name == "headersToExcludeFromIncomingCall" else "x"})
    updated = one(m.put(f"/services/{sid}/endpoints/{ep['id']}", {name: written}, {"fields": name}))
    assert updated == {name: reads}


def test_spec_keeps_its_spellings(s: Api) -> None:
    sid = service(s)
    assert endpoint(s, sid, headersToExcludeFromIncomingCall=[""])["headersToExcludeFromIncomingCall"] == [""]
    assert endpoint(s, sid, systemDomainCredentialKey="")["systemDomainCredentialKey"] == ""
    for name in ("headersToExcludeFromIncomingCall", "systemDomainCredentialSecret"):
        body = endpoint_body(name=fresh("E"), path="/" + fresh("p"), **{name: None})
        assert any(e["property"] == name for e in errors_of(s.post(f"/services/{sid}/endpoints", body)))


def test_maintenance_event_reads_empty_when_none_in_mashery(m: Api) -> None:
    sid = service(m)
    ep = endpoint(m, sid)
    path = f"/services/{sid}/endpoints/{ep['id']}"
    event = one(m.post("/scheduledMaintenanceEvents", {
        "name": fresh("Window"), "startDateTime": "2030-01-01T00:00:00Z", "endDateTime": "2030-01-02T00:00:00Z",
        "endpoints": [{"id": ep["id"]}]}))
    assert one(m.get(path, {"fields": "scheduledMaintenanceEvent.name"}))["scheduledMaintenanceEvent"] == {
        "name": event["name"]}
    assert one(m.put(path, {"scheduledMaintenanceEvent": ""}, {"fields": "scheduledMaintenanceEvent"})) == {
        "scheduledMaintenanceEvent": ""}
    assert one(m.get(f"/scheduledMaintenanceEvents/{event['id']}", {"fields": "endpoints"}))["endpoints"] == []


def test_method_samples(api: Api, dialect: str) -> None:
    sid = service(api)
    ep = endpoint(api, sid)
    base = f"/services/{sid}/endpoints/{ep['id']}/methods"
    fields = {"fields": "id,name,sampleJsonResponse,sampleXmlResponse"}
    unset = None if dialect == "mashery" else ""
    created = one(api.post(base, {"name": "get"}, fields))
    assert (created["sampleJsonResponse"], created["sampleXmlResponse"]) == (unset, unset)
    written = one(api.post(base, {"name": "put", "sampleJsonResponse": "{}", "sampleXmlResponse": "<a/>"}, fields))
    assert (written["sampleJsonResponse"], written["sampleXmlResponse"]) == ("{}", "<a/>")
    if dialect == "mashery":
        cleared = one(api.put(f"{base}/{written['id']}", {"sampleJsonResponse": None}, fields))
        assert cleared["sampleJsonResponse"] is None


def test_service_security_profile_and_roles(api: Api, dialect: str) -> None:
    sid = service(api)
    read = one(api.get(f"/services/{sid}", {"fields": "securityProfile,roles"}))
    assert read["securityProfile"] == {"oauth": None}
    assert read["roles"] == (None if dialect == "mashery" else [])


PACKAGE_INTEGERS = {"nearQuotaThreshold": 80, "keyLength": 24, "sharedSecretLength": 10}


def test_mashery_package_integers_may_be_null(m: Api) -> None:
    fields = {"fields": "id,plans," + ",".join(PACKAGE_INTEGERS)}
    plain = one(m.post("/packages", {"name": fresh("Package")}, fields))
    assert {k: plain[k] for k in PACKAGE_INTEGERS} == PACKAGE_INTEGERS
    nulls = dict.fromkeys(PACKAGE_INTEGERS)
    package = one(m.post("/packages", {"name": fresh("Package"), "plans": [{"name": "Gold"}], **nulls}, fields))
    assert {k: package[k] for k in PACKAGE_INTEGERS} == nulls
    assert one(m.put(f"/packages/{plain['id']}", nulls, fields))["keyLength"] is None
    member = one(m.post("/members", {"username": fresh("dev"), "email": "d@example.org", "displayName": "D",
                                     "externalId": fresh("x"), "passwdNew": "S3cret-pass!"}))
    app = one(m.post(f"/members/{member['id']}/applications", {"name": "App", "username": member["username"]}))
    key = one(m.post(f"/applications/{app['id']}/packageKeys",
                     {"package": {"id": package["id"]}, "plan": {"id": package["plans"][0]["id"]}}))
    assert (len(key["apikey"]), len(key["secret"])) == (24, 10)  # §3's lengths when unset


def test_spec_package_integers_are_not_null(s: Api) -> None:
    resp = s.post("/packages", {"name": fresh("Package"), "keyLength": None})
    assert [e["property"] for e in errors_of(resp)] == ["keyLength"]


# 10.10.1 routes --------------------------------------------------------------------------------

ROUTE = "Found an endpoint with method '{}', domain 'api.example.com' and path '{}' that belongs to someone else"


def test_mashery_routes_are_method_domain_path(m: Api) -> None:
    sid, other = service(m), service(m)
    path = "/" + fresh("shared")
    endpoint(m, sid, path=path, supportedHttpMethods=["get", "head"])
    endpoint(m, sid, path=path, supportedHttpMethods=["post"])
    endpoint(m, other, path=path, supportedHttpMethods=["put", "delete"])  # another service too
    body = endpoint_body(name=fresh("E"), path=path, supportedHttpMethods=["patch", "post"])
    for target in (sid, other):
        items = errors_of(m.post(f"/services/{target}/endpoints", body))
        assert items == [{"property": "requestPathAlias", "message": ROUTE.format("POST", path)}]
    moved = endpoint(m, other, supportedHttpMethods=["get"])
    resp = m.put(f"/services/{other}/endpoints/{moved['id']}", {"requestPathAlias": path})
    assert errors_of(resp) == [{"property": "requestPathAlias", "message": ROUTE.format("GET", path)}]
    in_one = {"name": fresh("Service"), "endpoints": [
        endpoint_body(name="A", path="/" + fresh("p"), supportedHttpMethods=["get"]),
        endpoint_body(name="B", path="/" + fresh("p"), supportedHttpMethods=["get"])]}
    in_one["endpoints"][1]["requestPathAlias"] = in_one["endpoints"][0]["requestPathAlias"]
    items = errors_of(m.post("/services", in_one))
    assert items == [{"property": "endpoints[1].requestPathAlias",
                      "message": ROUTE.format("GET", in_one["endpoints"][0]["requestPathAlias"])}]
    other_domain = endpoint(m, sid, path=path, host="www.example.com", supportedHttpMethods=["post"])
    assert other_domain["requestPathAlias"] == path


def test_mashery_routes_are_released_with_their_endpoint(m: Api) -> None:
    sid = service(m)
    path = "/" + fresh("p")
    ep = endpoint(m, sid, path=path, supportedHttpMethods=["get"])
    m.put(f"/services/{sid}/endpoints/{ep['id']}", {"supportedHttpMethods": ["post"]})
    assert endpoint(m, service(m), path=path, supportedHttpMethods=["get"])["requestPathAlias"] == path


def test_spec_routes_are_path_and_domain(s: Api) -> None:
    sid = service(s)
    path = "/" + fresh("p")
    endpoint(s, sid, path=path, supportedHttpMethods=["get"])
    body = endpoint_body(name=fresh("E"), path=path, supportedHttpMethods=["post"])
    assert "duplicate" in errors_of(s.post(f"/services/{sid}/endpoints", body))[0]["message"]
    assert "duplicate" in errors_of(s.post(f"/services/{service(s)}/endpoints", body))[0]["message"]


# 10.10.2 ports ---------------------------------------------------------------------------------


def test_addresses_may_carry_a_port(api: Api) -> None:
    sid = service(api)
    ep = endpoint(api, sid, host="api.example.com:8443", backend=BACKEND)
    assert ep["systemDomains"] == [{"address": BACKEND}]
    assert ep["publicDomains"] == [{"address": "api.example.com:8443"}]
    assert {"address": BACKEND} in api.get("/domains/system/hostnames").json()
    assert {"address": "api.example.com:8443"} in api.get("/domains/public/hostnames").json()
    again = one(api.put(f"/services/{sid}/endpoints/{ep['id']}", {"systemDomains": [{"address": "example.net:80"}]},
                        {"fields": "systemDomains"}))
    assert again == {"systemDomains": [{"address": "example.net:80"}]}


@pytest.mark.parametrize(("backend", "message"), [
    ("backend.example.org:443", "not under an active domain"),
    ("backend.example.net:0", "port"),
    ("backend.example.net:99999", "port"),
    ("backend.example.net:https", "port"),
])
def test_the_domain_rules_apply_to_the_host(api: Api, backend: str, message: str) -> None:
    body = endpoint_body(name=fresh("E"), path="/" + fresh("p"), backend=backend)
    items = errors_of(api.post(f"/services/{service(api)}/endpoints", body))
    assert items[0]["property"] == "systemDomains[0].address" and message in items[0]["message"], items


# the seeded real-looking area ----------------------------------------------------------------


def test_a_real_looking_area_can_be_seeded(api: Api, dialect: str) -> None:
    area = seed_real_area(api, dialect, name=fresh("Real"), path="/" + fresh("forecast"))
    eps = one(api.get(f"/services/{area.service_id}", {"fields": "endpoints.name,endpoints.requestPathAlias,"
                                                      "endpoints.cors,endpoints.systemDomains"}))["endpoints"]
    by_name = {e["name"]: e for e in eps}
    assert set(by_name) == set(area.endpoint_ids)
    paths = {e["requestPathAlias"] for e in eps}
    assert len(paths) == (1 if dialect == "mashery" else 3)
    assert all(e["systemDomains"] == [{"address": BACKEND}] for e in eps)
    assert (by_name["Forecast read"]["cors"] is None) == (dialect == "mashery")
    assert by_name["Forecast write"]["cors"]["maxAge"] == 300
    sets = api.get(f"/services/{area.service_id}/errorSets", {"fields": "name,type"}).json()
    assert sets == [{"name": "Default", "type": "text/xml"}]
