"""Packages, plans, plan entitlements and plan roles (spec "Package", "Plan"; SUPPLEMENT §2, §3)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from spec_helpers import (
    MS_TIME_RE,
    UUID_RE,
    Api,
    assert_deleted,
    assert_duplicate,
    assert_error,
    assert_invalid,
    make_endpoint,
    make_service,
    with_domains,
)

PACKAGE_DEFAULTS: dict[str, Any] = {
    "description": "",
    "notifyDeveloperPeriod": "hour",
    "notifyAdminPeriod": "hour",
    "notifyDeveloperNearQuota": False,
    "notifyDeveloperOverQuota": False,
    "notifyDeveloperOverThrottle": False,
    "notifyAdminNearQuota": False,
    "notifyAdminOverQuota": False,
    "notifyAdminOverThrottle": False,
    "notifyAdminEmails": "",
    "nearQuotaThreshold": 80,
    "keyLength": 24,
    "sharedSecretLength": 10,
    "keyAdapter": "",
    "eav": {},
}
PACKAGE_EXP = [
    "notifyDeveloperNearQuota",
    "notifyDeveloperOverQuota",
    "notifyDeveloperOverThrottle",
    "notifyAdminNearQuota",
    "notifyAdminOverQuota",
    "notifyAdminOverThrottle",
    "eav",
    "plans",
]
PLAN_DEFAULTS: dict[str, Any] = {
    "description": "",
    "status": "active",
    "selfServiceKeyProvisioningEnabled": False,
    "adminKeyProvisioningEnabled": False,
    "maxNumKeysAllowed": 5,
    "numKeysBeforeReview": 1,
    "qpsLimitCeiling": 0,
    "qpsLimitExempt": False,
    "qpsLimitKeyOverrideAllowed": False,
    "rateLimitCeiling": 0,
    "rateLimitExempt": False,
    "rateLimitKeyOverrideAllowed": False,
    "rateLimitPeriod": "day",
    "responseFilterOverrideAllowed": False,
    "notes": "",
    "eav": {},
    "services": [],
}


@pytest.fixture
def pid(api: Api) -> str:
    value: str = api.create("/packages", {"name": "Partners"})["id"]
    return value


@pytest.fixture
def plan_id(api: Api, pid: str) -> str:
    value: str = api.create(f"/packages/{pid}/plans", {"name": "Gold"})["id"]
    return value


# packages ----------------------------------------------------------------------------------


def test_package_crud(api: Api) -> None:
    created = api.create("/packages", {"name": "Partners", "description": "d"})
    pid = created["id"]
    assert re.match(UUID_RE, pid), pid
    assert re.match(MS_TIME_RE, created["created"]), created["created"]
    for key in PACKAGE_EXP:
        assert key not in created, key
    assert api.fetch(f"/packages/{pid}")["description"] == "d"
    assert api.update(f"/packages/{pid}", {"nearQuotaThreshold": 90})["nearQuotaThreshold"] == 90
    assert api.fetch(f"/packages/{pid}")["name"] == "Partners"
    assert [p["id"] for p in api.list("/packages")] == [pid]
    assert_deleted(api.delete(f"/packages/{pid}"))
    assert_error(api.get(f"/packages/{pid}"), 404)
    assert_error(api.delete(f"/packages/{pid}"), 404)


def test_package_defaults(api: Api, pid: str) -> None:
    got = api.fetch(f"/packages/{pid}", {"fields": ",".join(PACKAGE_DEFAULTS)})
    for key, value in PACKAGE_DEFAULTS.items():
        assert got[key] == value, key


def test_package_name_required_and_unique(api: Api, pid: str) -> None:
    assert_invalid(api.post("/packages", {"description": "x"}), "name")
    assert_duplicate(api.post("/packages", {"name": "Partners"}))
    other = api.create("/packages", {"name": "Other"})["id"]
    assert_duplicate(api.put(f"/packages/{other}", {"name": "Partners"}))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("notifyDeveloperPeriod", "year"),
        ("notifyAdminPeriod", "fortnight"),
        ("keyLength", "long"),
        ("nearQuotaThreshold", "80"),
        ("notifyAdminNearQuota", 1),
        ("eav", "x"),
    ],
)
def test_package_validation(api: Api, field: str, value: object) -> None:
    assert_invalid(api.post("/packages", {"name": "P", field: value}), field)


def test_package_list_returns_plans(api: Api, pid: str, plan_id: str) -> None:
    listed = api.list("/packages", {"fields": "id,name,plans"})
    assert [p["id"] for p in listed[0]["plans"]] == [plan_id]


# plans ---------------------------------------------------------------------------------------


def test_plan_crud(api: Api, pid: str) -> None:
    created = api.create(
        f"/packages/{pid}/plans",
        {"name": "Gold", "rateLimitCeiling": 1000, "rateLimitPeriod": "minute", "notes": "n"},
    )
    plan_id = created["id"]
    assert re.match(UUID_RE, plan_id), plan_id
    assert created["rateLimitCeiling"] == 1000
    assert "notes" not in created  # Exp
    path = f"/packages/{pid}/plans/{plan_id}"
    assert api.fetch(path)["rateLimitPeriod"] == "minute"
    assert api.fetch(path, {"indent": "true"})["name"] == "Gold"
    assert api.fetch(path, {"fields": "notes"})["notes"] == "n"
    assert api.update(path, {"qpsLimitCeiling": 5})["qpsLimitCeiling"] == 5
    assert api.fetch(path)["rateLimitCeiling"] == 1000
    assert [p["name"] for p in api.list(f"/packages/{pid}/plans")] == ["Gold"]
    assert_deleted(api.delete(path))
    assert_error(api.get(path), 404)
    assert api.list(f"/packages/{pid}/plans") == []


def test_plan_defaults(api: Api, pid: str, plan_id: str) -> None:
    got = api.fetch(f"/packages/{pid}/plans/{plan_id}", {"fields": ",".join(PLAN_DEFAULTS)})
    for key, value in PLAN_DEFAULTS.items():
        assert got[key] == value, key


def test_plan_ignored_fields(api: Api, pid: str) -> None:
    created = api.create(
        f"/packages/{pid}/plans",
        {"name": "Ign", "selfServiceKeyProvisioningEnabled": True, "status": "inactive"},
    )
    assert created["selfServiceKeyProvisioningEnabled"] is False
    assert created["status"] == "active"
    path = f"/packages/{pid}/plans/{created['id']}"
    api.update(path, {"status": "inactive", "selfServiceKeyProvisioningEnabled": True})
    got = api.fetch(path)
    assert got["status"] == "active"
    assert got["selfServiceKeyProvisioningEnabled"] is False


def test_plan_name_required_and_unique_within_package(api: Api, pid: str, plan_id: str) -> None:
    assert_invalid(api.post(f"/packages/{pid}/plans", {"notes": "x"}), "name")
    assert_duplicate(api.post(f"/packages/{pid}/plans", {"name": "Gold"}))
    other = api.create("/packages", {"name": "Other"})["id"]
    api.create(f"/packages/{other}/plans", {"name": "Gold"})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("rateLimitPeriod", "week"),
        ("rateLimitCeiling", "lots"),
        ("maxNumKeysAllowed", 2.5),
        ("qpsLimitExempt", "no"),
        ("emailTemplateSetId", "abc"),
    ],
)
def test_plan_validation(api: Api, pid: str, field: str, value: object) -> None:
    assert_invalid(api.post(f"/packages/{pid}/plans", {"name": "P", field: value}), field)


def test_plan_of_unknown_package(api: Api) -> None:
    resp = api.post("/packages/00000000-0000-0000-0000-000000000000/plans", {"name": "x"})
    assert_error(resp, 404)


def test_plan_belongs_to_its_package(api: Api, pid: str, plan_id: str) -> None:
    other = api.create("/packages", {"name": "Other"})["id"]
    assert_error(api.get(f"/packages/{other}/plans/{plan_id}"), 404)


def test_deleting_a_package_deletes_its_plans(api: Api, pid: str, plan_id: str) -> None:
    assert_deleted(api.delete(f"/packages/{pid}"))
    assert_error(api.get(f"/packages/{pid}/plans/{plan_id}"), 404)


# nested writes -----------------------------------------------------------------------------------


def test_nested_package_create_with_plans_and_entitlements(api: Api) -> None:
    with_domains(api)
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    created = api.create(
        "/packages",
        {
            "name": "Bundle",
            "plans": [
                {"name": "Gold", "services": [{"id": sid, "endpoints": [{"id": eid}]}]},
                {"name": "Silver"},
            ],
        },
        {"fields": "id,name,plans.*"},
    )
    plans = {p["name"]: p for p in created["plans"]}
    assert set(plans) == {"Gold", "Silver"}
    gold = api.fetch(
        f"/packages/{created['id']}/plans/{plans['Gold']['id']}", {"fields": "id,services"}
    )
    assert [s["id"] for s in gold["services"]] == [sid]
    assert [e["id"] for e in gold["services"][0]["endpoints"]] == [eid]


def test_nested_package_create_is_all_or_nothing(api: Api) -> None:
    resp = api.post(
        "/packages", {"name": "Broken", "plans": [{"name": "A"}, {"rateLimitPeriod": "day"}]}
    )
    assert_invalid(resp, "name")
    assert api.list("/packages") == []


def test_put_package_with_plans(api: Api, pid: str, plan_id: str) -> None:
    silver = api.create(f"/packages/{pid}/plans", {"name": "Silver"})["id"]
    api.update(
        f"/packages/{pid}",
        {"plans": [{"id": plan_id, "qpsLimitCeiling": 9}, {"name": "Bronze"}]},
    )
    plans = {p["name"]: p for p in api.list(f"/packages/{pid}/plans")}
    assert set(plans) == {"Gold", "Silver", "Bronze"}  # Silver left alone
    assert plans["Gold"]["qpsLimitCeiling"] == 9
    assert plans["Silver"]["id"] == silver


# entitlements ----------------------------------------------------------------------------------


@pytest.fixture
def svc_tree(api: Api) -> tuple[str, str, str]:
    with_domains(api)
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    mid = api.create(f"/services/{sid}/endpoints/{eid}/methods", {"name": "getForecast"})["id"]
    return sid, eid, mid


def test_entitlements(api: Api, pid: str, plan_id: str, svc_tree: tuple[str, str, str]) -> None:
    sid, eid, mid = svc_tree
    base = f"/packages/{pid}/plans/{plan_id}/services"
    assert api.list(base) == []
    entitled = api.create(base, {"id": sid})
    assert entitled["id"] == sid
    assert entitled["name"] == "Weather"
    assert api.fetch(f"{base}/{sid}")["id"] == sid
    ep_base = f"{base}/{sid}/endpoints"
    ep = api.create(ep_base, {"id": eid})
    assert ep["id"] == eid
    assert ep["name"] == "Forecast"
    assert [e["id"] for e in api.list(ep_base)] == [eid]
    m_base = f"{ep_base}/{eid}/methods"
    method = api.create(m_base, {"id": mid})
    assert method["id"] == mid
    assert method["name"] == "getForecast"
    assert api.fetch(f"{m_base}/{mid}")["name"] == "getForecast"
    plan_service = api.list(base)[0]
    assert plan_service["id"] == sid
    assert plan_service["name"] == "Weather"
    (endpoint,) = plan_service["endpoints"]
    assert endpoint["id"] == eid
    assert endpoint["name"] == "Forecast"
    assert isinstance(endpoint["undefinedMethodsAllowed"], bool)
    assert endpoint["methods"] == [{"id": mid, "name": "getForecast"}]
    plan = api.fetch(f"/packages/{pid}/plans/{plan_id}", {"fields": "id,services"})
    assert plan["services"][0]["endpoints"][0]["methods"][0]["id"] == mid
    assert_deleted(api.delete(f"{m_base}/{mid}"))
    assert api.list(m_base) == []
    assert_deleted(api.delete(f"{ep_base}/{eid}"))
    assert api.list(ep_base) == []
    assert_deleted(api.delete(f"{base}/{sid}"))
    assert api.list(base) == []


def test_entitling_missing_objects_is_400(
    api: Api, pid: str, plan_id: str, svc_tree: tuple[str, str, str]
) -> None:
    sid, eid, _ = svc_tree
    base = f"/packages/{pid}/plans/{plan_id}/services"
    assert_invalid(api.post(base, {"id": "aaaaaaaaaaaaaaaaaaaaaaaa"}))
    api.create(base, {"id": sid})
    assert_invalid(api.post(f"{base}/{sid}/endpoints", {"id": "aaaaaaaaaaaaaaaaaaaaaaaa"}))
    api.create(f"{base}/{sid}/endpoints", {"id": eid})
    resp = api.post(
        f"{base}/{sid}/endpoints/{eid}/methods", {"id": "00000000-0000-0000-0000-000000000000"}
    )
    assert resp.status_code in (400, 404), resp.text
    assert api.list(f"{base}/{sid}/endpoints/{eid}/methods") == []


def test_entitling_via_plan_put(
    api: Api, pid: str, plan_id: str, svc_tree: tuple[str, str, str]
) -> None:
    sid, eid, _ = svc_tree
    api.update(
        f"/packages/{pid}/plans/{plan_id}", {"services": [{"id": sid, "endpoints": [{"id": eid}]}]}
    )
    listed = api.list(f"/packages/{pid}/plans/{plan_id}/services")
    assert [s["id"] for s in listed] == [sid]
    resp = api.put(
        f"/packages/{pid}/plans/{plan_id}", {"services": [{"id": "aaaaaaaaaaaaaaaaaaaaaaaa"}]}
    )
    assert_invalid(resp)


def test_entitlements_visible_in_package_list(
    api: Api, pid: str, plan_id: str, svc_tree: tuple[str, str, str]
) -> None:
    sid, eid, _ = svc_tree
    api.create(f"/packages/{pid}/plans/{plan_id}/services", {"id": sid})
    api.create(f"/packages/{pid}/plans/{plan_id}/services/{sid}/endpoints", {"id": eid})
    (package,) = api.list("/packages", {"fields": "id,name,plans.*,plans.services.*"})
    (plan,) = package["plans"]
    assert plan["services"][0]["id"] == sid
    assert plan["services"][0]["endpoints"][0]["id"] == eid


# plan roles ----------------------------------------------------------------------------------


def test_plan_roles(api: Api, pid: str, plan_id: str) -> None:
    role = api.create("/roles", {"name": "Partners"})
    base = f"/packages/{pid}/plans/{plan_id}/roles"
    assert api.list(base) == []
    created = api.create(base, {"id": role["id"], "action": "register_keys"})
    assert created["id"] == role["id"]
    assert created["action"] == "register_keys"
    listed = api.list(base)
    assert [(r["id"], r["name"], r["action"]) for r in listed] == [
        (role["id"], "Partners", "register_keys")
    ]
    assert api.fetch(f"{base}/{role['id']}")["name"] == "Partners"
    assert_invalid(api.put(f"{base}/{role['id']}", {"action": "read"}), "action")
    assert_deleted(api.delete(f"{base}/{role['id']}"))
    assert api.list(base) == []


# list rules for packages and plans (spec "Common rules" 3) ---------------------------------------


def test_package_filter_is_exact_and_search_is_substring(api: Api) -> None:
    for name in ("Weather", "Weather Plus", "Maps"):
        api.create("/packages", {"name": name})
    assert [p["name"] for p in api.list("/packages", {"filter": "name:Weather"})] == ["Weather"]
    assert api.list("/packages", {"filter": "name:Weath"}) == []
    found = sorted(p["name"] for p in api.list("/packages", {"search": "name:Weath"}))
    assert found == ["Weather", "Weather Plus"]


def test_package_filters_are_ored_and_sets(api: Api) -> None:
    for name in ("A", "B", "C"):
        api.create("/packages", {"name": name})
    two = api.list("/packages", [("filter", "name:A"), ("filter", "name:B")])
    assert sorted(p["name"] for p in two) == ["A", "B"]
    bar = api.list("/packages", {"filter": "name:A|C"})
    assert sorted(p["name"] for p in bar) == ["A", "C"]


def test_plan_filter_booleans(api: Api, pid: str) -> None:
    api.create(f"/packages/{pid}/plans", {"name": "Moderated", "adminKeyProvisioningEnabled": True})
    api.create(f"/packages/{pid}/plans", {"name": "Open"})
    got = api.list(f"/packages/{pid}/plans", {"filter": "adminKeyProvisioningEnabled:true"})
    assert [p["name"] for p in got] == ["Moderated"]
    got = api.list(f"/packages/{pid}/plans", {"filter": "adminKeyProvisioningEnabled:false"})
    assert [p["name"] for p in got] == ["Open"]


def test_plan_search_terms_are_anded(api: Api, pid: str) -> None:
    api.create(f"/packages/{pid}/plans", {"name": "Gold", "description": "premium"})
    api.create(f"/packages/{pid}/plans", {"name": "Golden", "description": "basic"})
    got = api.list(
        f"/packages/{pid}/plans", [("search", "name:Gold"), ("search", "description:prem")]
    )
    assert [p["name"] for p in got] == ["Gold"]
