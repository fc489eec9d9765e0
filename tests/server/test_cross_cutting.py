"""Rules that cut across resources: per-area uniqueness and domain gate, revision numbers of
nested writes, list rules on nested collections, numeric sorting, package/plan filter and
search predicates (spec "Common rules"; SUPPLEMENT §1, §4)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from spec_helpers import (
    AREA_B,
    TOKEN_A,
    TOKEN_B,
    Api,
    approve,
    assert_deleted,
    assert_duplicate,
    assert_invalid,
    describe,
    endpoint_body,
    make_endpoint,
    make_service,
    member_body,
    revision,
    serve,
    with_domains,
)

# the shared `api` fixture (conftest.py) declares the test domains first
WITH_DOMAINS = True


@pytest.fixture
def other(http: httpx.Client) -> Api:
    return Api(http, TOKEN_B)


# areas -----------------------------------------------------------------------------------------


def test_domain_gate_is_per_area(api: Api, other: Api) -> None:
    sid = make_service(other, "Weather")["id"]
    resp = other.post(f"/services/{sid}/endpoints", endpoint_body())
    assert_invalid(resp, "Domains")
    assert other.list("/domains") == []


def test_uniqueness_is_per_area(api: Api, other: Api) -> None:
    make_endpoint(api, make_service(api)["id"])
    with_domains(other)
    make_endpoint(other, make_service(other)["id"])  # same name, same address (no traffic listener)
    other.create("/domains", {"domain": "example.org"})
    other.create("/roles", {"name": "R"})
    api.create("/roles", {"name": "R"})
    api.create("/members", member_body("dev1"))
    other.create("/members", member_body("dev1"))


def test_beside_a_traffic_listener_a_public_domain_belongs_to_the_first_area(tmp_path: Path) -> None:
    """Another area's write that declares the domain is refused at the address, whatever its
    alias, nested in a service or on its own; the domain is free again once the first area's
    services no longer declare it."""
    with serve(tmp_path, exclusive_public_domains=True) as client:
        api, other = Api(client, TOKEN_A), Api(client, TOKEN_B)
        with_domains(api)
        with_domains(other)
        first = make_service(api)["id"]
        make_endpoint(api, first)
        mine = make_service(other)["id"]
        body = {"name": "W2", "endpoints": [endpoint_body(path="/elsewhere")]}
        items = assert_invalid(other.post("/services", body), "endpoints[0].publicDomains[0].address")
        assert any("'api.example.com' belongs to another area" in i["message"] for i in items)
        items = assert_invalid(other.post(f"/services/{mine}/endpoints", endpoint_body()), "publicDomains[0].address")
        assert any("belongs to another area" in i["message"] for i in items)
        make_endpoint(api, first, name="Second", path="/second")  # the owner declares it again at will
        assert other.list(f"/services/{mine}/endpoints") == []
        assert api.delete(f"/services/{first}").status_code < 300
        make_endpoint(other, mine)  # no service of the first area declares it any more
        assert_invalid(api.post("/services", {"name": "Back", "endpoints": [endpoint_body()]}), "publicDomains[0]")


def test_a_claim_left_by_an_area_that_no_longer_declares_the_domain_is_taken_over(tmp_path: Path) -> None:
    """A database written partly without a traffic listener: the first area's service went
    away while domains were shared (its claim stayed); another area may declare the domain."""
    with serve(tmp_path, exclusive_public_domains=True) as client:
        config = client.app.state.server.config  # type: ignore[attr-defined]
        api, other = Api(client, TOKEN_A), Api(client, TOKEN_B)
        with_domains(api)
        with_domains(other)
        first = make_service(api, endpoints=[endpoint_body()])["id"]
        config.exclusive_public_domains = False
        assert api.delete(f"/services/{first}").status_code < 300
        config.exclusive_public_domains = True
        make_service(other, endpoints=[endpoint_body()])
        items = assert_invalid(api.post("/services", {"name": "Back", "endpoints": [endpoint_body()]}),
                               "endpoints[0].publicDomains[0].address")
        assert any("belongs to another area" in i["message"] for i in items)


def test_domains_of_one_area_are_invisible_to_another(api: Api, other: Api) -> None:
    did = api.list("/domains")[0]["id"]
    resp = other.get(f"/domains/{did}")
    assert resp.status_code in (401, 404), describe(resp)
    assert other.list("/domains/public/hostnames") == []


def test_members_and_keys_are_isolated(api: Api, other: Api) -> None:
    member = api.create("/members", member_body("dev1"))
    app = api.create(f"/members/{member['id']}/applications", {"name": "A", "username": "dev1"})
    package = api.create("/packages", {"name": "P", "plans": [{"name": "G"}]}, {"fields": "id,plans"})
    key = api.create(
        f"/applications/{app['id']}/packageKeys",
        {"package": {"id": package["id"]}, "plan": {"id": package["plans"][0]["id"]}},
    )
    assert other.list("/members") == []
    assert other.list("/applications") == []
    assert other.list("/packageKeys") == []
    for path in (f"/members/{member['id']}", f"/applications/{app['id']}", f"/packageKeys/{key['id']}"):
        resp = other.get(path)
        assert resp.status_code in (401, 404), describe(resp)
        assert key["apikey"] not in resp.text
    resp = other.delete(f"/packageKeys/{key['id']}")
    assert resp.status_code in (401, 404), describe(resp)
    assert api.fetch(f"/packageKeys/{key['id']}")["apikey"] == key["apikey"]


# revision numbers ------------------------------------------------------------------------------


def test_revision_counts_every_kind_of_nested_write(api: Api) -> None:
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    steps: list[tuple[str, str, dict[str, Any]]] = [
        ("POST", f"/services/{sid}/endpoints/{eid}/systemDomainAuthentication", {"type": "httpBasic", "username": "u", "password": "p"}),
        ("PUT", f"/services/{sid}/endpoints/{eid}/systemDomainAuthentication", {"username": "v"}),
        ("POST", f"/services/{sid}/securityProfile/oauth", {"accessTokenType": "bearer"}),
        ("POST", f"/services/{sid}/errorSets", {"name": "Second"}),
        ("POST", f"/services/{sid}/endpoints/{eid}/cors", {"maxAge": 1}),
        ("DELETE", f"/services/{sid}/endpoints/{eid}/cache", {}),
        ("PUT", f"/services/{sid}/endpoints", [{"id": eid, "highSecurity": True}]),  # type: ignore[list-item]
    ]
    expected = revision(api, sid)
    for method, path, body in steps:
        resp = api.request(method, path, body if method != "DELETE" else None)
        assert resp.status_code == 200, describe(resp)
        expected += 1
        assert revision(api, sid) == expected, f"{method} {path}"
    mid = api.create(f"/services/{sid}/endpoints/{eid}/methods", {"name": "m"})["id"]
    expected += 1
    api.create(f"/services/{sid}/endpoints/{eid}/methods/{mid}/responseFilters", {"name": "f"})
    expected += 1
    assert revision(api, sid) == expected
    role = api.create("/roles", {"name": "Readers"})
    api.create(f"/services/{sid}/roles", {"id": role["id"], "action": "read"})
    expected += 1
    assert revision(api, sid) == expected


def test_one_nested_put_is_one_revision(api: Api) -> None:
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    before = revision(api, sid)
    api.update(
        f"/services/{sid}",
        {
            "description": "x",
            "endpoints": [{"id": eid, "highSecurity": True}, endpoint_body("Two", "/two")],
        },
    )
    assert revision(api, sid) == before + 1


def test_writes_to_one_service_leave_others_alone(api: Api) -> None:
    one = make_service(api, "One")["id"]
    two = make_service(api, "Two")["id"]
    make_endpoint(api, one)
    api.update(f"/services/{one}", {"description": "x"})
    assert revision(api, two) == 1


def test_failed_nested_write_keeps_revision(api: Api) -> None:
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    before = revision(api, sid)
    resp = api.put(f"/services/{sid}/endpoints/{eid}/cors", {"maxAge": "x"})
    assert_invalid(resp, "maxAge")
    resp = api.post(f"/services/{sid}/endpoints", endpoint_body("Forecast", "/again"))
    assert_duplicate(resp)
    assert revision(api, sid) == before


# nested lists ------------------------------------------------------------------------------------


def test_nested_lists_carry_total_count_and_head(api: Api) -> None:
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    api.create(f"/services/{sid}/endpoints/{eid}/methods", {"name": "a"})
    api.create(f"/services/{sid}/endpoints/{eid}/methods", {"name": "b"})
    esid = api.list(f"/services/{sid}/errorSets")[0]["id"]
    pid = api.create("/packages", {"name": "P", "plans": [{"name": "G"}, {"name": "S"}]})["id"]
    for path, count in (
        (f"/services/{sid}/endpoints", 1),
        (f"/services/{sid}/errorSets", 1),
        (f"/services/{sid}/errorSets/{esid}/errorMessages", 23),
        (f"/services/{sid}/endpoints/{eid}/methods", 2),
        (f"/packages/{pid}/plans", 2),
    ):
        resp = api.get(path, {"limit": "1"})
        assert resp.headers["X-Total-Count"] == str(count), path
        assert len(resp.json()) == 1, path
        head = api.head(path)
        assert head.status_code == 200 and head.content == b"", path
        assert head.headers["X-Total-Count"] == str(count), path


def test_error_messages_paging_and_sort(api: Api) -> None:
    sid = make_service(api)["id"]
    esid = api.list(f"/services/{sid}/errorSets")[0]["id"]
    path = f"/services/{sid}/errorSets/{esid}/errorMessages"
    ids = [m["id"] for m in api.list(path, {"sort": "id", "limit": "1000"})]
    assert ids == sorted(ids)
    page = api.list(path, {"sort": "id", "offset": "5", "limit": "5"})
    assert [m["id"] for m in page] == ids[5:10]
    codes = [m["code"] for m in api.list(path, {"sort": "code:desc"})]
    assert codes == sorted(codes, reverse=True)
    assert {m["code"] for m in api.list(path, {"filter": "id:ERR_401"})} == {401}


def test_fields_on_single_fetch_with_nested_paths(api: Api) -> None:
    sid = make_service(api)["id"]
    make_endpoint(api, sid)
    got = api.fetch(f"/services/{sid}", {"fields": "endpoints.cors.maxAge,endpoints.name"})
    assert set(got) == {"endpoints"}
    (endpoint,) = got["endpoints"]
    assert endpoint == {"name": "Forecast", "cors": {"maxAge": 0}}


# sorting -------------------------------------------------------------------------------------------


def test_numeric_sort_is_numeric(api: Api) -> None:
    pid = api.create(
        "/packages",
        {"name": "P", "plans": [{"name": n, "qpsLimitCeiling": q} for n, q in (("a", 10), ("b", 9), ("c", 100))]},
    )["id"]
    got = api.list(f"/packages/{pid}/plans", {"sort": "qpsLimitCeiling"})
    assert [p["qpsLimitCeiling"] for p in got] == [9, 10, 100]
    got = api.list(f"/packages/{pid}/plans", {"sort": "qpsLimitCeiling:desc"})
    assert [p["qpsLimitCeiling"] for p in got] == [100, 10, 9]


def test_sort_by_created_keeps_creation_order(api: Api) -> None:
    names = ["zeta", "alpha", "mid"]
    for name in names:
        api.create("/roles", {"name": name})
    assert [r["name"] for r in api.list("/roles", {"sort": "created"})] == names


def test_bad_sort_direction_is_400(api: Api) -> None:
    make_service(api)
    resp = api.get("/services", {"sort": "name:sideways"})
    assert resp.status_code == 400, describe(resp)


# package and plan predicates (spec "Common rules" 3) -----------------------------------------------


def test_search_is_ored_with_filter(api: Api) -> None:
    api.create("/packages", {"name": "Alpha", "description": "first"})
    api.create("/packages", {"name": "Beta", "description": "second"})
    api.create("/packages", {"name": "Gamma", "description": "third"})
    got = api.list("/packages", [("filter", "name:Alpha"), ("search", "description:thi")])
    assert sorted(p["name"] for p in got) == ["Alpha", "Gamma"]


def test_plan_filter_null(api: Api) -> None:
    pid = api.create("/packages", {"name": "P"})["id"]
    api.create(f"/packages/{pid}/plans", {"name": "With", "emailTemplateSetId": 5})
    api.create(f"/packages/{pid}/plans", {"name": "Without"})
    got = api.list(f"/packages/{pid}/plans", {"filter": "emailTemplateSetId:null"})
    assert [p["name"] for p in got] == ["Without"]


def test_package_filter_on_nested_plan_property(api: Api) -> None:
    api.create("/packages", {"name": "P1", "plans": [{"name": "Gold"}]})
    api.create("/packages", {"name": "P2", "plans": [{"name": "Silver"}]})
    got = api.list("/packages", {"filter": "plans.name:Gold"})
    assert [p["name"] for p in got] == ["P1"]


def test_unknown_filter_property_on_packages_is_400(api: Api) -> None:
    api.create("/packages", {"name": "P"})
    assert_invalid(api.get("/packages", {"filter": "bogus:1"}), "bogus")


# references ------------------------------------------------------------------------------------------


def test_bulk_update_with_an_endpoint_of_another_service(api: Api) -> None:
    one = make_service(api, "One")["id"]
    two = make_service(api, "Two")["id"]
    mine = make_endpoint(api, one)["id"]
    theirs = make_endpoint(api, two, name="Theirs", path="/theirs")["id"]
    resp = api.put(
        f"/services/{one}/endpoints",
        [{"id": mine, "highSecurity": True}, {"id": theirs, "highSecurity": True}],
    )
    assert resp.status_code in (400, 404), describe(resp)
    assert api.fetch(f"/services/{one}/endpoints/{mine}", {"fields": "highSecurity"})["highSecurity"] is False
    assert api.fetch(f"/services/{two}/endpoints/{theirs}", {"fields": "highSecurity"})["highSecurity"] is False


def test_bulk_update_needs_ids(api: Api) -> None:
    sid = make_service(api)["id"]
    make_endpoint(api, sid)
    assert_invalid(api.put(f"/services/{sid}/endpoints", [{"highSecurity": True}]), "id")


def test_hostnames_follow_endpoint_deletion(api: Api) -> None:
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    assert [h["address"] for h in api.list("/domains/public/hostnames")] == ["api.example.com"]
    assert_deleted(api.delete(f"/services/{sid}/endpoints/{eid}"))
    assert api.list("/domains/public/hostnames") == []
    assert api.list("/domains/system/hostnames") == []


def test_domain_rename_to_existing_is_duplicate(api: Api) -> None:
    did = api.create("/domains", {"domain": "example.org"})["id"]
    assert_duplicate(api.put(f"/domains/{did}", {"domain": "example.com"}))


def test_key_limits_reflect_the_plan(api: Api) -> None:
    member = api.create("/members", member_body("dev1"))
    app = api.create(f"/members/{member['id']}/applications", {"name": "A", "username": "dev1"})
    package = api.create(
        "/packages",
        {"name": "P", "plans": [{"name": "G", "rateLimitCeiling": 1000, "rateLimitPeriod": "day", "qpsLimitCeiling": 7}]},
        {"fields": "id,plans"},
    )
    key = api.create(
        f"/applications/{app['id']}/packageKeys",
        {"package": {"id": package["id"]}, "plan": {"id": package["plans"][0]["id"]}},
    )
    limits = api.fetch(f"/packageKeys/{key['id']}", {"fields": "limits"})["limits"]
    pairs = {(limit["period"], limit["ceiling"]) for limit in limits}
    assert ("day", 1000) in pairs
    assert ("second", 7) in pairs


def test_indent_where_the_specification_accepts_it(api: Api) -> None:
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    esid = api.list(f"/services/{sid}/errorSets")[0]["id"]
    pid = api.create("/packages", {"name": "P"})["id"]
    plan_id = api.create(f"/packages/{pid}/plans", {"name": "G"})["id"]
    event = api.create(
        "/scheduledMaintenanceEvents",
        {"name": "E", "startDateTime": "2030-01-01T00:00:00Z", "endDateTime": "2030-01-02T00:00:00Z"},
    )
    api.create(f"/services/{sid}/endpoints/{eid}/scheduledMaintenanceEvent", {"id": event["id"]})
    template_set = api.list("/emailTemplateSets")
    paths = [
        f"/services/{sid}/endpoints/{eid}/cors",
        f"/services/{sid}/endpoints/{eid}/cache",
        f"/services/{sid}/endpoints/{eid}/scheduledMaintenanceEvent",
        f"/packages/{pid}/plans/{plan_id}",
        f"/scheduledMaintenanceEvents/{event['id']}",
        f"/services/{sid}/errorSets/{esid}",
        f"/services/{sid}/errorSets/{esid}/errorMessages/ERR_400_BAD_REQUEST",
    ]
    for ts in template_set[:1]:
        for template in api.list(f"/emailTemplateSets/{ts['id']}/emailTemplates")[:1]:
            paths.append(f"/emailTemplateSets/{ts['id']}/emailTemplates/{template['id']}")
    for path in paths:
        plain = api.get(path)
        indented = api.get(path, {"indent": "true"})
        assert indented.status_code == 200, describe(indented)
        assert indented.json() == plain.json(), path
        assert "\n" in indented.text, path


def test_operator_approval_is_per_area(api: Api, http: httpx.Client) -> None:
    did = api.create("/domains", {"domain": "example.org"})["id"]
    resp = approve(http, AREA_B, did)
    assert resp.status_code == 404, describe(resp)


def test_exp_collections_of_members_and_applications(api: Api) -> None:
    member = api.create("/members", member_body("dev1"))
    app = api.create(f"/members/{member['id']}/applications", {"name": "A", "username": "dev1"})
    package = api.create("/packages", {"name": "P", "plans": [{"name": "G"}]}, {"fields": "id,plans"})
    key = api.create(
        f"/applications/{app['id']}/packageKeys",
        {"package": {"id": package["id"]}, "plan": {"id": package["plans"][0]["id"]}},
    )
    got = api.fetch(f"/applications/{app['id']}", {"fields": "id,packageKeys"})
    assert [k["id"] for k in got["packageKeys"]] == [key["id"]]
    got = api.fetch(f"/members/{member['id']}", {"fields": "id,packageKeys,roles,applications"})
    assert [k["id"] for k in got["packageKeys"]] == [key["id"]]
    assert isinstance(got["roles"], list)
    assert [a["id"] for a in got["applications"]] == [app["id"]]


# every collection: HEAD, X-Total-Count, delete of a missing item ----------------------------------


@pytest.fixture(scope="module")
def world_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """A server shared by the read-only checks below (they change nothing)."""
    with serve(tmp_path_factory.mktemp("world")) as client:
        a = Api(client, TOKEN_A)
        with_domains(a)
        yield a


@pytest.fixture(scope="module")
def world(world_api: Api) -> dict[str, str]:
    """One object of every kind, wired together."""
    api = world_api
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    mid = api.create(f"/services/{sid}/endpoints/{eid}/methods", {"name": "m"})["id"]
    rid = api.create("/roles", {"name": "R"})["id"]
    api.create(f"/services/{sid}/roles", {"id": rid, "action": "read"})
    package = api.create(
        "/packages",
        {"name": "P", "plans": [{"name": "G", "services": [{"id": sid, "endpoints": [{"id": eid}]}]}]},
        {"fields": "id,plans"},
    )
    pid, plan_id = package["id"], package["plans"][0]["id"]
    api.create(f"/packages/{pid}/plans/{plan_id}/roles", {"id": rid, "action": "register_keys"})
    evid = api.create(
        "/scheduledMaintenanceEvents",
        {"name": "E", "startDateTime": "2030-01-01T00:00:00Z", "endDateTime": "2030-01-02T00:00:00Z"},
    )["id"]
    api.create(f"/scheduledMaintenanceEvents/{evid}/endpoints", {"id": eid})
    member_id = api.create("/members", member_body("dev1"))["id"]
    app_id = api.create(f"/members/{member_id}/applications", {"name": "A", "username": "dev1"})["id"]
    api.create(f"/applications/{app_id}/packageKeys", {"package": {"id": pid}, "plan": {"id": plan_id}})
    esid = api.list(f"/services/{sid}/errorSets")[0]["id"]
    return {
        "sid": sid, "eid": eid, "mid": mid, "rid": rid, "pid": pid, "plan": plan_id,
        "evid": evid, "member": member_id, "app": app_id, "esid": esid,
    }


NESTED_LISTS = [
    "/services/{sid}/endpoints",
    "/services/{sid}/errorSets",
    "/services/{sid}/errorSets/{esid}/errorMessages",
    "/services/{sid}/endpoints/{eid}/methods",
    "/services/{sid}/endpoints/{eid}/methods/{mid}/responseFilters",
    "/services/{sid}/roles",
    "/packages/{pid}/plans",
    "/packages/{pid}/plans/{plan}/services",
    "/packages/{pid}/plans/{plan}/services/{sid}/endpoints",
    "/packages/{pid}/plans/{plan}/services/{sid}/endpoints/{eid}/methods",
    "/packages/{pid}/plans/{plan}/roles",
    "/scheduledMaintenanceEvents/{evid}/endpoints",
    "/members/{member}/applications",
    "/applications/{app}/packageKeys",
    "/domains/public/hostnames",
    "/domains/system/hostnames",
]


@pytest.mark.parametrize("template", NESTED_LISTS)
def test_every_list_has_total_count_and_head(
    world_api: Api, world: dict[str, str], template: str
) -> None:
    api = world_api
    path = template.format(**world)
    got = api.get(path)
    assert got.status_code == 200, describe(got)
    assert isinstance(got.json(), list), describe(got)
    assert got.headers["X-Total-Count"] == str(len(got.json())), path
    head = api.head(path)
    assert head.status_code == 200, describe(head)
    assert head.content == b""
    assert head.headers["X-Total-Count"] == got.headers["X-Total-Count"]


MISSING = "00000000-0000-0000-0000-000000000000"
MISSING24 = "aaaaaaaaaaaaaaaaaaaaaaaa"
DELETABLE = [
    "/services/" + MISSING24,
    "/services/{sid}/endpoints/" + MISSING24,
    "/services/{sid}/errorSets/" + MISSING,
    "/services/{sid}/endpoints/{eid}/methods/" + MISSING,
    "/services/{sid}/endpoints/{eid}/methods/{mid}/responseFilters/" + MISSING,
    "/services/{sid}/roles/" + MISSING,
    "/packages/" + MISSING,
    "/packages/{pid}/plans/" + MISSING,
    "/packages/{pid}/plans/{plan}/services/" + MISSING24,
    "/packages/{pid}/plans/{plan}/services/{sid}/endpoints/" + MISSING24,
    "/packages/{pid}/plans/{plan}/services/{sid}/endpoints/{eid}/methods/" + MISSING,
    "/packages/{pid}/plans/{plan}/roles/" + MISSING,
    "/roles/" + MISSING,
    "/scheduledMaintenanceEvents/" + MISSING,
    "/scheduledMaintenanceEvents/{evid}/endpoints/" + MISSING24,
    "/members/" + MISSING,
    "/members/{member}/applications/" + MISSING,
    "/applications/" + MISSING,
    "/applications/{app}/packageKeys/" + MISSING,
    "/packageKeys/" + MISSING,
]


@pytest.mark.parametrize("template", DELETABLE)
def test_delete_and_fetch_of_a_missing_item_is_404(
    world_api: Api, world: dict[str, str], template: str
) -> None:
    from spec_helpers import assert_error

    api = world_api
    path = template.format(**world)
    assert_error(api.delete(path), 404)
    assert_error(api.get(path), 404)


TIMESTAMPED = [
    ("/services/{sid}", "ms"),
    ("/services/{sid}/endpoints/{eid}", "ms"),
    ("/services/{sid}/endpoints/{eid}/methods/{mid}", "ms"),
    ("/packages/{pid}", "ms"),
    ("/packages/{pid}/plans/{plan}", "ms"),
    ("/roles/{rid}", "ms"),
    ("/scheduledMaintenanceEvents/{evid}", "ms"),
    ("/members/{member}", "z"),
    ("/applications/{app}", "z"),
]


@pytest.mark.parametrize(("template", "style"), TIMESTAMPED)
def test_timestamp_renderings(
    world_api: Api, world: dict[str, str], template: str, style: str
) -> None:
    api = world_api
    import re

    from spec_helpers import MS_TIME_RE, Z_TIME_RE

    got = api.fetch(template.format(**world), {"fields": "id,created,updated"})
    pattern = MS_TIME_RE if style == "ms" else Z_TIME_RE
    assert re.match(pattern, got["created"]), got
    assert re.match(pattern, got["updated"]), got


def test_service_updated_moves_with_nested_writes(api: Api) -> None:
    import time

    sid = make_service(api)["id"]
    before = api.fetch(f"/services/{sid}")["updated"]
    time.sleep(0.01)
    make_endpoint(api, sid)
    after = api.fetch(f"/services/{sid}")["updated"]
    assert after > before


def test_deletes_leave_no_dangling_references(api: Api) -> None:
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    rid = api.create("/roles", {"name": "R"})["id"]
    api.create(f"/services/{sid}/roles", {"id": rid, "action": "read"})
    package = api.create(
        "/packages",
        {"name": "P", "plans": [{"name": "G", "services": [{"id": sid, "endpoints": [{"id": eid}]}]}]},
        {"fields": "id,plans"},
    )
    plan_path = f"/packages/{package['id']}/plans/{package['plans'][0]['id']}"
    api.create(f"{plan_path}/roles", {"id": rid, "action": "register_keys"})
    event = api.create(
        "/scheduledMaintenanceEvents",
        {
            "name": "E",
            "startDateTime": "2030-01-01T00:00:00Z",
            "endDateTime": "2030-01-02T00:00:00Z",
            "endpoints": [{"id": eid}],
        },
    )
    assert_deleted(api.delete(f"/roles/{rid}"))
    assert api.list(f"/services/{sid}/roles") == []
    assert api.list(f"{plan_path}/roles") == []
    assert_deleted(api.delete(f"/services/{sid}/endpoints/{eid}"))
    assert api.list(f"/scheduledMaintenanceEvents/{event['id']}/endpoints") == []
    for entitled in api.list(f"{plan_path}/services"):
        assert entitled["endpoints"] == []
    assert_deleted(api.delete(f"/services/{sid}"))
    assert api.list(f"{plan_path}/services") == []


def test_duplicates_inside_nested_and_bulk_writes(api: Api) -> None:
    pid = api.create("/packages", {"name": "P", "plans": [{"name": "Gold"}]})["id"]
    assert_duplicate(api.put(f"/packages/{pid}", {"plans": [{"name": "Gold"}]}))
    assert_duplicate(api.post("/packages", {"name": "Q", "plans": [{"name": "A"}, {"name": "A"}]}))
    sid = make_service(api)["id"]
    one = make_endpoint(api, sid, name="One", path="/one")["id"]
    two = make_endpoint(api, sid, name="Two", path="/two")["id"]
    resp = api.put(
        f"/services/{sid}/endpoints",
        [{"id": one, "requestPathAlias": "/same"}, {"id": two, "requestPathAlias": "/same"}],
    )
    assert_duplicate(resp)
    resp = api.put(f"/services/{sid}", {"endpoints": [{"id": one, "name": "Two"}]})
    assert_duplicate(resp)
    paths = sorted(
        e["requestPathAlias"]
        for e in api.list(f"/services/{sid}/endpoints", {"fields": "requestPathAlias"})
    )
    assert paths == ["/one", "/two"]
    # swapping two names in one call is fine: the result has no duplicate
    resp = api.put(
        f"/services/{sid}/endpoints",
        [{"id": one, "requestPathAlias": "/two"}, {"id": two, "requestPathAlias": "/one"}],
    )
    assert resp.status_code == 200, describe(resp)


IMP_FIELDS = {
    "/services/{sid}": {"id", "name", "version"},
    "/services/{sid}/endpoints/{eid}": {"id", "name"},
    "/packages/{pid}": {
        "id", "name", "description", "notifyDeveloperPeriod", "notifyAdminPeriod",
        "notifyAdminEmails", "nearQuotaThreshold", "keyAdapter", "keyLength", "sharedSecretLength",
    },
    "/packages/{pid}/plans/{plan}": {
        "id", "name", "description", "selfServiceKeyProvisioningEnabled",
        "adminKeyProvisioningEnabled", "maxNumKeysAllowed", "numKeysBeforeReview",
        "qpsLimitCeiling", "qpsLimitExempt", "qpsLimitKeyOverrideAllowed", "rateLimitCeiling",
        "rateLimitExempt", "rateLimitKeyOverrideAllowed", "rateLimitPeriod",
        "responseFilterOverrideAllowed", "status",
    },
    "/members/{member}": {
        "id", "username", "email", "displayName", "externalId", "uri", "blog", "im", "imsvc",
        "phone", "company", "address1", "address2", "locality", "region", "postalCode",
        "countryCode", "firstName", "lastName", "areaStatus",
    },
    "/applications/{app}": {
        "id", "name", "username", "description", "type", "adsSystem", "usageModel", "tags",
        "notes", "howDidYouHear", "preferredProtocol", "preferredOutput", "externalId", "uri",
        "oauthRedirectUri", "commercial", "ads",
    },
    "/scheduledMaintenanceEvents/{evid}": {"id", "name", "startDateTime", "endDateTime", "endpoints"},
}


@pytest.mark.parametrize("template", sorted(IMP_FIELDS))
def test_default_rendering_is_exactly_the_imp_fields(
    world_api: Api, world: dict[str, str], template: str
) -> None:
    """Spec "Common rules" 2: without `fields` only Imp fields are returned (plus the
    standard timestamps of rule 2; `passwdNew` is write-only, SUPPLEMENT §2)."""
    got = world_api.fetch(template.format(**world))
    assert set(got) - {"created", "updated"} == IMP_FIELDS[template]


def test_default_rendering_of_a_package_key(world_api: Api, world: dict[str, str]) -> None:
    (key,) = world_api.list(f"/applications/{world['app']}/packageKeys")
    expected = {
        "id", "apikey", "secret", "rateLimitCeiling", "rateLimitExempt", "qpsLimitCeiling",
        "qpsLimitExempt", "status", "package", "plan",
    }
    assert set(key) - {"created", "updated"} == expected
