"""The engine through HTTP: nested trees, reads of a whole area, rules, cascades."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

API = "/v3/rest"


def one(resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert isinstance(body, list) and len(body) == 1, body
    return body[0]  # type: ignore[no-any-return]


def endpoint(name: str = "Forecast", path: str = "/forecast", **extra: Any) -> dict[str, Any]:
    return {"name": name, "requestPathAlias": path, "trafficManagerDomain": "api.example.com",
            "publicDomains": ["api.example.com"], "systemDomains": [{"address": "backend.example.net"}], **extra}


@pytest.fixture
def api(client: httpx.Client, auth_headers: dict[str, str]) -> httpx.Client:
    client.headers.update(auth_headers)
    for domain in ("example.com", "example.net"):
        assert client.post(f"{API}/domains", json={"domain": domain}).status_code == 200
    return client


def service_tree(api: httpx.Client, name: str = "Weather") -> dict[str, Any]:
    body = {
        "name": name,
        "errorSets": [{"name": "JSON errors", "errorMessages": [
            {"id": "ERR_403_DEVELOPER_OVER_QPS", "responseBody": "slow down"}]}],
        "cache": {"cacheTtl": 30},
        "securityProfile": {"oauth": {"accessTokenType": "mac"}},
        "endpoints": [endpoint(errorSet={"name": "JSON errors"}, cors={"maxAge": 60},
                               methods=[{"name": "read", "responseFilters": [{"name": "f"}]}],
                               systemDomainAuthentication={"type": "httpBasic", "username": "u", "password": "pw"})],
    }
    return one(api.post(f"{API}/services", json=body, params={"fields": "id,name,endpoints.id,errorSets.id"}))


def test_nested_create_is_read_back_by_one_list_call(api: httpx.Client) -> None:
    sid = service_tree(api)["id"]
    fields = ("id,name,cache,securityProfile,roles,errorSets.*,endpoints.*,endpoints.errorSet")
    resp = api.get(f"{API}/services", params={"fields": fields})
    assert resp.headers["X-Total-Count"] == "1"
    (service,) = resp.json()
    assert service["id"] == sid and service["cache"] == {"cacheTtl": 30}
    assert service["securityProfile"]["oauth"]["accessTokenType"] == "mac"
    (es,) = service["errorSets"]
    assert len(es["errorMessages"]) == 23
    qps = next(m for m in es["errorMessages"] if m["id"] == "ERR_403_DEVELOPER_OVER_QPS")
    assert qps == {"id": "ERR_403_DEVELOPER_OVER_QPS", "code": 403, "status": "Forbidden",
                   "detailHeader": "", "responseBody": "slow down"}
    (ep,) = service["endpoints"]
    assert ep["errorSet"] == {"id": es["id"], "name": "JSON errors"}
    assert ep["cors"]["maxAge"] == 60 and ep["cache"]["cacheTtlOverride"] == 0
    assert ep["methods"][0]["responseFilters"][0]["name"] == "f"
    assert ep["systemDomainAuthentication"] == {"type": "httpBasic", "username": "u", "certificate": ""}
    assert ep["publicDomains"] == [{"address": "api.example.com"}]


def test_every_write_in_the_tree_bumps_the_revision(api: httpx.Client) -> None:
    tree = service_tree(api)
    sid, eid = tree["id"], tree["endpoints"][0]["id"]

    def rev() -> int:
        return int(one(api.get(f"{API}/services/{sid}", params={"fields": "revisionNumber"}))["revisionNumber"])

    assert rev() == 1
    one(api.put(f"{API}/services/{sid}/endpoints/{eid}/cors", json={"maxAge": 5}))
    assert rev() == 2
    one(api.post(f"{API}/services/{sid}/endpoints/{eid}/methods", json={"name": "write"}))
    assert rev() == 3
    assert api.put(f"{API}/services/{sid}/endpoints/{eid}/cors", json={"maxAge": "x"}).status_code == 400
    assert rev() == 3  # a refused write changes nothing


def test_bulk_endpoint_update_is_all_or_nothing(api: httpx.Client) -> None:
    sid = service_tree(api)["id"]
    second = one(api.post(f"{API}/services/{sid}/endpoints", json=endpoint("Second", "/second")))
    first_id = one(api.get(f"{API}/services/{sid}/endpoints", params={"filter": "name:Forecast"}))["id"]
    bad = [{"id": first_id, "name": "Renamed"}, {"id": second["id"], "requestProtocol": "graphql"}]
    resp = api.put(f"{API}/services/{sid}/endpoints", json=bad)
    assert resp.status_code == 400 and resp.json()[0]["property"] == "[1].requestProtocol"
    names = {e["name"] for e in api.get(f"{API}/services/{sid}/endpoints").json()}
    assert names == {"Forecast", "Second"}
    good = [{"id": first_id, "name": "Renamed"}, {"id": second["id"], "requestProtocol": "soap"}]
    assert [e["name"] for e in api.put(f"{API}/services/{sid}/endpoints", json=good).json()] == ["Renamed", "Second"]


def test_head_and_paging(api: httpx.Client) -> None:
    for i in range(5):
        one(api.post(f"{API}/roles", json={"name": f"role {i}"}))
    head = api.head(f"{API}/roles", params={"limit": 2})
    assert head.status_code == 200 and head.headers["X-Total-Count"] == "5" and head.content == b""
    page = api.get(f"{API}/roles", params={"limit": 2, "offset": 1, "sort": "name:desc"}).json()
    assert [r["name"] for r in page] == ["role 2", "role 1"]  # roles: offset is a page index


def test_renames_and_deletes_cascade_to_plans_and_events(api: httpx.Client) -> None:
    tree = service_tree(api)
    sid, eid = tree["id"], tree["endpoints"][0]["id"]
    package = one(api.post(f"{API}/packages", json={"name": "P", "plans": [
        {"name": "Gold", "services": [{"id": sid, "endpoints": [{"id": eid}]}]}]},
        params={"fields": "id,plans.id"}))
    event = one(api.post(f"{API}/scheduledMaintenanceEvents", json={
        "name": "w", "startDateTime": "2026-12-01T02:00:00Z", "endDateTime": "2026-12-01T03:00:00Z",
        "endpoints": [{"id": eid}]}))
    assert [{k: e[k] for k in ("id", "name", "serviceId")} for e in event["endpoints"]] == [
        {"id": eid, "name": "Forecast", "serviceId": sid}]
    one(api.put(f"{API}/services/{sid}/endpoints/{eid}", json={"name": "Daily"}))
    plans = one(api.get(f"{API}/packages/{package['id']}", params={"fields": "plans.services.*"}))["plans"]
    assert plans[0]["services"][0]["endpoints"][0]["name"] == "Daily"
    assert one(api.get(f"{API}/scheduledMaintenanceEvents/{event['id']}"))["endpoints"][0]["name"] == "Daily"
    assert api.delete(f"{API}/services/{sid}").status_code == 200
    plans = one(api.get(f"{API}/packages/{package['id']}", params={"fields": "plans.services"}))["plans"]
    assert plans[0]["services"] == []
    assert one(api.get(f"{API}/scheduledMaintenanceEvents/{event['id']}"))["endpoints"] == []
    # the name and the route are free again
    service_tree(api)


def test_domain_gate_and_operator_approval(client: httpx.Client, auth_headers: dict[str, str],
                                           server_config: Any) -> None:
    server_config.auto_approve_domains = False  # the app reads the live config object
    client.headers.update(auth_headers)
    dom = one(client.post(f"{API}/domains", json={"domain": "Example.COM"}))
    assert dom["status"] == "waiting" and dom["domain"] == "example.com"
    resp = client.post(f"{API}/services", json={"name": "S", "endpoints": [endpoint(systemDomains=[])]})
    assert resp.status_code == 400 and resp.json()[0]["property"] == "endpoints[0].publicDomains[0].address"
    assert client.get(f"{API}/services").json() == []  # nothing of the tree was written
    op = {"Authorization": "Bearer operator-token"}
    assert client.post(f"/operator/areas/a/domains/{dom['id']}/approve").status_code == 401
    assert client.post(f"/operator/areas/a/domains/{dom['id']}/approve", headers=op).status_code == 200
    one(client.post(f"{API}/services", json={"name": "S", "endpoints": [endpoint(systemDomains=[])]}))


def test_keys_generation_ceilings_and_moves(api: httpx.Client) -> None:
    package = one(api.post(f"{API}/packages", json={"name": "P", "keyLength": 12, "sharedSecretLength": 6, "plans": [
        {"name": "Small", "rateLimitCeiling": 100, "qpsLimitCeiling": 2},
        {"name": "Big", "rateLimitCeiling": 1000, "rateLimitKeyOverrideAllowed": True}]},
        params={"fields": "id,plans.id,plans.name"}))
    small, big = (p["id"] for p in package["plans"])
    other = one(api.post(f"{API}/packages", json={"name": "Q", "plans": [{"name": "X"}]},
                         params={"fields": "id,plans.id"}))
    member = one(api.post(f"{API}/members", json={"username": "dev", "email": "d@example.com",
                                                 "displayName": "Dev", "externalId": "1", "passwdNew": "pw"}))
    app = one(api.post(f"{API}/members/{member['id']}/applications", json={"name": "App", "username": "dev"}))
    keys = f"{API}/applications/{app['id']}/packageKeys"
    over = api.post(keys, json={"package": {"id": package["id"]}, "plan": {"id": small}, "rateLimitCeiling": 101})
    assert over.status_code == 400 and over.json()[0]["property"] == "rateLimitCeiling"
    key = one(api.post(keys, json={"package": {"id": package["id"]}, "plan": {"id": small}},
                       params={"fields": "id,apikey,secret,plan,limits"}))
    assert len(key["apikey"]) == 12 and len(key["secret"]) == 6
    assert key["limits"] == [{"source": "plan", "ceiling": 100, "period": "day"},
                             {"source": "plan", "ceiling": 2, "period": "second"}]
    moved = one(api.put(f"{API}/packageKeys/{key['id']}", json={"plan": {"id": big}, "rateLimitCeiling": 5000},
                        params={"fields": "plan,limits"}))
    assert moved["plan"]["name"] == "Big" and moved["limits"][0] == {"source": "key", "ceiling": 5000, "period": "day"}
    resp = api.put(f"{API}/packageKeys/{key['id']}", json={"plan": {"id": other["plans"][0]["id"]}})
    assert resp.status_code == 400 and "delete" in resp.json()[0]["message"]


def test_usernames_stay_taken_and_passwords_stay_hidden(api: httpx.Client) -> None:
    body = {"username": "dev", "email": "d@example.com", "displayName": "Dev", "externalId": "1", "passwdNew": "pw"}
    member = one(api.post(f"{API}/members", json=body, params={"fields": "*"}))
    assert "passwdNew" not in member
    assert api.delete(f"{API}/members/{member['id']}").status_code == 200
    resp = api.post(f"{API}/members", json=body)
    assert resp.status_code == 400 and "duplicate" in resp.json()[0]["message"]


def test_areas_never_see_each_other(api: httpx.Client) -> None:
    sid = service_tree(api)["id"]
    other = {"Authorization": "Bearer token-b"}
    assert api.get(f"{API}/services/{sid}", headers=other).status_code == 404
    assert api.get(f"{API}/services", headers=other).json() == []
    assert api.delete(f"{API}/services/{sid}", headers=other).status_code == 404
    assert api.get(f"{API}/services", headers={"Authorization": "Bearer nope"}).status_code == 401


def test_clean_errors_for_bad_requests(api: httpx.Client) -> None:
    huge = b'{"name": "' + b"x" * (10 * 1024 * 1024 + 10) + b'"}'
    assert api.post(f"{API}/services", content=huge).status_code == 413
    assert api.post(f"{API}/services", content=b"[1,").status_code == 400
    assert api.post(f"{API}/services", json=[1, 2]).status_code == 400
    assert api.request("PATCH", f"{API}/services").status_code == 405
    assert api.get(f"{API}/services", params={"limit": "x"}).status_code == 400
    resp = api.get(f"{API}/nothing/here")
    assert resp.status_code == 404 and resp.json()["errorCode"] == 404


def test_indent_and_object_responses(client: httpx.Client, auth_headers: dict[str, str], server_config: Any) -> None:
    client.headers.update(auth_headers)
    assert b"\n" in client.get(f"{API}/organizations", params={"indent": "true"}).content
    server_config.object_responses = True
    role = client.post(f"{API}/roles", json={"name": "r"}).json()
    assert isinstance(role, dict) and role["name"] == "r"


def test_endpoint_event_links_are_written_through_the_endpoint(api: httpx.Client) -> None:
    sid = one(api.post(f"{API}/services", json={"name": "S"}))["id"]
    window = {"name": "w", "startDateTime": "2026-12-01T02:00:00Z", "endDateTime": "2026-12-01T03:00:00Z"}
    created = one(api.post(f"{API}/services/{sid}/endpoints", json=endpoint(scheduledMaintenanceEvent=window),
                           params={"fields": "id,scheduledMaintenanceEvent"}))
    eid, event = created["id"], created["scheduledMaintenanceEvent"]
    assert event["name"] == "w" and event["startDateTime"] == "2026-12-01T02:00:00.000+0000"
    linked = api.get(f"{API}/scheduledMaintenanceEvents/{event['id']}/endpoints",
                     params={"fields": "id,requestPathAlias,serviceId"}).json()
    assert linked == [{"id": eid, "requestPathAlias": "/forecast", "serviceId": sid}]
    bad = api.put(f"{API}/services/{sid}/endpoints/{eid}",
                  json={"scheduledMaintenanceEvent": {**window, "endDateTime": "2026-12-01T01:00:00Z"}})
    assert bad.status_code == 400 and bad.json()[0]["property"].startswith("scheduledMaintenanceEvent")
    one(api.put(f"{API}/services/{sid}/endpoints/{eid}", json={"scheduledMaintenanceEvent": None}))
    assert api.get(f"{API}/services/{sid}/endpoints/{eid}/scheduledMaintenanceEvent").status_code == 404
    assert api.get(f"{API}/scheduledMaintenanceEvents/{event['id']}/endpoints").json() == []


def test_updated_moves_on_every_write_below(api: httpx.Client) -> None:
    import time

    package = one(api.post(f"{API}/packages", json={"name": "P", "plans": [{"name": "Gold"}]},
                           params={"fields": "id,updated,plans.id,plans.updated"}))
    pid, plan = package["id"], package["plans"][0]
    role = one(api.post(f"{API}/roles", json={"name": "partners"}))
    time.sleep(0.01)
    one(api.post(f"{API}/packages/{pid}/plans/{plan['id']}/roles", json={"id": role["id"]}))
    after = one(api.get(f"{API}/packages/{pid}", params={"fields": "updated,plans.updated,plans.roles"}))
    assert after["updated"] > package["updated"] and after["plans"][0]["updated"] > plan["updated"]
    assert after["plans"][0]["roles"] == [{"id": role["id"], "name": "partners", "action": "register_keys"}]


def test_hostnames_already_in_use_stay_valid_when_their_domain_waits(api: httpx.Client) -> None:
    sid = service_tree(api)["id"]
    eid = one(api.get(f"{API}/services/{sid}/endpoints"))["id"]
    domain = next(d for d in api.get(f"{API}/domains").json() if d["domain"] == "example.com")
    api.app.state.server.config.auto_approve_domains = False  # type: ignore[attr-defined]
    assert one(api.put(f"{API}/domains/{domain['id']}", json={"domain": "example.com"}))["status"] == "waiting"
    one(api.put(f"{API}/services/{sid}/endpoints/{eid}", json={"name": "Still fine"}))
    resp = api.put(f"{API}/services/{sid}/endpoints/{eid}", json={"publicDomains": ["www.example.com"]})
    assert resp.status_code == 400 and resp.json()[0]["property"] == "publicDomains[0].address"


def test_an_endpoint_entitled_without_methods_lets_every_method_through(api: httpx.Client) -> None:
    tree = service_tree(api)
    sid, eid = tree["id"], tree["endpoints"][0]["id"]
    package = one(api.post(f"{API}/packages", json={"name": "P", "plans": [{"name": "Gold"}]}))
    plan = one(api.get(f"{API}/packages/{package['id']}", params={"fields": "id,plans"}))["plans"][0]
    base = f"{API}/packages/{package['id']}/plans/{plan['id']}/services"
    one(api.post(base, json={"id": sid}))
    entitled = one(api.post(f"{base}/{sid}/endpoints", json={"id": eid}))
    assert entitled["undefinedMethodsAllowed"] is True


def test_required_names_must_not_be_empty(api: httpx.Client) -> None:
    resp = api.post(f"{API}/services", json={"name": " "})
    assert resp.status_code == 400 and resp.json() == [{"property": "name", "message": "must not be empty"}]
    tree = service_tree(api)
    resp = api.put(f"{API}/services/{tree['id']}", json={"name": ""})
    assert resp.status_code == 400 and resp.json()[0]["property"] == "name"
