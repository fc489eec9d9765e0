"""Members, applications and package keys (spec "Member", "Application", "PackageKey"; SUPPLEMENT §2, §4)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from spec_helpers import (
    UUID_RE,
    Z_TIME_RE,
    Api,
    assert_deleted,
    assert_duplicate,
    assert_error,
    assert_invalid,
    describe,
    member_body,
)


@pytest.fixture
def member(api: Api) -> dict[str, Any]:
    return api.create("/members", member_body("dev1"))


@pytest.fixture
def application(api: Api, member: dict[str, Any]) -> dict[str, Any]:
    return api.create(
        f"/members/{member['id']}/applications", {"name": "Weather App", "username": "dev1"}
    )


@pytest.fixture
def package(api: Api) -> dict[str, Any]:
    return api.create(
        "/packages",
        {
            "name": "Partners",
            "plans": [
                {"name": "Gold", "rateLimitCeiling": 1000, "qpsLimitCeiling": 10},
                {
                    "name": "Flexible",
                    "rateLimitCeiling": 1000,
                    "qpsLimitCeiling": 10,
                    "rateLimitKeyOverrideAllowed": True,
                    "qpsLimitKeyOverrideAllowed": True,
                },
            ],
        },
        {"fields": "id,name,keyLength,sharedSecretLength,plans"},
    )


def plan_of(package: dict[str, Any], name: str) -> str:
    for plan in package["plans"]:
        if plan["name"] == name:
            pid: str = plan["id"]
            return pid
    raise AssertionError(f"no plan {name}")


def make_key(
    api: Api, app_id: str, package: dict[str, Any], plan: str = "Gold", **extra: Any
) -> dict[str, Any]:
    body = {"package": {"id": package["id"]}, "plan": {"id": plan_of(package, plan)}, **extra}
    return api.create(f"/applications/{app_id}/packageKeys", body)


# members ---------------------------------------------------------------------------------------


def test_member_crud(api: Api) -> None:
    created = api.create("/members", member_body("dev1", company="Example Ltd"))
    mid = created["id"]
    assert re.match(UUID_RE, mid), mid
    assert re.match(Z_TIME_RE, created["created"]), created["created"]
    assert re.match(Z_TIME_RE, created["updated"]), created["updated"]
    assert created["username"] == "dev1"
    assert created["company"] == "Example Ltd"
    for key in ("applications", "packageKeys", "roles"):
        assert key not in created, key
    assert api.fetch(f"/members/{mid}")["email"] == "dev1@example.org"
    updated = api.update(f"/members/{mid}", {"areaStatus": "disabled", "phone": "123"})
    assert updated["areaStatus"] == "disabled"
    assert api.fetch(f"/members/{mid}")["phone"] == "123"
    assert [m["username"] for m in api.list("/members")] == ["dev1"]
    assert_deleted(api.delete(f"/members/{mid}"))
    assert_error(api.get(f"/members/{mid}"), 404)
    assert_error(api.delete(f"/members/{mid}"), 404)


@pytest.mark.parametrize("field", ["username", "email", "displayName", "externalId", "passwdNew"])
def test_member_required_fields(api: Api, field: str) -> None:
    body = member_body("dev1")
    del body[field]
    assert_invalid(api.post("/members", body), field)
    assert api.list("/members") == []


def test_password_is_write_only(api: Api) -> None:
    body = member_body("dev1", passwdNew="Very-Secret-Pass-42")
    created = api.create("/members", body)
    mid = created["id"]
    assert "passwdNew" not in created
    for resp in (
        api.get(f"/members/{mid}"),
        api.get(f"/members/{mid}", {"fields": "id,username,passwdNew"}),
        api.get("/members", {"fields": "passwdNew"}),
        api.get("/members"),
        api.put(f"/members/{mid}", {"passwdNew": "Another-Secret-99"}),
    ):
        assert resp.status_code == 200, describe(resp)
        assert "Very-Secret-Pass-42" not in resp.text
        assert "Another-Secret-99" not in resp.text
        assert "passwdNew" not in resp.text


def test_usernames_stay_taken(api: Api, member: dict[str, Any]) -> None:
    assert_duplicate(api.post("/members", member_body("dev1")))
    assert_deleted(api.delete(f"/members/{member['id']}"))
    assert_duplicate(api.post("/members", member_body("dev1")))
    other = api.create("/members", member_body("dev2"))
    assert_duplicate(api.put(f"/members/{other['id']}", {"username": "dev1"}))


def test_email_is_not_unique(api: Api, member: dict[str, Any]) -> None:
    api.create("/members", member_body("dev2", email="dev1@example.org"))


def test_members_offset_is_a_page_index(api: Api) -> None:
    names = [f"user{i}" for i in range(5)]
    for name in names:
        api.create("/members", member_body(name))
    page = api.list("/members", {"sort": "username", "limit": "2", "offset": "1"})
    assert [m["username"] for m in page] == names[2:4]
    resp = api.get("/members", {"sort": "username", "limit": "2", "offset": "2"})
    assert resp.headers["X-Total-Count"] == "5"
    assert [m["username"] for m in resp.json()] == names[4:]


# applications ----------------------------------------------------------------------------------


def test_application_crud(api: Api, member: dict[str, Any]) -> None:
    mid = member["id"]
    created = api.create(
        f"/members/{mid}/applications",
        {"name": "Weather App", "username": "dev1", "description": "d", "commercial": True},
    )
    aid = created["id"]
    assert re.match(UUID_RE, aid), aid
    assert re.match(Z_TIME_RE, created["created"]), created["created"]
    assert created["commercial"] is True
    assert "packageKeys" not in created  # Exp
    assert [a["id"] for a in api.list(f"/members/{mid}/applications")] == [aid]
    assert api.fetch(f"/members/{mid}/applications/{aid}")["name"] == "Weather App"
    assert api.fetch(f"/applications/{aid}")["description"] == "d"
    assert [a["id"] for a in api.list("/applications")] == [aid]
    updated = api.update(f"/members/{mid}/applications/{aid}", {"notes": "via member"})
    assert updated["notes"] == "via member"
    assert api.update(f"/applications/{aid}", {"ads": True})["ads"] is True
    assert api.fetch(f"/applications/{aid}")["notes"] == "via member"
    assert_deleted(api.delete(f"/applications/{aid}"))
    assert_error(api.get(f"/applications/{aid}"), 404)
    aid2 = api.create(f"/members/{mid}/applications", {"name": "Two", "username": "dev1"})["id"]
    assert_deleted(api.delete(f"/members/{mid}/applications/{aid2}"))
    assert api.list("/applications") == []


def test_application_update_answers_the_bare_object(
    api: Api, application: dict[str, Any]
) -> None:
    resp = api.put(f"/applications/{application['id']}", {"description": "bare"})
    assert resp.status_code == 200, describe(resp)
    body = resp.json()
    assert isinstance(body, dict), describe(resp)
    assert body["description"] == "bare"


@pytest.mark.parametrize("field", ["name", "username"])
def test_application_required_fields(api: Api, member: dict[str, Any], field: str) -> None:
    body = {"name": "App", "username": "dev1"}
    del body[field]
    assert_invalid(api.post(f"/members/{member['id']}/applications", body), field)


def test_applications_are_created_only_under_a_member(api: Api) -> None:
    resp = api.post("/applications", {"name": "App", "username": "dev1"})
    assert resp.status_code in (404, 405), describe(resp)
    assert "Traceback" not in resp.text
    assert api.list("/applications") == []


def test_application_under_unknown_member(api: Api) -> None:
    resp = api.post(
        "/members/00000000-0000-0000-0000-000000000000/applications",
        {"name": "App", "username": "dev1"},
    )
    assert_error(resp, 404)


def test_application_of_another_member_is_404(
    api: Api, application: dict[str, Any]
) -> None:
    other = api.create("/members", member_body("dev2"))
    assert_error(api.get(f"/members/{other['id']}/applications/{application['id']}"), 404)


def test_application_search(api: Api, member: dict[str, Any]) -> None:
    mid = member["id"]
    api.create(
        f"/members/{mid}/applications",
        {"name": "Weather Mobile", "username": "dev1", "type": "mobile"},
    )
    api.create(
        f"/members/{mid}/applications", {"name": "Weather Web", "username": "dev1", "type": "web"}
    )
    api.create(f"/members/{mid}/applications", {"name": "Maps", "username": "dev1", "type": "web"})
    found = api.list("/applications", {"search": "name:Weather"})
    assert sorted(a["name"] for a in found) == ["Weather Mobile", "Weather Web"]
    both = api.list("/applications", {"search": "name:Weath,type:web"})
    assert [a["name"] for a in both] == ["Weather Web"]
    assert api.list("/applications", {"search": "name:Nothing"}) == []


def test_application_search_unknown_name_is_400(api: Api, application: dict[str, Any]) -> None:
    assert_invalid(api.get("/applications", {"search": "secret:x"}))


def test_applications_offset_is_a_page_index(api: Api, member: dict[str, Any]) -> None:
    names = [f"app{i}" for i in range(5)]
    for name in names:
        api.create(f"/members/{member['id']}/applications", {"name": name, "username": "dev1"})
    page = api.list("/applications", {"sort": "name", "limit": "2", "offset": "1"})
    assert [a["name"] for a in page] == names[2:4]


def test_member_applications_exp(api: Api, application: dict[str, Any], member: dict[str, Any]) -> None:
    got = api.fetch(f"/members/{member['id']}", {"fields": "id,applications"})
    assert [a["id"] for a in got["applications"]] == [application["id"]]


# package keys ----------------------------------------------------------------------------------


def test_key_generation_with_package_lengths(
    api: Api, application: dict[str, Any], package: dict[str, Any]
) -> None:
    key = make_key(api, application["id"], package)
    assert re.match(UUID_RE, key["id"]), key["id"]
    assert re.match(Z_TIME_RE, key["created"]), key["created"]
    assert len(key["apikey"]) == 24
    assert len(key["secret"]) == 10
    assert key["package"]["id"] == package["id"]
    assert key["plan"]["id"] == plan_of(package, "Gold")
    assert "limits" not in key  # Exp
    other = make_key(api, application["id"], package)
    assert other["apikey"] != key["apikey"]


def test_key_generation_honours_custom_lengths(api: Api, application: dict[str, Any]) -> None:
    package = api.create(
        "/packages",
        {"name": "Long", "keyLength": 32, "sharedSecretLength": 16, "plans": [{"name": "Gold"}]},
        {"fields": "id,plans"},
    )
    key = make_key(api, application["id"], package)
    assert len(key["apikey"]) == 32
    assert len(key["secret"]) == 16


def test_key_with_given_values(
    api: Api, application: dict[str, Any], package: dict[str, Any]
) -> None:
    key = make_key(api, application["id"], package, apikey="my-own-key-value", secret="s")
    assert key["apikey"] == "my-own-key-value"
    assert key["secret"] == "s"


def test_key_crud(api: Api, application: dict[str, Any], package: dict[str, Any]) -> None:
    aid = application["id"]
    key = make_key(api, aid, package, status="active")
    kid = key["id"]
    assert [k["id"] for k in api.list(f"/applications/{aid}/packageKeys")] == [kid]
    assert [k["id"] for k in api.list("/packageKeys")] == [kid]
    assert api.fetch(f"/packageKeys/{kid}")["apikey"] == key["apikey"]
    updated = api.update(f"/packageKeys/{kid}", {"status": "disabled", "apikey": "ignored"})
    assert updated["status"] == "disabled"
    assert updated["apikey"] == key["apikey"]  # Ign on update
    via_app = api.update(f"/applications/{aid}/packageKeys/{kid}", {"secret": "new-secret"})
    assert via_app["secret"] == "new-secret"
    assert_deleted(api.delete(f"/applications/{aid}/packageKeys/{kid}"))
    assert_error(api.get(f"/packageKeys/{kid}"), 404)
    kid2 = make_key(api, aid, package)["id"]
    assert_deleted(api.delete(f"/packageKeys/{kid2}"))
    assert api.list("/packageKeys") == []


def test_no_post_on_package_keys(api: Api, package: dict[str, Any]) -> None:
    body = {"package": {"id": package["id"]}, "plan": {"id": plan_of(package, "Gold")}}
    resp = api.post("/packageKeys", body)
    assert resp.status_code in (404, 405), describe(resp)
    assert api.list("/packageKeys") == []


def test_key_needs_an_existing_plan_of_its_package(
    api: Api, application: dict[str, Any], package: dict[str, Any]
) -> None:
    other = api.create("/packages", {"name": "Other", "plans": [{"name": "X"}]}, {"fields": "id,plans"})
    aid = application["id"]
    resp = api.post(
        f"/applications/{aid}/packageKeys",
        {"package": {"id": package["id"]}, "plan": {"id": other["plans"][0]["id"]}},
    )
    assert_invalid(resp, "plan")
    resp = api.post(
        f"/applications/{aid}/packageKeys",
        {"package": {"id": "00000000-0000-0000-0000-000000000000"}, "plan": {"id": plan_of(package, "Gold")}},
    )
    assert_invalid(resp, "package")


def test_key_moves_between_plans_of_its_package(
    api: Api, application: dict[str, Any], package: dict[str, Any]
) -> None:
    kid = make_key(api, application["id"], package)["id"]
    flexible = plan_of(package, "Flexible")
    moved = api.update(f"/packageKeys/{kid}", {"plan": {"id": flexible}})
    assert moved["plan"]["id"] == flexible
    assert api.fetch(f"/packageKeys/{kid}")["plan"]["id"] == flexible


def test_key_cannot_move_to_another_package(
    api: Api, application: dict[str, Any], package: dict[str, Any]
) -> None:
    kid = make_key(api, application["id"], package)["id"]
    other = api.create("/packages", {"name": "Other", "plans": [{"name": "X"}]}, {"fields": "id,plans"})
    resp = api.put(
        f"/applications/{application['id']}/packageKeys/{kid}",
        {"package": {"id": other["id"]}, "plan": {"id": other["plans"][0]["id"]}},
    )
    assert_invalid(resp)
    resp = api.put(f"/packageKeys/{kid}", {"plan": {"id": other["plans"][0]["id"]}})
    assert_invalid(resp)
    got = api.fetch(f"/packageKeys/{kid}")
    assert got["package"]["id"] == package["id"]
    assert got["plan"]["id"] == plan_of(package, "Gold")


@pytest.mark.parametrize("field", ["rateLimitCeiling", "qpsLimitCeiling"])
def test_key_ceilings_up_to_plan_maxima(
    api: Api, application: dict[str, Any], package: dict[str, Any], field: str
) -> None:
    aid = application["id"]
    body = {"package": {"id": package["id"]}, "plan": {"id": plan_of(package, "Gold")}}
    assert_invalid(api.post(f"/applications/{aid}/packageKeys", {**body, field: 5000}), field)
    within = make_key(api, aid, package, **{field: 5})
    assert within[field] == 5
    assert_invalid(api.put(f"/packageKeys/{within['id']}", {field: 5000}), field)
    flexible = make_key(api, aid, package, "Flexible", **{field: 5000})
    assert flexible[field] == 5000


def test_key_limits_are_exp(api: Api, application: dict[str, Any], package: dict[str, Any]) -> None:
    kid = make_key(api, application["id"], package)["id"]
    got = api.fetch(f"/packageKeys/{kid}", {"fields": "id,limits"})
    limits = got["limits"]
    assert isinstance(limits, list) and limits
    for limit in limits:
        assert set(limit) >= {"source", "ceiling", "period"}
        assert isinstance(limit["ceiling"], int)


def test_application_key_filter_is_exact(
    api: Api, application: dict[str, Any], package: dict[str, Any]
) -> None:
    aid = application["id"]
    key = make_key(api, aid, package, apikey="abcdefghijkl")
    make_key(api, aid, package, apikey="zzzzzzzzzzzz")
    exact = api.list(f"/applications/{aid}/packageKeys", {"filter": "apikey:abcdefghijkl"})
    assert [k["id"] for k in exact] == [key["id"]]
    assert api.list(f"/applications/{aid}/packageKeys", {"filter": "apikey:abcdef"}) == []
    # the top-level list filters by substring
    assert [k["id"] for k in api.list("/packageKeys", {"filter": "apikey:abcdef"})] == [key["id"]]


def test_package_keys_offset_is_a_page_index(
    api: Api, application: dict[str, Any], package: dict[str, Any]
) -> None:
    values = [f"key-{i}" for i in range(5)]
    for value in values:
        make_key(api, application["id"], package, apikey=value)
    page = api.list("/packageKeys", {"sort": "apikey", "limit": "2", "offset": "1"})
    assert [k["apikey"] for k in page] == values[2:4]


def test_key_under_unknown_application(api: Api, package: dict[str, Any]) -> None:
    body = {"package": {"id": package["id"]}, "plan": {"id": plan_of(package, "Gold")}}
    resp = api.post("/applications/00000000-0000-0000-0000-000000000000/packageKeys", body)
    assert_error(resp, 404)


def test_key_package_is_optional_under_an_application(
    api: Api, application: dict[str, Any], package: dict[str, Any]
) -> None:
    gold = plan_of(package, "Gold")
    key = api.create(f"/applications/{application['id']}/packageKeys", {"plan": {"id": gold}})
    assert key["package"]["id"] == package["id"]
    assert key["plan"]["id"] == gold


def test_key_timestamps_ignored_on_update(
    api: Api, application: dict[str, Any], package: dict[str, Any]
) -> None:
    key = make_key(api, application["id"], package)
    api.update(f"/packageKeys/{key['id']}", {"created": "2001-01-01T00:00:00Z"})
    assert api.fetch(f"/packageKeys/{key['id']}")["created"] == key["created"]


# nested collections that the tables mark Opt on create -----------------------------------------


def test_member_created_with_roles(api: Api) -> None:
    role = api.create("/roles", {"name": "Partners"})
    created = api.create("/members", member_body("dev1", roles=[{"id": role["id"]}]))
    got = api.fetch(f"/members/{created['id']}", {"fields": "id,roles"})
    assert [r["id"] for r in got["roles"]] == [role["id"]]
    assert got["roles"][0]["name"] == "Partners"  # an array of Role


def test_member_created_with_applications(api: Api) -> None:
    created = api.create(
        "/members", member_body("dev1", applications=[{"name": "Nested App", "username": "dev1"}])
    )
    got = api.fetch(f"/members/{created['id']}", {"fields": "id,applications"})
    assert [a["name"] for a in got["applications"]] == ["Nested App"]


def test_application_created_with_package_keys(
    api: Api, member: dict[str, Any], package: dict[str, Any]
) -> None:
    key = {"package": {"id": package["id"]}, "plan": {"id": plan_of(package, "Gold")}}
    created = api.create(
        f"/members/{member['id']}/applications",
        {"name": "With Keys", "username": "dev1", "packageKeys": [key]},
    )
    keys = api.list(f"/applications/{created['id']}/packageKeys")
    assert len(keys) == 1
    assert keys[0]["plan"]["id"] == plan_of(package, "Gold")


def test_application_fetch_filter_is_exact(api: Api, application: dict[str, Any]) -> None:
    """Spec "Common rules" 2: on fetch of one application the filter value must match exactly."""
    path = f"/applications/{application['id']}"
    assert api.fetch(path, {"filter": "name:Weather App"})["id"] == application["id"]
    resp = api.get(path, {"filter": "name:Weather"})
    assert resp.status_code == 404 or resp.json() == [], describe(resp)


# maximum keys per developer (plan maxNumKeysAllowed) -------------------------------------------


@pytest.fixture
def small_plans(api: Api) -> dict[str, Any]:
    return api.create(
        "/packages",
        {"name": "Small", "plans": [{"name": "Two", "maxNumKeysAllowed": 2}, {"name": "Five"}]},
        {"fields": "id,name,plans"},
    )


def test_max_keys_per_member_and_plan(api: Api, member: dict[str, Any], small_plans: dict[str, Any]) -> None:
    first = api.create(f"/members/{member['id']}/applications", {"name": "First", "username": "dev1"})
    second = api.create(f"/members/{member['id']}/applications", {"name": "Second", "username": "dev1"})
    make_key(api, first["id"], small_plans, "Two")
    make_key(api, second["id"], small_plans, "Two")  # counted over all of the member's applications
    items = assert_invalid(api.post(f"/applications/{first['id']}/packageKeys",
                                    {"plan": {"id": plan_of(small_plans, "Two")}}), "plan.id")
    assert "maxNumKeysAllowed is 2" in items[0]["message"]
    assert len(api.list("/packageKeys")) == 2
    # another plan, and another member, have their own allowance
    spare = make_key(api, first["id"], small_plans, "Five")
    other = api.create("/members", member_body("dev2"))
    theirs = api.create(f"/members/{other['id']}/applications", {"name": "Theirs", "username": "dev2"})
    make_key(api, theirs["id"], small_plans, "Two")
    # moving a key into a plan whose allowance is used up is refused too
    assert_invalid(api.put(f"/packageKeys/{spare['id']}", {"plan": {"id": plan_of(small_plans, "Two")}}), "plan.id")
    assert api.fetch(f"/packageKeys/{spare['id']}")["plan"]["name"] == "Five"


def test_lowered_maximum_keeps_existing_keys_editable(
    api: Api, application: dict[str, Any], small_plans: dict[str, Any]
) -> None:
    keys = [make_key(api, application["id"], small_plans, "Five") for _ in range(3)]
    pid, plan_id = small_plans["id"], plan_of(small_plans, "Five")
    api.update(f"/packages/{pid}/plans/{plan_id}", {"maxNumKeysAllowed": 1})
    assert api.update(f"/packageKeys/{keys[0]['id']}", {"status": "waiting"})["status"] == "waiting"
    assert_invalid(api.post(f"/applications/{application['id']}/packageKeys", {"plan": {"id": plan_id}}))


def test_max_keys_counts_keys_created_in_the_same_body(
    api: Api, member: dict[str, Any], small_plans: dict[str, Any]
) -> None:
    key = {"plan": {"id": plan_of(small_plans, "Two")}}
    body = {"name": "Greedy", "username": "dev1", "packageKeys": [key, key, key]}
    assert_invalid(api.post(f"/members/{member['id']}/applications", body), "packageKeys[2].plan.id")
    assert api.list("/applications") == [] and api.list("/packageKeys") == []


# search isPackaged ------------------------------------------------------------------------------


def test_search_is_packaged(api: Api, member: dict[str, Any], package: dict[str, Any]) -> None:
    with_key = api.create(f"/members/{member['id']}/applications", {"name": "Keyed", "username": "dev1"})
    api.create(f"/members/{member['id']}/applications", {"name": "Bare", "username": "dev1"})
    key = make_key(api, with_key["id"], package)
    assert [a["name"] for a in api.list("/applications", {"search": "isPackaged:true"})] == ["Keyed"]
    assert [a["name"] for a in api.list("/applications", {"search": "isPackaged:false"})] == ["Bare"]
    assert [a["name"] for a in api.list("/applications", {"search": "isPackaged:true,name:Bare"})] == []
    keys = api.list(f"/applications/{with_key['id']}/packageKeys", {"search": "isPackaged:true"})
    assert [k["id"] for k in keys] == [key["id"]]
    got = api.fetch(f"/applications/{with_key['id']}", {"fields": "id,isPackaged"})
    assert got == {"id": with_key["id"], "isPackaged": True}
    assert "isPackaged" not in api.fetch(f"/applications/{with_key['id']}")  # Exp


def test_key_stays_editable_after_its_plan_is_lowered(
    api: Api, application: dict[str, Any], package: dict[str, Any]
) -> None:
    kid = make_key(api, application["id"], package, rateLimitCeiling=500)["id"]
    gold = plan_of(package, "Gold")
    api.update(f"/packages/{package['id']}/plans/{gold}", {"rateLimitCeiling": 100})
    assert api.update(f"/packageKeys/{kid}", {"status": "waiting"})["status"] == "waiting"
    assert_invalid(api.put(f"/packageKeys/{kid}", {"rateLimitCeiling": 400}), "rateLimitCeiling")
