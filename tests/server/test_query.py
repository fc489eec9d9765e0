"""Read parameters: fields, filter, sort, limit, offset, indent, X-Total-Count, HEAD
(spec "Common rules" 2; SUPPLEMENT §1)."""

from __future__ import annotations

import pytest
from spec_helpers import (
    Api,
    assert_invalid,
    describe,
    endpoint_body,
    make_service,
    member_body,
)

# the shared `api` fixture (conftest.py) declares the test domains first
WITH_DOMAINS = True


@pytest.fixture
def services(api: Api) -> list[str]:
    """Three services; Weather has two endpoints, Climate one, Maps none."""
    ids = []
    weather = make_service(api, "Weather", version="2", description="forecasts and more")
    api.create(
        f"/services/{weather['id']}/endpoints",
        endpoint_body("Forecast", "/forecast", cors={"maxAge": 60}),
    )
    api.create(f"/services/{weather['id']}/endpoints", endpoint_body("Radar", "/radar"))
    ids.append(weather["id"])
    climate = make_service(api, "Climate", version="1", description="long term")
    api.create(f"/services/{climate['id']}/endpoints", endpoint_body("Trends", "/trends"))
    ids.append(climate["id"])
    ids.append(make_service(api, "Maps", version="3")["id"])
    return ids


# fields ----------------------------------------------------------------------------------------


def test_without_fields_only_imp(api: Api, services: list[str]) -> None:
    for svc in api.list("/services"):
        assert set(svc) == {"id", "name", "created", "updated", "version"}, svc


def test_fields_selects_exactly(api: Api, services: list[str]) -> None:
    listed = api.list("/services", {"fields": "id,description"})
    for svc in listed:
        assert set(svc) == {"id", "description"}


def test_fields_is_repeatable(api: Api, services: list[str]) -> None:
    listed = api.list("/services", [("fields", "id"), ("fields", "description")])
    for svc in listed:
        assert set(svc) == {"id", "description"}


def test_unknown_field_names_are_ignored(api: Api, services: list[str]) -> None:
    listed = api.list("/services", {"fields": "id,name,noSuchField,endpoints.noSuchEither"})
    assert all("noSuchField" not in svc for svc in listed)
    assert {svc["name"] for svc in listed} == {"Weather", "Climate", "Maps"}


def test_bare_nested_collection_gives_imp_fields(api: Api, services: list[str]) -> None:
    listed = api.list("/services", {"fields": "id,name,endpoints"})
    by_name = {svc["name"]: svc for svc in listed}
    assert sorted(e["name"] for e in by_name["Weather"]["endpoints"]) == ["Forecast", "Radar"]
    assert by_name["Maps"]["endpoints"] == []
    for endpoint in by_name["Weather"]["endpoints"]:
        assert "id" in endpoint and "name" in endpoint
        assert "requestPathAlias" not in endpoint  # Exp of Endpoint
        assert "cors" not in endpoint


def test_nested_paths_select_nested_fields(api: Api, services: list[str]) -> None:
    listed = api.list("/services", {"fields": "name,endpoints.cors,endpoints.name"})
    by_name = {svc["name"]: svc for svc in listed}
    endpoints = {e["name"]: e for e in by_name["Weather"]["endpoints"]}
    assert set(endpoints["Forecast"]) == {"cors", "name"}
    assert endpoints["Forecast"]["cors"]["maxAge"] == 60
    assert endpoints["Radar"]["cors"]["maxAge"] == 0


def test_star_gives_every_nested_field(api: Api, services: list[str]) -> None:
    listed = api.list("/services", {"fields": "id,name,endpoints.*"})
    weather = next(svc for svc in listed if svc["name"] == "Weather")
    for endpoint in weather["endpoints"]:
        for key in (
            "id",
            "name",
            "requestPathAlias",
            "trafficManagerDomain",
            "publicDomains",
            "systemDomains",
            "supportedHttpMethods",
            "cors",
            "cache",
            "processor",
            "connectionTimeoutForSystemDomainRequest",
        ):
            assert key in endpoint, key
        assert isinstance(endpoint["cors"], dict)
        assert "allDomainsEnabled" in endpoint["cors"]


def test_one_call_reads_services_with_error_sets(api: Api, services: list[str]) -> None:
    listed = api.list("/services", {"fields": "id,name,errorSets.*"})
    for svc in listed:
        (error_set,) = svc["errorSets"]
        assert error_set["name"] == "Default"
        assert len(error_set["errorMessages"]) == 23


# filter ----------------------------------------------------------------------------------------


def test_filter_is_a_substring_match(api: Api, services: list[str]) -> None:
    assert sorted(s["name"] for s in api.list("/services", {"filter": "name:at"})) == [
        "Climate",
        "Weather",
    ]
    assert api.list("/services", {"filter": "name:zzz"}) == []


