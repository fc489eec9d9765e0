"""Nested writes: a service tree in one call, PUT on a parent with children (SUPPLEMENT §2)."""

from __future__ import annotations

from typing import Any

from spec_helpers import (
    CATALOG,
    Api,
    assert_invalid,
    endpoint_body,
    revision,
)

TREE: dict[str, Any] = {
    "name": "Weather",
    "version": "2",
    "cache": {"cacheTtl": 30},
    "errorSets": [
        {
            "name": "JSON errors",
            "type": "application/json",
            "errorMessages": [
                {
                    "id": "ERR_403_DEVELOPER_OVER_QPS",
                    "status": "Too Many Requests",
                    "responseBody": '{"error":"slow down"}',
                }
            ],
        },
        {"name": "XML errors", "type": "application/xml"},
    ],
    "endpoints": [
        endpoint_body(
            "Forecast",
            "/forecast",
            supportedHttpMethods=["get", "post"],
            cors={"allDomainsEnabled": False, "domainsAllowed": ["https://app.example.com"]},
            cache={"cacheTtlOverride": 60},
            methods=[{"name": "getForecast"}],
            systemDomainAuthentication={"type": "httpBasic", "username": "u", "password": "pw-x"},
        ),
        endpoint_body("Radar", "/radar"),
    ],
}

# the shared `api` fixture (conftest.py) declares the test domains first
WITH_DOMAINS = True


def test_nested_service_create(api: Api) -> None:
    created = api.create("/services", TREE)
    sid = created["id"]
    got = api.fetch(
        f"/services/{sid}",
        {
            "fields": "id,name,revisionNumber,cache,errorSets.*,endpoints.*,"
            "endpoints.methods.*,endpoints.systemDomainAuthentication.*"
        },
    )
    assert got["revisionNumber"] == 1
    assert got["cache"] == {"cacheTtl": 30}
    sets = {s["name"]: s for s in got["errorSets"]}
    assert set(sets) == {"JSON errors", "XML errors"}  # no extra Default set
    messages = {m["id"]: m for m in sets["JSON errors"]["errorMessages"]}
    assert set(messages) == set(CATALOG)
    assert messages["ERR_403_DEVELOPER_OVER_QPS"]["responseBody"] == '{"error":"slow down"}'
    assert messages["ERR_403_DEVELOPER_OVER_QPS"]["code"] == 403
    assert len(sets["XML errors"]["errorMessages"]) == len(CATALOG)
    endpoints = {e["name"]: e for e in got["endpoints"]}
    forecast = endpoints["Forecast"]
    assert sorted(forecast["supportedHttpMethods"]) == ["get", "post"]
    assert forecast["cors"]["allDomainsEnabled"] is False
    assert forecast["cors"]["domainsAllowed"] == ["https://app.example.com"]
    assert forecast["cors"]["maxAge"] == 0
    assert forecast["cache"]["cacheTtlOverride"] == 60
    assert [m["name"] for m in forecast["methods"]] == ["getForecast"]
    assert forecast["systemDomainAuthentication"]["username"] == "u"
    assert "pw-x" not in str(got)
    assert endpoints["Radar"]["cors"]["allDomainsEnabled"] is True


def test_nested_create_through_sub_resources(api: Api) -> None:
    sid = api.create("/services", TREE)["id"]
    endpoints = {e["name"]: e["id"] for e in api.list(f"/services/{sid}/endpoints")}
    cors = api.fetch(f"/services/{sid}/endpoints/{endpoints['Forecast']}/cors")
    assert cors["domainsAllowed"] == ["https://app.example.com"]
    methods = api.list(f"/services/{sid}/endpoints/{endpoints['Forecast']}/methods")
    assert [m["name"] for m in methods] == ["getForecast"]
    assert api.fetch(f"/services/{sid}/cache") == {"cacheTtl": 30}


def test_nested_create_is_one_transaction(api: Api) -> None:
    broken = {
        **TREE,
        "endpoints": [endpoint_body("Good", "/good"), endpoint_body("Bad", "/bad", requestProtocol="x")],
    }
    assert_invalid(api.post("/services", broken), "requestProtocol")
    assert api.list("/services") == []
    # nothing was reserved either: the same tree now goes in
    api.create("/services", {**broken, "endpoints": [endpoint_body("Good", "/good")]})


