"""Acceptance: a client that knows only the specification and SUPPLEMENT builds a whole
configuration, then reads it all back with one list call per collection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from spec_helpers import AREA_A, TOKEN_A, Api, approve, describe, serve


@pytest.fixture
def http(tmp_path: Path) -> Iterator[httpx.Client]:
    with serve(tmp_path, auto_approve_domains=False) as client:
        yield client


class CountingApi(Api):
    """Counts the calls made, so the test can hold the reads to one per collection."""

    calls: int = 0

    def request(self, method: str, path: str, body: Any = None, params: Any = None, **kw: Any) -> httpx.Response:
        self.calls += 1
        return super().request(method, path, body, params, **kw)


def build(api: Api, http: httpx.Client) -> dict[str, str]:
    ids: dict[str, str] = {}
    for domain in ("example.com", "example.net"):
        dom = api.create("/domains", {"domain": domain})
        assert dom["status"] == "waiting"
        resp = approve(http, AREA_A, dom["id"])
        assert resp.status_code == 200, describe(resp)
        ids[domain] = dom["id"]

    svc = api.create(
        "/services",
        {
            "name": "Weather",
            "version": "2",
            "description": "Forecasts",
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
                }
            ],
        },
    )
    ids["service"] = svc["id"]
    (error_set,) = api.list(f"/services/{svc['id']}/errorSets")
    ids["errorSet"] = error_set["id"]

    endpoint = api.create(
        f"/services/{svc['id']}/endpoints",
        {
            "name": "Forecast",
            "requestPathAlias": "/v2/forecast",
            "trafficManagerDomain": "api.example.com",
            "publicDomains": [{"address": "api.example.com"}],
            "systemDomains": [{"address": "backend.example.net"}],
            "supportedHttpMethods": ["get"],
            "errorSet": {"id": error_set["id"]},
            "systemDomainCredentialSecret": "backend-secret",
        },
    )
    ids["endpoint"] = endpoint["id"]
    base = f"/services/{svc['id']}/endpoints/{endpoint['id']}"
    api.create(
        f"{base}/cors",
        {"allDomainsEnabled": False, "domainsAllowed": ["https://app.example.com"], "maxAge": 60},
    )
    api.update(f"{base}/cache", {"cacheTtlOverride": 120, "varyHeaderEnabled": True})

    package = api.create("/packages", {"name": "Weather Partners"})
    ids["package"] = package["id"]
    plan = api.create(
        f"/packages/{package['id']}/plans",
        {"name": "Gold", "rateLimitCeiling": 100000, "rateLimitPeriod": "day", "qpsLimitCeiling": 10},
    )
    ids["plan"] = plan["id"]
    plan_services = f"/packages/{package['id']}/plans/{plan['id']}/services"
    api.create(plan_services, {"id": svc["id"]})
    api.create(f"{plan_services}/{svc['id']}/endpoints", {"id": endpoint["id"]})

    role = api.create("/roles", {"name": "Partners"})
    ids["role"] = role["id"]
    api.create(
        f"/packages/{package['id']}/plans/{plan['id']}/roles",
        {"id": role["id"], "action": "register_keys"},
    )

    event = api.create(
        "/scheduledMaintenanceEvents",
        {
            "name": "Database upgrade",
            "startDateTime": "2030-12-01T02:00:00Z",
            "endDateTime": "2030-12-01T04:00:00Z",
        },
    )
    ids["event"] = event["id"]
    api.create(f"/scheduledMaintenanceEvents/{event['id']}/endpoints", {"id": endpoint["id"]})
    return ids


def test_build_and_read_back_a_whole_configuration(http: httpx.Client) -> None:
    api = CountingApi(http, TOKEN_A)
    ids = build(api, http)
    api.calls = 0

    services = api.list(
        "/services",
        {
            "fields": "id,name,version,description,revisionNumber,errorSets.*,endpoints.*,"
            "endpoints.cors.*,endpoints.cache.*,endpoints.errorSet"
        },
    )
    packages = api.list("/packages", {"fields": "id,name,plans.*,plans.services.*,plans.roles.*"})
    roles = api.list("/roles", {"fields": "id,name,organization"})
    domains = api.list("/domains")
    events = api.list("/scheduledMaintenanceEvents")
    assert api.calls == 5

    (svc,) = services
    assert svc["id"] == ids["service"]
    assert svc["name"] == "Weather"
    assert svc["version"] == "2"
    assert svc["description"] == "Forecasts"
    assert svc["revisionNumber"] >= 4  # create, endpoint, cors, cache

    (error_set,) = svc["errorSets"]
    assert error_set["name"] == "JSON errors"
    messages = {m["id"]: m for m in error_set["errorMessages"]}
    assert len(messages) == 23
    assert messages["ERR_403_DEVELOPER_OVER_QPS"]["responseBody"] == '{"error":"slow down"}'
    assert messages["ERR_403_DEVELOPER_OVER_QPS"]["code"] == 403

    (endpoint,) = svc["endpoints"]
    assert endpoint["id"] == ids["endpoint"]
    assert endpoint["requestPathAlias"] == "/v2/forecast"
    assert endpoint["trafficManagerDomain"] == "api.example.com"
    assert [d["address"] for d in endpoint["publicDomains"]] == ["api.example.com"]
    assert [d["address"] for d in endpoint["systemDomains"]] == ["backend.example.net"]
    assert endpoint["errorSet"]["id"] == ids["errorSet"]
    assert endpoint["cors"] == {
        "allDomainsEnabled": False,
        "subDomainMatchingAllowed": False,
        "maxAge": 60,
        "cookiesAllowed": False,
        "domainsAllowed": ["https://app.example.com"],
        "headersAllowed": [],
        "headersExposed": [],
    }
    assert endpoint["cache"]["cacheTtlOverride"] == 120
    assert endpoint["cache"]["varyHeaderEnabled"] is True
    assert endpoint["cache"]["responseCacheControlEnabled"] is False
    assert endpoint["connectionTimeoutForSystemDomainRequest"] == 2  # default

    (package,) = packages
    assert package["id"] == ids["package"]
    assert package["name"] == "Weather Partners"
    (plan,) = package["plans"]
    assert plan["id"] == ids["plan"]
    assert plan["rateLimitCeiling"] == 100000
    assert plan["rateLimitPeriod"] == "day"
    assert plan["qpsLimitCeiling"] == 10
    (plan_service,) = plan["services"]
    assert plan_service["id"] == ids["service"]
    assert [e["id"] for e in plan_service["endpoints"]] == [ids["endpoint"]]
    assert [(r["id"], r["action"]) for r in plan["roles"]] == [(ids["role"], "register_keys")]

    (role,) = roles
    assert role == {"id": ids["role"], "name": "Partners", "organization": None}

    assert sorted((d["domain"], d["status"]) for d in domains) == [
        ("example.com", "active"),
        ("example.net", "active"),
    ]

    (event,) = events
    assert event["id"] == ids["event"]
    assert event["name"] == "Database upgrade"
    assert [e["id"] for e in event["endpoints"]] == [ids["endpoint"]]


def test_secrets_never_come_back_unasked(http: httpx.Client) -> None:
    api = Api(http, TOKEN_A)
    build(api, http)
    for path in ("/services", "/packages", "/roles", "/domains", "/scheduledMaintenanceEvents"):
        resp = api.get(path)
        assert "backend-secret" not in resp.text, path