def test_filter_on_exp_field(api: Api, services: list[str]) -> None:
    got = api.list("/services", {"filter": "description:forecast"})
    assert [s["name"] for s in got] == ["Weather"]


def test_filter_on_nested_path(api: Api, services: list[str]) -> None:
    got = api.list("/services", {"filter": "endpoints.name:Trend"})
    assert [s["name"] for s in got] == ["Climate"]
    got = api.list("/services", {"filter": "endpoints.requestPathAlias:/radar"})
    assert [s["name"] for s in got] == ["Weather"]


def test_repeated_filters(api: Api, services: list[str]) -> None:
    got = api.list("/services", [("filter", "name:Weath"), ("filter", "version:2")])
    assert [s["name"] for s in got] == ["Weather"]


def test_filter_value_may_contain_a_colon(api: Api, services: list[str]) -> None:
    api.create("/roles", {"name": "team:alpha"})
    api.create("/roles", {"name": "team-beta"})
    assert [r["name"] for r in api.list("/roles", {"filter": "name:team:al"})] == ["team:alpha"]


@pytest.mark.parametrize("param", ["filter", "sort"])
def test_unknown_filter_or_sort_property_is_400(api: Api, services: list[str], param: str) -> None:
    value = "noSuchProperty:x" if param == "filter" else "noSuchProperty"
    assert_invalid(api.get("/services", {param: value}), "noSuchProperty")


def test_filter_on_child_collection(api: Api, services: list[str]) -> None:
    sid = services[0]
    got = api.list(f"/services/{sid}/endpoints", {"filter": "name:Rad"})
    assert [e["name"] for e in got] == ["Radar"]


# sort ------------------------------------------------------------------------------------------


def test_sort_default_ascending(api: Api, services: list[str]) -> None:
    names = [s["name"] for s in api.list("/services", {"sort": "name"})]
    assert names == ["Climate", "Maps", "Weather"]
    names = [s["name"] for s in api.list("/services", {"sort": "name:asc"})]
    assert names == ["Climate", "Maps", "Weather"]


def test_sort_descending(api: Api, services: list[str]) -> None:
    names = [s["name"] for s in api.list("/services", {"sort": "name:desc"})]
    assert names == ["Weather", "Maps", "Climate"]


def test_sort_by_several_properties(api: Api) -> None:
    for name, description in (("b", "1"), ("a", "2"), ("c", "1")):
        make_service(api, name, description=description)
    got = api.list("/services", {"sort": "description:desc,name:asc", "fields": "name"})
    assert [s["name"] for s in got] == ["a", "b", "c"]


# limit, offset, X-Total-Count ---------------------------------------------------------------------


def test_total_count_is_after_filter_before_paging(api: Api, services: list[str]) -> None:
    resp = api.get("/services", {"filter": "name:at", "limit": "1"})
    assert resp.status_code == 200, describe(resp)
    assert len(resp.json()) == 1
    assert resp.headers["X-Total-Count"] == "2"
    resp = api.get("/services")
    assert resp.headers["X-Total-Count"] == "3"


def test_offset_is_an_item_index_for_services(api: Api, services: list[str]) -> None:
    got = api.list("/services", {"sort": "name", "offset": "1", "limit": "1"})
    assert [s["name"] for s in got] == ["Maps"]
    got = api.list("/services", {"sort": "name", "offset": "2", "limit": "2"})
    assert [s["name"] for s in got] == ["Weather"]
    assert api.list("/services", {"offset": "3"}) == []


def test_offset_is_an_item_index_for_plans(api: Api) -> None:
    names = [f"plan-{i}" for i in range(6)]
    pid = api.create("/packages", {"name": "P", "plans": [{"name": n} for n in names]})["id"]
    got = api.list(f"/packages/{pid}/plans", {"sort": "name", "offset": "2", "limit": "2"})
    assert [p["name"] for p in got] == names[2:4]


def test_limit_default_and_maximum(api: Api) -> None:
    plans = [{"name": f"plan-{i:04d}"} for i in range(1005)]
    pid = api.create("/packages", {"name": "Big", "plans": plans})["id"]
    path = f"/packages/{pid}/plans"
    resp = api.get(path)
    assert len(resp.json()) == 100
    assert resp.headers["X-Total-Count"] == "1005"
    assert len(api.list(path, {"limit": "1000"})) == 1000
    assert len(api.list(path, {"limit": "5000"})) == 1000  # clamped
    assert len(api.list(path, {"limit": "1000", "offset": "1000"})) == 5


