"""Endpoints and what hangs under them: cors, cache, processor, system-domain authentication,
methods, response filters, the error-set reference (spec "Endpoint", SUPPLEMENT §2-§4)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from spec_helpers import (
    ID24_ALPHABET,
    UUID_RE,
    Api,
    assert_deleted,
    assert_duplicate,
    assert_error,
    assert_invalid,
    endpoint_body,
    make_endpoint,
    make_service,
    revision,
)

CORS_DEFAULT = {
    "allDomainsEnabled": True,
    "subDomainMatchingAllowed": False,
    "maxAge": 0,
    "cookiesAllowed": False,
    "domainsAllowed": [],
    "headersAllowed": [],
    "headersExposed": [],
}
CACHE_DEFAULT = {
    "clientSurrogateControlEnabled": False,
    "contentCacheKeyHeaders": [],
    "cacheTtlOverride": 0,
    "includeApiKeyInContentCacheKey": False,
    "respondFromStaleCacheEnabled": False,
    "responseCacheControlEnabled": False,
    "varyHeaderEnabled": False,
}
PROCESSOR_DEFAULT = {
    "adapter": "",
    "preProcessEnabled": False,
    "postProcessEnabled": False,
    "preInputs": {},
    "postInputs": {},
}
ENDPOINT_DEFAULTS: dict[str, Any] = {
    "connectionTimeoutForSystemDomainRequest": 2,
    "connectionTimeoutForSystemDomainResponse": 5,
    "requestProtocol": "rest",
    "outboundTransportProtocol": "https",
    "numberOfHttpRedirectsToFollow": 0,
    "requestAuthenticationType": "apiKey",
    "apiKeyValueLocations": ["request-parameters"],
    "apiKeyValueLocationKey": "api_key",
    "apiMethodDetectionLocations": ["request-path"],
    "supportedHttpMethods": ["get"],
    "forwardedHeaders": [],
    "returnedHeaders": [],
    "allowMissingApiKey": False,
    "cookiesDuringHttpRedirectsEnabled": False,
    "dropApiKeyFromIncomingCall": False,
    "forceGzipOfBackendCall": False,
    "gzipPassthroughSupportEnabled": False,
    "highSecurity": False,
    "hostPassthroughIncludedInBackendCallHeader": False,
    "inboundSslRequired": False,
    "useSystemDomainCredentials": False,
    "apiMethodDetectionKey": "",
    "jsonpCallbackParameter": "",
    "jsonpCallbackParameterValue": "",
    "outboundRequestTargetPath": "",
    "outboundRequestTargetQueryParameters": "",
    "systemDomainCredentialKey": "",
    "headersToExcludeFromIncomingCall": [],
    "oauthGrantTypes": [],
    "cors": CORS_DEFAULT,
    "cache": CACHE_DEFAULT,
    "processor": PROCESSOR_DEFAULT,
    "systemDomainAuthentication": None,
    "scheduledMaintenanceEvent": None,
    "customRequestAuthenticationAdapter": None,
}
ENDPOINT_EXP = [
    "trafficManagerDomain",
    "requestPathAlias",
    "publicDomains",
    "systemDomains",
    "cors",
    "cache",
    "supportedHttpMethods",
    "systemDomainCredentialSecret",
]

# the shared `api` fixture (conftest.py) declares the test domains first
WITH_DOMAINS = True


@pytest.fixture
def sid(api: Api) -> str:
    value: str = make_service(api)["id"]
    return value


@pytest.fixture
def eid(api: Api, sid: str) -> str:
    value: str = make_endpoint(api, sid)["id"]
    return value


def addresses(domains: Any) -> list[str]:
    return sorted(d["address"] if isinstance(d, dict) else d for d in domains)


def test_endpoint_crud(api: Api, sid: str) -> None:
    created = make_endpoint(api, sid)
    eid = created["id"]
    assert len(eid) == 24 and set(eid) <= ID24_ALPHABET
    assert created["name"] == "Forecast"
    for key in ENDPOINT_EXP:
        assert key not in created, key
    got = api.fetch(
        f"/services/{sid}/endpoints/{eid}",
        {"fields": "id,name,requestPathAlias,trafficManagerDomain,publicDomains,systemDomains"},
    )
    assert got["requestPathAlias"] == "/forecast"
    assert got["trafficManagerDomain"] == "api.example.com"
    assert addresses(got["publicDomains"]) == ["api.example.com"]
    assert addresses(got["systemDomains"]) == ["backend.example.net"]
    assert [e["id"] for e in api.list(f"/services/{sid}/endpoints")] == [eid]
    updated = api.update(f"/services/{sid}/endpoints/{eid}", {"requestPathAlias": "/v2/forecast"})
    assert updated["id"] == eid
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "requestPathAlias,name"})
    assert got == {"requestPathAlias": "/v2/forecast", "name": "Forecast"}
    assert_deleted(api.delete(f"/services/{sid}/endpoints/{eid}"))
    assert_error(api.get(f"/services/{sid}/endpoints/{eid}"), 404)
    assert_error(api.delete(f"/services/{sid}/endpoints/{eid}"), 404)


def test_endpoint_under_unknown_service(api: Api) -> None:
    resp = api.post("/services/aaaaaaaaaaaaaaaaaaaaaaaa/endpoints", endpoint_body())
    assert_error(resp, 404)


def test_endpoint_of_another_service_is_404(api: Api, sid: str, eid: str) -> None:
    other = make_service(api, "Other")["id"]
    assert_error(api.get(f"/services/{other}/endpoints/{eid}"), 404)


@pytest.mark.parametrize("field", ["name", "requestPathAlias", "trafficManagerDomain"])
def test_required_endpoint_fields(api: Api, sid: str, field: str) -> None:
    body = endpoint_body()
    del body[field]
    assert_invalid(api.post(f"/services/{sid}/endpoints", body), field)
    assert api.list(f"/services/{sid}/endpoints") == []


def test_required_fields_are_optional_on_update(api: Api, sid: str, eid: str) -> None:
    api.update(f"/services/{sid}/endpoints/{eid}", {"inboundSslRequired": True})
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "name,requestPathAlias"})
    assert got == {"name": "Forecast", "requestPathAlias": "/forecast"}


def test_all_missing_required_fields_are_reported(api: Api, sid: str) -> None:
    items = assert_invalid(api.post(f"/services/{sid}/endpoints", {}))
    named = " ".join(item["property"] for item in items)
    for field in ("name", "requestPathAlias", "trafficManagerDomain"):
        assert field in named


def test_endpoint_defaults(api: Api, sid: str, eid: str) -> None:
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": ",".join(ENDPOINT_DEFAULTS)})
    for key, value in ENDPOINT_DEFAULTS.items():
        assert key in got, key
        if isinstance(value, list):
            actual = got[key]
            if isinstance(actual, str):  # SUPPLEMENT §9: a one-value enum array may be a string
                actual = [actual]
            assert sorted(actual) == sorted(value), key
        else:
            assert got[key] == value, key


def test_endpoint_wildcard_fields_include_exp(api: Api, sid: str, eid: str) -> None:
    svc = api.fetch(f"/services/{sid}", {"fields": "id,endpoints.*"})
    endpoint = svc["endpoints"][0]
    for key in ("requestPathAlias", "trafficManagerDomain", "cors", "cache", "processor"):
        assert key in endpoint, key
    assert endpoint["cors"] == CORS_DEFAULT


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("requestProtocol", "graphql"),
        ("outboundTransportProtocol", "ftp"),
        ("connectionTimeoutForSystemDomainRequest", 3),
        ("connectionTimeoutForSystemDomainResponse", 1000),
        ("connectionTimeoutForSystemDomainRequest", "2"),
        ("supportedHttpMethods", ["get", "fetch"]),
        ("apiKeyValueLocations", ["request-cookie"]),
        ("apiMethodDetectionLocations", ["nowhere"]),
        ("forwardedHeaders", ["svc-host", "x-forwarded-for"]),
        ("returnedHeaders", ["svc-host"]),
        ("oauthGrantTypes", ["magic"]),
        ("allowMissingApiKey", "true"),
        ("numberOfHttpRedirectsToFollow", "two"),
        ("headersToExcludeFromIncomingCall", "X-One"),
        ("name", 5),
    ],
)
def test_endpoint_enum_and_type_validation(
    api: Api, sid: str, eid: str, field: str, value: object
) -> None:
    body = endpoint_body("New", "/new")
    body[field] = value
    assert_invalid(api.post(f"/services/{sid}/endpoints", body), field)
    assert_invalid(api.put(f"/services/{sid}/endpoints/{eid}", {field: value}), field)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("connectionTimeoutForSystemDomainRequest", 60),
        ("connectionTimeoutForSystemDomainResponse", 1200),
        ("requestProtocol", "json-rpc"),
        ("outboundTransportProtocol", "use-inbound"),
        ("supportedHttpMethods", ["get", "post", "put", "delete", "head", "options", "patch"]),
        ("forwardedHeaders", ["svc-host", "svc-message-id", "svc-service-id"]),
        ("returnedHeaders", ["svc-message-id", "svc-responder"]),
        ("apiKeyValueLocations", ["request-header", "request-body"]),
    ],
)
def test_endpoint_enum_values_accepted(
    api: Api, sid: str, eid: str, field: str, value: object
) -> None:
    api.update(f"/services/{sid}/endpoints/{eid}", {field: value})
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": field})[field]
    if isinstance(value, list):
        assert sorted([got] if isinstance(got, str) else got) == sorted(value)
    else:
        assert got == value


def test_oauth_forbids_api_key_locations(api: Api, sid: str) -> None:
    body = endpoint_body(
        requestAuthenticationType="oauth",
        apiKeyValueLocations=["request-header"],
        oauthGrantTypes=["client-credentials"],
    )
    assert_invalid(api.post(f"/services/{sid}/endpoints", body), "apiKeyValueLocations")


def test_api_key_forbids_oauth_grant_types(api: Api, sid: str) -> None:
    body = endpoint_body(requestAuthenticationType="apiKey", oauthGrantTypes=["password"])
    assert_invalid(api.post(f"/services/{sid}/endpoints", body), "oauthGrantTypes")


def test_oauth_endpoint_accepted(api: Api, sid: str) -> None:
    body = endpoint_body(
        requestAuthenticationType="oauth", oauthGrantTypes=["client-credentials", "password"]
    )
    eid = api.create(f"/services/{sid}/endpoints", body)["id"]
    got = api.fetch(
        f"/services/{sid}/endpoints/{eid}", {"fields": "requestAuthenticationType,oauthGrantTypes"}
    )
    assert got["requestAuthenticationType"] == "oauth"
    assert sorted(got["oauthGrantTypes"]) == ["client-credentials", "password"]


def test_duplicate_endpoint_name_in_service(api: Api, sid: str, eid: str) -> None:
    assert_duplicate(api.post(f"/services/{sid}/endpoints", endpoint_body("Forecast", "/other")))
    # the same name in another service is fine
    other = make_service(api, "Other")["id"]
    make_endpoint(api, other, name="Forecast", path="/elsewhere")


def test_duplicate_address_across_the_area(api: Api, sid: str, eid: str) -> None:
    other = make_service(api, "Other")["id"]
    resp = api.post(f"/services/{other}/endpoints", endpoint_body("Clash", "/forecast"))
    assert_duplicate(resp)
    # the same path under another public domain is a different address
    api.create("/domains", {"domain": "example.org"})
    make_endpoint(api, other, name="Fine", path="/forecast", host="api.example.org")


def test_duplicate_address_on_update(api: Api, sid: str, eid: str) -> None:
    second = make_endpoint(api, sid, name="Second", path="/second")["id"]
    resp = api.put(f"/services/{sid}/endpoints/{second}", {"requestPathAlias": "/forecast"})
    assert_duplicate(resp)


def test_domains_accept_strings_and_objects(api: Api, sid: str) -> None:
    body = endpoint_body(publicDomains=["api.example.com"], systemDomains=["backend.example.net"])
    eid = api.create(f"/services/{sid}/endpoints", body)["id"]
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "publicDomains,systemDomains"})
    assert addresses(got["publicDomains"]) == ["api.example.com"]


def test_secret_field_round_trips_when_asked(api: Api, sid: str) -> None:
    body = endpoint_body(systemDomainCredentialKey="k", systemDomainCredentialSecret="s3cr3t")
    created = api.create(f"/services/{sid}/endpoints", body)
    assert "s3cr3t" not in str(created)  # Exp: not in the default rendering
    got = api.fetch(
        f"/services/{sid}/endpoints/{created['id']}", {"fields": "systemDomainCredentialSecret"}
    )
    assert got["systemDomainCredentialSecret"] == "s3cr3t"


# cors ------------------------------------------------------------------------------------


def test_cors_singleton_semantics(api: Api, sid: str, eid: str) -> None:
    path = f"/services/{sid}/endpoints/{eid}/cors"
    assert api.fetch(path) == CORS_DEFAULT
    set_all = api.create(
        path,
        {"allDomainsEnabled": False, "domainsAllowed": ["https://app.example.com"], "maxAge": 60},
    )
    assert set_all["allDomainsEnabled"] is False
    assert set_all["maxAge"] == 60
    changed = api.update(path, {"cookiesAllowed": True})
    assert changed["cookiesAllowed"] is True
    assert changed["maxAge"] == 60  # PUT keeps fields not sent
    assert changed["domainsAllowed"] == ["https://app.example.com"]
    reset = api.create(path, {"maxAge": 5})  # POST sets the whole object
    assert reset == {**CORS_DEFAULT, "maxAge": 5}
    assert_deleted(api.delete(path))
    assert api.fetch(path) == CORS_DEFAULT
    assert api.fetch(path, {"indent": "true"}) == CORS_DEFAULT


def test_cors_visible_on_endpoint(api: Api, sid: str, eid: str) -> None:
    api.update(f"/services/{sid}/endpoints/{eid}/cors", {"headersExposed": ["X-Trace"]})
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "cors"})
    assert got["cors"]["headersExposed"] == ["X-Trace"]


@pytest.mark.parametrize(
    ("field", "value"), [("maxAge", "long"), ("allDomainsEnabled", "no"), ("domainsAllowed", "x")]
)
def test_cors_validation(api: Api, sid: str, eid: str, field: str, value: object) -> None:
    resp = api.put(f"/services/{sid}/endpoints/{eid}/cors", {field: value})
    assert_invalid(resp, field)


def test_cors_of_unknown_endpoint_is_404(api: Api, sid: str) -> None:
    assert_error(api.get(f"/services/{sid}/endpoints/aaaaaaaaaaaaaaaaaaaaaaaa/cors"), 404)


# cache -----------------------------------------------------------------------------------


def test_cache_singleton_semantics(api: Api, sid: str, eid: str) -> None:
    path = f"/services/{sid}/endpoints/{eid}/cache"
    assert api.fetch(path) == CACHE_DEFAULT
    created = api.create(path, {"cacheTtlOverride": 120, "contentCacheKeyHeaders": ["accept"]})
    assert created["cacheTtlOverride"] == 120
    assert created["contentCacheKeyHeaders"] == ["accept"]
    changed = api.update(path, {"varyHeaderEnabled": True})
    assert changed["cacheTtlOverride"] == 120
    assert changed["varyHeaderEnabled"] is True
    assert api.create(path, {"varyHeaderEnabled": True}) == {**CACHE_DEFAULT, "varyHeaderEnabled": True}
    assert_deleted(api.delete(path))
    assert api.fetch(path) == CACHE_DEFAULT


def test_cache_key_headers_enum(api: Api, sid: str, eid: str) -> None:
    path = f"/services/{sid}/endpoints/{eid}/cache"
    assert_invalid(api.put(path, {"contentCacheKeyHeaders": ["cookie"]}), "contentCacheKeyHeaders")
    api.update(path, {"contentCacheKeyHeaders": ["accept-charset", "accept-encoding", "accept-language"]})


# processor -------------------------------------------------------------------------------


def test_processor_fields(api: Api, sid: str, eid: str) -> None:
    path = f"/services/{sid}/endpoints/{eid}"
    assert api.fetch(path, {"fields": "processor"})["processor"] == PROCESSOR_DEFAULT
    processor = {
        "adapter": "com.example.Adapter",
        "preProcessEnabled": True,
        "postProcessEnabled": False,
        "preInputs": {"mode": "strict"},
        "postInputs": {},
    }
    api.update(path, {"processor": processor})
    assert api.fetch(path, {"fields": "processor"})["processor"] == processor


def test_processor_type_validation(api: Api, sid: str, eid: str) -> None:
    resp = api.put(f"/services/{sid}/endpoints/{eid}", {"processor": {"preProcessEnabled": "on"}})
    assert_invalid(resp, "preProcessEnabled")


# systemDomainAuthentication ----------------------------------------------------------------


def test_system_domain_authentication_password_is_write_only(
    api: Api, sid: str, eid: str
) -> None:
    path = f"/services/{sid}/endpoints/{eid}/systemDomainAuthentication"
    body = {"type": "httpBasic", "username": "backend-user", "password": "hunter2-secret"}
    created = api.create(path, body)
    assert created["type"] == "httpBasic"
    assert created["username"] == "backend-user"
    assert "password" not in created
    for resp in (
        api.get(path),
        api.get(path, {"fields": "type,username,password"}),
        api.get(f"/services/{sid}/endpoints/{eid}", {"fields": "systemDomainAuthentication"}),
        api.get(f"/services/{sid}/endpoints/{eid}", {"fields": "systemDomainAuthentication.*"}),
        api.get(f"/services/{sid}", {"fields": "endpoints.*"}),
        api.get("/services", {"fields": "endpoints.systemDomainAuthentication.password"}),
    ):
        assert resp.status_code == 200, resp.text
        assert "hunter2-secret" not in resp.text
    updated = api.update(path, {"username": "other-user"})
    assert updated["username"] == "other-user"
    assert_deleted(api.delete(path))
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "systemDomainAuthentication"})
    assert got["systemDomainAuthentication"] is None


def test_system_domain_authentication_type_enum(api: Api, sid: str, eid: str) -> None:
    path = f"/services/{sid}/endpoints/{eid}/systemDomainAuthentication"
    assert_invalid(api.post(path, {"type": "digest", "username": "u"}), "type")
    created = api.create(path, {"type": "clientSslCert", "certificate": "-----BEGIN CERT-----"})
    assert created["type"] == "clientSslCert"


# methods and response filters ----------------------------------------------------------------


def test_methods_crud(api: Api, sid: str, eid: str) -> None:
    path = f"/services/{sid}/endpoints/{eid}/methods"
    created = api.create(
        path, {"name": "getForecast", "sampleJsonResponse": '{"t": 1}', "sampleXmlResponse": "<t/>"}
    )
    mid = created["id"]
    assert re.match(UUID_RE, mid), mid
    assert created["name"] == "getForecast"
    assert "sampleJsonResponse" not in created  # Exp
    got = api.fetch(f"{path}/{mid}", {"fields": "id,name,sampleJsonResponse,sampleXmlResponse"})
    assert got["sampleJsonResponse"] == '{"t": 1}'
    assert got["sampleXmlResponse"] == "<t/>"
    assert api.update(f"{path}/{mid}", {"name": "getForecastV2"})["name"] == "getForecastV2"
    assert [m["name"] for m in api.list(path)] == ["getForecastV2"]
    assert_invalid(api.post(path, {"sampleJsonResponse": "{}"}), "name")
    assert_deleted(api.delete(f"{path}/{mid}"))
    assert api.list(path) == []
    assert_error(api.get(f"{path}/{mid}"), 404)


def test_response_filters_crud(api: Api, sid: str, eid: str) -> None:
    mid = api.create(f"/services/{sid}/endpoints/{eid}/methods", {"name": "m"})["id"]
    path = f"/services/{sid}/endpoints/{eid}/methods/{mid}/responseFilters"
    created = api.create(
        path,
        {"name": "hide", "notes": "n", "jsonFilterFields": "a,b", "xmlFilterFields": "/x"},
    )
    fid = created["id"]
    assert re.match(UUID_RE, fid), fid
    assert created["notes"] == "n"
    assert "jsonFilterFields" not in created  # Exp
    got = api.fetch(f"{path}/{fid}", {"fields": "id,jsonFilterFields,xmlFilterFields"})
    assert got["jsonFilterFields"] == "a,b"
    assert got["xmlFilterFields"] == "/x"
    assert api.update(f"{path}/{fid}", {"notes": "m"})["notes"] == "m"
    assert len(api.list(path)) == 1
    assert_deleted(api.delete(f"{path}/{fid}"))
    assert api.list(path) == []


def test_nested_fields_reach_methods(api: Api, sid: str, eid: str) -> None:
    mid = api.create(f"/services/{sid}/endpoints/{eid}/methods", {"name": "m"})["id"]
    api.create(
        f"/services/{sid}/endpoints/{eid}/methods/{mid}/responseFilters", {"name": "rf"}
    )
    svc = api.fetch(
        f"/services/{sid}",
        {"fields": "id,endpoints.id,endpoints.methods.*,endpoints.methods.responseFilters.*"},
    )
    method = svc["endpoints"][0]["methods"][0]
    assert method["name"] == "m"
    assert method["responseFilters"][0]["name"] == "rf"


# bulk update -----------------------------------------------------------------------------------


def test_bulk_endpoint_update(api: Api, sid: str, eid: str) -> None:
    second = make_endpoint(api, sid, name="Second", path="/second")["id"]
    before = revision(api, sid)
    resp = api.put(
        f"/services/{sid}/endpoints",
        [{"id": eid, "inboundSslRequired": True}, {"id": second, "highSecurity": True}],
    )
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert isinstance(body, list) and {e["id"] for e in body} == {eid, second}
    one = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "inboundSslRequired"})
    two = api.fetch(f"/services/{sid}/endpoints/{second}", {"fields": "highSecurity"})
    assert one["inboundSslRequired"] is True
    assert two["highSecurity"] is True
    assert revision(api, sid) > before


def test_bulk_endpoint_update_is_all_or_nothing(api: Api, sid: str, eid: str) -> None:
    second = make_endpoint(api, sid, name="Second", path="/second")["id"]
    resp = api.put(
        f"/services/{sid}/endpoints",
        [{"id": eid, "inboundSslRequired": True}, {"id": second, "requestProtocol": "bogus"}],
    )
    assert_invalid(resp, "requestProtocol")
    one = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "inboundSslRequired"})
    assert one["inboundSslRequired"] is False


# the errorSet reference ------------------------------------------------------------------------


def test_error_set_reference(api: Api, sid: str) -> None:
    es = api.create(f"/services/{sid}/errorSets", {"name": "XML errors", "type": "application/xml"})
    eid = api.create(
        f"/services/{sid}/endpoints", endpoint_body(errorSet={"id": es["id"]})
    )["id"]
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "id,errorSet"})
    assert got["errorSet"]["id"] == es["id"]
    assert got["errorSet"]["name"] == "XML errors"
    plain = api.fetch(f"/services/{sid}/endpoints/{eid}")
    assert "errorSet" not in plain  # Exp
    api.update(f"/services/{sid}/endpoints/{eid}", {"errorSet": None})
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "id,errorSet"})
    assert got["errorSet"] is None


def test_error_set_of_another_service_is_rejected(api: Api, sid: str) -> None:
    other = make_service(api, "Other")["id"]
    foreign = api.list(f"/services/{other}/errorSets")[0]["id"]
    resp = api.post(f"/services/{sid}/endpoints", endpoint_body(errorSet={"id": foreign}))
    assert_invalid(resp, "errorSet")


# per-endpoint scheduled maintenance event ------------------------------------------------------


def test_endpoint_scheduled_maintenance_event(api: Api, sid: str, eid: str) -> None:
    event = api.create(
        "/scheduledMaintenanceEvents",
        {
            "name": "Night work",
            "startDateTime": "2030-01-01T02:00:00Z",
            "endDateTime": "2030-01-01T04:00:00Z",
        },
    )
    path = f"/services/{sid}/endpoints/{eid}/scheduledMaintenanceEvent"
    assigned = api.create(path, {"id": event["id"]})
    assert assigned["id"] == event["id"]
    assert api.fetch(path)["name"] == "Night work"
    assert api.fetch(path, {"indent": "true"})["id"] == event["id"]
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "scheduledMaintenanceEvent"})
    assert got["scheduledMaintenanceEvent"]["id"] == event["id"]
    listed = api.list(f"/scheduledMaintenanceEvents/{event['id']}/endpoints")
    assert [e["id"] for e in listed] == [eid]
    other = api.create(
        "/scheduledMaintenanceEvents",
        {
            "name": "Day work",
            "startDateTime": "2030-02-01T02:00:00Z",
            "endDateTime": "2030-02-01T04:00:00Z",
        },
    )
    assert api.update(path, {"id": other["id"]})["id"] == other["id"]
    assert_deleted(api.delete(path))
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "scheduledMaintenanceEvent"})
    assert got["scheduledMaintenanceEvent"] is None