def test_nested_create_reports_duplicates_inside_the_tree(api: Api) -> None:
    tree = {"name": "Dup", "endpoints": [endpoint_body("A", "/a"), endpoint_body("A", "/b")]}
    resp = api.post("/services", tree)
    items = assert_invalid(resp)
    assert any("duplicate" in item["message"].lower() for item in items)
    assert api.list("/services") == []


def test_nested_create_bad_message_id(api: Api) -> None:
    tree = {"name": "Bad", "errorSets": [{"name": "E", "errorMessages": [{"id": "ERR_NOPE"}]}]}
    assert_invalid(api.post("/services", tree))
    assert api.list("/services") == []


def test_put_service_with_endpoints(api: Api) -> None:
    sid = api.create("/services", TREE)["id"]
    endpoints = {e["name"]: e["id"] for e in api.list(f"/services/{sid}/endpoints")}
    before = revision(api, sid)
    api.update(
        f"/services/{sid}",
        {
            "endpoints": [
                {"id": endpoints["Forecast"], "requestPathAlias": "/v2/forecast"},
                endpoint_body("Alerts", "/alerts"),
            ]
        },
    )
    after = {
        e["name"]: e
        for e in api.list(f"/services/{sid}/endpoints", {"fields": "id,name,requestPathAlias"})
    }
    assert set(after) == {"Forecast", "Radar", "Alerts"}  # Radar left alone
    assert after["Forecast"]["id"] == endpoints["Forecast"]
    assert after["Forecast"]["requestPathAlias"] == "/v2/forecast"
    assert after["Radar"]["requestPathAlias"] == "/radar"
    assert revision(api, sid) > before


def test_put_service_with_error_sets(api: Api) -> None:
    sid = api.create("/services", TREE)["id"]
    sets = {s["name"]: s["id"] for s in api.list(f"/services/{sid}/errorSets")}
    api.update(
        f"/services/{sid}",
        {"errorSets": [{"id": sets["XML errors"], "jsonp": True}, {"name": "Third"}]},
    )
    after = {s["name"]: s for s in api.list(f"/services/{sid}/errorSets")}
    assert set(after) == {"JSON errors", "XML errors", "Third"}
    assert after["XML errors"]["jsonp"] is True


def test_put_service_nested_failure_changes_nothing(api: Api) -> None:
    sid = api.create("/services", TREE)["id"]
    endpoints = {e["name"]: e["id"] for e in api.list(f"/services/{sid}/endpoints")}
    before = revision(api, sid)
    resp = api.put(
        f"/services/{sid}",
        {
            "description": "should not stick",
            "endpoints": [
                {"id": endpoints["Forecast"], "requestPathAlias": "/changed"},
                {"id": endpoints["Radar"], "connectionTimeoutForSystemDomainRequest": 7},
            ],
        },
    )
    assert_invalid(resp, "connectionTimeoutForSystemDomainRequest")
    got = api.fetch(f"/services/{sid}", {"fields": "description,revisionNumber"})
    assert got["description"] == ""
    assert got["revisionNumber"] == before
    forecast = api.fetch(
        f"/services/{sid}/endpoints/{endpoints['Forecast']}", {"fields": "requestPathAlias"}
    )
    assert forecast["requestPathAlias"] == "/forecast"


def test_put_endpoint_with_nested_singletons(api: Api) -> None:
    sid = api.create("/services", TREE)["id"]
    eid = next(e["id"] for e in api.list(f"/services/{sid}/endpoints") if e["name"] == "Forecast")
    api.update(f"/services/{sid}/endpoints/{eid}", {"cors": {"maxAge": 15}, "cache": {"varyHeaderEnabled": True}})
    cors = api.fetch(f"/services/{sid}/endpoints/{eid}/cors")
    assert cors["maxAge"] == 15
    assert cors["domainsAllowed"] == ["https://app.example.com"]  # fields not sent are kept
    cache = api.fetch(f"/services/{sid}/endpoints/{eid}/cache")
    assert cache["varyHeaderEnabled"] is True
    assert cache["cacheTtlOverride"] == 60


def test_put_endpoint_with_methods_updates_creates_and_keeps(api: Api) -> None:
    sid = api.create("/services", {"name": "M", "endpoints": [endpoint_body()]})["id"]
    (endpoint,) = api.list(f"/services/{sid}/endpoints")
    eid = endpoint["id"]
    base = f"/services/{sid}/endpoints/{eid}/methods"
    first = api.create(base, {"name": "first"})["id"]
    second = api.create(base, {"name": "second"})["id"]
    api.update(
        f"/services/{sid}/endpoints/{eid}",
        {"methods": [{"id": first, "name": "first-renamed"}, {"name": "third"}]},
    )
    methods = {m["name"]: m["id"] for m in api.list(base)}
    assert methods == {"first-renamed": first, "second": second, "third": methods["third"]}