@pytest.mark.parametrize(
    "params",
    [{"limit": "many"}, {"offset": "x"}, {"limit": "1.5"}],
)
def test_bad_paging_values_are_400(api: Api, services: list[str], params: dict[str, str]) -> None:
    resp = api.get("/services", params)
    assert resp.status_code == 400, describe(resp)
    assert "Traceback" not in resp.text


BEYOND_64_BITS = "99999999999999999999999"


@pytest.mark.parametrize("param", ["offset", "limit"])
@pytest.mark.parametrize("path", ["/services", "/members", "/roles", "/packageKeys"])
def test_paging_values_beyond_64_bits_are_400(api: Api, services: list[str], path: str, param: str) -> None:
    for value in (BEYOND_64_BITS, str(2**63)):
        resp = api.get(path, {param: value})
        items = assert_invalid(resp, param)
        assert [i["property"] for i in items] == [param], describe(resp)


def test_largest_paging_values_are_empty_pages(api: Api, services: list[str]) -> None:
    biggest = str(2**63 - 1)
    for path in ("/services", "/members", "/roles"):  # item index; page index (x limit)
        resp = api.get(path, {"offset": biggest})
        assert resp.status_code == 200, describe(resp)
        assert resp.json() == []
    assert api.get("/services", {"offset": biggest, "sort": "name"}).json() == []
    assert len(api.list("/services", {"limit": biggest})) == 3  # clamped to the maximum


# indent, HEAD ----------------------------------------------------------------------------------


def test_indent(api: Api, services: list[str]) -> None:
    plain = api.get("/services")
    indented = api.get("/services", {"indent": "true"})
    assert indented.status_code == 200
    assert indented.json() == plain.json()
    assert "\n" in indented.text
    assert len(indented.text) > len(plain.text)


def test_indent_on_single_objects(api: Api, services: list[str]) -> None:
    sid = services[0]
    eid = api.list(f"/services/{sid}/endpoints")[0]["id"]
    resp = api.get(f"/services/{sid}/endpoints/{eid}/cors", {"indent": "true"})
    assert resp.status_code == 200
    assert "\n" in resp.text


@pytest.mark.parametrize(
    "path",
    [
        "/services",
        "/packages",
        "/roles",
        "/domains",
        "/members",
        "/applications",
        "/packageKeys",
        "/scheduledMaintenanceEvents",
        "/organizations",
        "/emailTemplateSets",
    ],
)
def test_head_on_every_list(api: Api, services: list[str], path: str) -> None:
    got = api.get(path)
    head = api.head(path)
    assert head.status_code == 200, describe(head)
    assert head.content == b""
    assert head.headers["X-Total-Count"] == got.headers["X-Total-Count"]
    assert int(got.headers["X-Total-Count"]) == len(got.json())


def test_head_on_nested_list_with_filter(api: Api, services: list[str]) -> None:
    sid = services[0]
    head = api.head(f"/services/{sid}/endpoints", {"filter": "name:Rad"})
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["X-Total-Count"] == "1"


def test_filter_on_nested_singleton_of_a_child_collection(api: Api, services: list[str]) -> None:
    sid = services[0]
    got = api.list(f"/services/{sid}/endpoints", {"filter": "cors.maxAge:60"})
    assert [e["name"] for e in got] == ["Forecast"]
    got = api.list("/services", {"filter": "endpoints.cors.maxAge:60"})
    assert [s["name"] for s in got] == ["Weather"]


# paging without filter or sort reads the page only (same answers as the general path) ------------


def test_unsorted_pages_match_the_sorted_general_path(api: Api) -> None:
    made = [make_service(api, f"S{i:02d}")["id"] for i in range(7)]
    fields = {"fields": "id,name,endpoints.*"}
    pages = [api.get("/services", {"limit": "3", "offset": str(k), **fields}) for k in (0, 3, 6, 9)]
    assert [p.headers["X-Total-Count"] for p in pages] == ["7"] * 4
    assert [s["id"] for p in pages for s in p.json()] == made  # creation order, item offsets
    by_filter = api.list("/services", {"filter": "name:S", "limit": "3", "offset": "3", **fields})
    assert by_filter == pages[1].json()
    indented = api.get("/services", {"limit": "3", "indent": "true", **fields})
    assert "\n" in indented.text and indented.json() == pages[0].json()
    head = api.head("/services", {"limit": "3"})
    assert head.status_code == 200 and head.content == b"" and head.headers["X-Total-Count"] == "7"


def test_member_pages_without_sort_are_page_indexes(api: Api) -> None:
    names = [f"dev{i}" for i in range(5)]
    for name in names:
        api.create("/members", member_body(name))
    got = api.list("/members", {"limit": "2", "offset": "1"})
    assert [m["username"] for m in got] == names[2:4]
    assert all("passwdNew" not in m for m in got)