def test_put_plan_with_services_never_removes(api: Api) -> None:
    one = api.create("/services", {"name": "One"})["id"]
    two = api.create("/services", {"name": "Two"})["id"]
    pid = api.create("/packages", {"name": "P"})["id"]
    plan_id = api.create(f"/packages/{pid}/plans", {"name": "G", "services": [{"id": one}]})["id"]
    api.update(f"/packages/{pid}/plans/{plan_id}", {"services": [{"id": two}]})
    entitled = {s["id"] for s in api.list(f"/packages/{pid}/plans/{plan_id}/services")}
    assert entitled == {one, two}


def test_nested_create_with_security_profile(api: Api) -> None:
    sid = api.create(
        "/services",
        {
            "name": "Secured",
            "securityProfile": {"oauth": {"accessTokenType": "bearer", "grantTypes": ["password"]}},
        },
    )["id"]
    oauth = api.fetch(f"/services/{sid}/securityProfile/oauth")
    assert oauth["accessTokenType"] == "bearer"
    assert oauth["grantTypes"] == ["password"]


def test_endpoint_created_with_its_maintenance_event(api: Api) -> None:
    event = api.create(
        "/scheduledMaintenanceEvents",
        {"name": "E", "startDateTime": "2030-01-01T00:00:00Z", "endDateTime": "2030-01-02T00:00:00Z"},
    )
    sid = api.create("/services", {"name": "S"})["id"]
    eid = api.create(
        f"/services/{sid}/endpoints", endpoint_body(scheduledMaintenanceEvent={"id": event["id"]})
    )["id"]
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "scheduledMaintenanceEvent"})
    assert got["scheduledMaintenanceEvent"] is not None, "Opt on create: the event was not set"
    assert got["scheduledMaintenanceEvent"]["id"] == event["id"]
    listed = api.list(f"/scheduledMaintenanceEvents/{event['id']}/endpoints")
    assert [e["id"] for e in listed] == [eid]


def test_second_public_domain_clash_is_a_duplicate(api: Api) -> None:
    api.create("/domains", {"domain": "example.org"})
    sid = api.create("/services", {"name": "S", "endpoints": [endpoint_body()]})["id"]
    body = endpoint_body(
        "Other",
        "/forecast",
        host="api.example.org",
        publicDomains=[{"address": "api.example.org"}, {"address": "api.example.com"}],
    )
    resp = api.post(f"/services/{sid}/endpoints", body)
    items = assert_invalid(resp)
    assert any("duplicate" in item["message"].lower() for item in items)


def test_put_endpoint_system_domain_authentication_keeps_password_hidden(api: Api) -> None:
    sid = api.create("/services", TREE)["id"]
    eid = next(e["id"] for e in api.list(f"/services/{sid}/endpoints") if e["name"] == "Radar")
    resp = api.put(
        f"/services/{sid}/endpoints/{eid}",
        {"systemDomainAuthentication": {"type": "httpBasic", "username": "r", "password": "radar-pw"}},
        {"fields": "id,systemDomainAuthentication"},
    )
    assert resp.status_code == 200, resp.text
    assert "radar-pw" not in resp.text
    got = api.fetch(f"/services/{sid}/endpoints/{eid}/systemDomainAuthentication")
    assert got["username"] == "r"
    assert "password" not in got


def test_endpoint_update_sets_its_maintenance_event(api: Api) -> None:
    event = api.create(
        "/scheduledMaintenanceEvents",
        {"name": "E", "startDateTime": "2030-01-01T00:00:00Z", "endDateTime": "2030-01-02T00:00:00Z"},
    )
    sid = api.create("/services", {"name": "S", "endpoints": [endpoint_body()]})["id"]
    (endpoint,) = api.list(f"/services/{sid}/endpoints")
    path = f"/services/{sid}/endpoints/{endpoint['id']}"
    api.update(path, {"scheduledMaintenanceEvent": {"id": event["id"]}})
    got = api.fetch(path, {"fields": "scheduledMaintenanceEvent"})
    assert got["scheduledMaintenanceEvent"] is not None, "Opt on update: the event was not set"
    assert got["scheduledMaintenanceEvent"]["id"] == event["id"]
