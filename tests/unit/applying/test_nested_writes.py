"""The generic writer of nested parts, one strategy at a time, against a recording fake client:
the exact calls each strategy makes (kinds.nested_writes, applying.collections)."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

from apimctl import kinds, platform
from apimctl.applying.bodies import BodyBuilder, LiveIndex
from apimctl.applying.writes import Writer
from apimctl.errors import NotFound
from apimctl.kinds import Kind
from apimctl.kinds.dialects import MASHERY
from apimctl.kinds.nested_writes import Entitlements, KeyedItems
from apimctl.kinds.ops import Ops
from apimctl.kinds.projections import created_fields, tree_fields
from apimctl.plans.model import DUPLICATES, Change, Plan, Step

from .fakes import NO_WAIT, FakeClient

QPS = "ERR_403_DEVELOPER_OVER_QPS"
IDS = {"role:A": "r1", "role:B": "r2", "service:W": "S1", "service:V": "S2",
       "endpoint:W/A": "A1", "endpoint:W/B": "B1", "endpoint:W/C": "C1", "endpoint:V/X": "X1",
       "method:W/A/get": "M1", "method:W/A/post": "M2"}


def update(client: FakeClient, step: Step, dialect: str = "", env: dict[str, str] | None = None) -> Writer:
    """Carry out one update step; answer the writer (its index grows with what it made)."""
    w = Writer(client, Plan(steps=[step], dialect=dialect), LiveIndex(ids=dict(IDS)), env=env or {},
               backoff=NO_WAIT)
    asyncio.run(w.update(step))
    return w


def service(changes: tuple[Change, ...], **desired: Any) -> Step:
    return Step("update", "service", "W", id="s1", changes=changes, desired={"name": "W", **desired})


def endpoint(changes: tuple[Change, ...], **desired: Any) -> Step:
    return Step("update", "endpoint", "W/F", id="f1", parent="service:W", parent_id="s1",
                changes=changes, desired={"name": "F", **desired})


def plan(changes: tuple[Change, ...], **desired: Any) -> Step:
    return Step("update", "plan", "Pkg/Gold", id="p1", parent="package:Pkg", parent_id="k1",
                changes=changes, desired={"name": "Gold", **desired})


# --- links ------------------------------------------------------------------------------------


def test_named_links_add_in_manifest_order_and_remove_by_name() -> None:
    client = FakeClient({("GET", "/services/s1/roles"): [[{"id": "r1", "name": "A"}, {"id": "r3", "name": "C"}]]})
    update(client, service((Change("roles", ["A", "C"], ["B", "A"]),), roles=["B", "A"]))
    assert client.calls == [
        ("GET", "/services/s1/roles", {"fields": "id,name"}),  # named: SUPPLEMENT §10.10.8
        ("POST", "/services/s1/roles", {"id": "r2", "name": "B", "action": "read"}),
        ("DELETE", "/services/s1/roles/r3", None),
    ]


def test_links_the_dialect_writes_whole_are_one_put_or_one_delete() -> None:
    client = FakeClient()
    update(client, plan((Change("roles", [], ["A", "B"]),), roles=["A", "B"]), dialect="mashery")
    assert client.calls == [("PUT", "/packages/k1/plans/p1/roles", {
        "roles": [{"id": "r1", "action": "register_keys"}, {"id": "r2", "action": "register_keys"}]})]
    client = FakeClient()
    update(client, plan((Change("roles", ["A"], []),), roles=[]), dialect="mashery")
    assert client.calls == [("DELETE", "/packages/k1/plans/p1/roles", None)]


def test_links_by_id_go_in_id_order_and_a_link_held_twice_is_made_again() -> None:
    path = "/scheduledMaintenanceEvents/v1/endpoints"
    client = FakeClient({("GET", path): [[{"id": "B1"}, {"id": "B1"}, {"id": "C1"}]]})
    step = Step("update", "maintenanceEvent", "Up", id="v1", changes=(Change("endpoints", [], []),),
                desired={"name": "Up", "endpoints": [{"service": "W", "endpoint": "B"},
                                                     {"service": "W", "endpoint": "A"}]})
    update(client, step)
    assert client.calls == [("GET", path, {"fields": "id,name"}), ("DELETE", f"{path}/B1", None),
                            ("POST", path, {"id": "A1"}), ("POST", path, {"id": "B1"}),
                            ("DELETE", f"{path}/C1", None)]


def test_links_by_id_repaired_when_the_manifest_leaves_them_out() -> None:
    path = "/scheduledMaintenanceEvents/v1/endpoints"
    client = FakeClient({("GET", path): [[{"id": "A1"}, {"id": "A1"}, {"id": "C1"}]]})
    repair = Change(f"endpoints[W/A]{DUPLICATES}", ["A1", "A1"], ["A1"])
    update(client, Step("update", "maintenanceEvent", "Up", id="v1", changes=(repair,), desired={"name": "Up"}))
    assert client.writes() == [("DELETE", f"{path}/A1", None)]  # the other links are left alone
    client = FakeClient()  # nothing listed, nothing to repair: not even read
    update(client, Step("update", "maintenanceEvent", "Up", id="v1", changes=(Change("endpoints", [], None),),
                        desired={"name": "Up"}))
    assert client.calls == []


# --- keyed items ------------------------------------------------------------------------------

METHODS = "/services/S1/endpoints/f1/methods"


def _method(mid: str, name: str, filters: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": mid, "name": name, "sampleJsonResponse": "", "sampleXmlResponse": "",
            **({"responseFilters": filters} if filters is not None else {})}


def test_keyed_items_are_updated_created_and_deleted_with_their_nested_items() -> None:
    old_filter = {"id": "f9", "name": "old", "notes": "", "jsonFilterFields": "", "xmlFilterFields": ""}
    client = FakeClient({("GET", METHODS): [[_method("m1", "get", [old_filter]), _method("m2", "gone", [])]]})
    methods = [{"name": "get", "sampleJsonResponse": "{}", "responseFilters": [{"name": "pub", "notes": "n"}]},
               {"name": "new"}]
    w = update(client, endpoint((Change("methods[get].sampleJsonResponse", "", "{}"),), methods=methods))
    assert client.calls == [
        ("GET", METHODS, {"fields": ",".join(KeyedItems(defaults=kinds.METHOD_DEFAULTS, nested={
            "responseFilters": KeyedItems(defaults=kinds.RESPONSE_FILTER_DEFAULTS)}).fields())}),
        ("PUT", f"{METHODS}/m1", {"name": "get", "sampleJsonResponse": "{}", "sampleXmlResponse": ""}),
        ("POST", f"{METHODS}/m1/responseFilters",
         {"name": "pub", "notes": "n", "jsonFilterFields": "", "xmlFilterFields": ""}),
        ("DELETE", f"{METHODS}/m1/responseFilters/f9", None),
        ("POST", METHODS, {"name": "new", "sampleJsonResponse": "", "sampleXmlResponse": ""}),
        ("DELETE", f"{METHODS}/m2", None),
    ]
    assert w.index.ids["method:W/F/new"] == "id2"  # a plan may entitle it next


def test_keyed_items_unchanged_are_not_written_and_missing_nested_lists_are_read() -> None:
    client = FakeClient({("GET", METHODS): [[_method("m1", "get")]],
                         ("GET", f"{METHODS}/m1/responseFilters"): [[{"id": "f1", "name": "x"}]]})
    update(client, endpoint((Change("methods[get]", None, {}),), methods=[{"name": "get"}]))
    assert client.writes() == [("DELETE", f"{METHODS}/m1/responseFilters/f1", None)]


def test_extra_copies_are_deleted_at_every_level_and_nothing_else_when_the_manifest_is_silent() -> None:
    filters = [{"id": "f1", "name": "pub"}, {"id": "f2", "name": "pub"}]
    client = FakeClient({("GET", METHODS): [[_method("m1", "get", filters), _method("m3", "get")]]})
    changes = (Change(f"methods[get]{DUPLICATES}", ["m1", "m3"], ["m1"]),
               Change(f"methods[get].responseFilters[pub]{DUPLICATES}", ["f1", "f2"], ["f1"]))
    update(client, endpoint(changes))
    assert client.writes() == [("DELETE", f"{METHODS}/m1/responseFilters/f2", None),
                               ("DELETE", f"{METHODS}/m3", None)]


# --- a fixed catalog --------------------------------------------------------------------------

MESSAGES = "/services/S1/errorSets/es1/errorMessages"


def _catalog_at_spec_defaults() -> list[dict[str, Any]]:
    return [{"id": mid, "status": status, "detailHeader": "", "responseBody": ""}
            for mid, (_code, status) in kinds.ERROR_CATALOG.items()]


def _error_set(changes: tuple[Change, ...], messages: list[dict[str, Any]]) -> Step:
    return Step("update", "errorSet", "W/Errs", id="es1", parent="service:W", parent_id="s1",
                changes=changes, desired={"name": "Errs", "errorMessages": messages})


def test_catalog_items_are_written_in_place_only_where_they_differ() -> None:
    client = FakeClient({("GET", MESSAGES): [_catalog_at_spec_defaults()]})
    update(client, _error_set((Change(f"errorMessages[{QPS}].status", "x", "Slow down"),),
                              [{"id": QPS, "status": "Slow down"}]))
    assert client.writes() == [("PUT", f"{MESSAGES}/{QPS}",
                                {"id": QPS, "status": "Slow down", "detailHeader": "", "responseBody": ""})]


def test_catalog_defaults_are_the_dialects() -> None:
    client = FakeClient({("GET", MESSAGES): [_catalog_at_spec_defaults()]})
    update(client, _error_set((Change(f"errorMessages[{QPS}].status", "x", "Slow"),), [{"id": QPS, "status": "Slow"}]),
           dialect="mashery")
    written = {path.rsplit("/", 1)[1]: body for _m, path, body in client.writes()}
    assert set(written) == {mid for mid, text in platform.MASHERY_MESSAGE_DETAILS.items() if text} | {QPS}
    assert written[QPS]["detailHeader"] == platform.MASHERY_MESSAGE_DETAILS[QPS]


def test_a_catalog_item_held_twice_is_written_again() -> None:
    other = "ERR_403_NOT_AUTHORIZED"
    client = FakeClient({("GET", MESSAGES): [_catalog_at_spec_defaults()]})
    update(client, _error_set((Change(f"errorMessages[{other}]{DUPLICATES}", [other, other], [other]),), []))
    assert [path for _m, path, _b in client.writes()] == [f"{MESSAGES}/{other}"]


# --- entitlements -----------------------------------------------------------------------------

ENTITLED = "/packages/k1/plans/p1/services"


def test_entitlements_change_leaves_one_by_one_remake_a_changed_flag_and_add_services_whole() -> None:
    live = [{"id": "S1", "name": "W", "endpoints": [
                {"id": "A1", "undefinedMethodsAllowed": True, "methods": [{"id": "M1"}]},
                {"id": "B1", "undefinedMethodsAllowed": True, "methods": []},
                {"id": "C1", "undefinedMethodsAllowed": True}]},
            {"id": "S9", "name": "Old", "endpoints": []}]
    client = FakeClient({("GET", ENTITLED): [live]})
    services = [{"name": "W", "endpoints": [{"name": "A", "methods": ["get", "post"]},
                                            {"name": "B", "undefinedMethodsAllowed": False}]},
                {"name": "V", "endpoints": ["X"]}]
    update(client, plan((Change("services[W]", None, {}),), services=services))
    spec = kinds.PLAN.ops.writes["services"]
    assert isinstance(spec, Entitlements)
    assert client.calls[0] == ("GET", ENTITLED, {"fields": ",".join(spec.fields)})
    assert client.writes() == [
        ("POST", f"{ENTITLED}/S1/endpoints/A1/methods", {"id": "M2"}),
        ("DELETE", f"{ENTITLED}/S1/endpoints/B1", None),
        ("POST", f"{ENTITLED}/S1/endpoints",
         {"id": "B1", "name": "B", "undefinedMethodsAllowed": False, "methods": []}),
        ("DELETE", f"{ENTITLED}/S1/endpoints/C1", None),
        ("POST", ENTITLED, {"id": "S2", "name": "V", "endpoints": [
            {"id": "X1", "name": "X", "undefinedMethodsAllowed": True, "methods": []}]}),
        ("DELETE", f"{ENTITLED}/S9", None),
    ]


def test_a_service_entitled_twice_is_entitled_once_again() -> None:
    twice = {"id": "S2", "name": "V", "endpoints": [{"id": "X1", "undefinedMethodsAllowed": True, "methods": []}]}
    client = FakeClient({("GET", ENTITLED): [[twice, twice]]})
    update(client, plan((Change("services[V]", None, {}),), services=[{"name": "V", "endpoints": ["X"]}]))
    assert [(m, p) for m, p, _b in client.writes()] == [("DELETE", f"{ENTITLED}/S2"), ("POST", ENTITLED)]


# --- singletons -------------------------------------------------------------------------------


def test_a_nullable_singleton_is_updated_created_when_absent_or_deleted() -> None:
    path = "/services/S1/endpoints/f1/systemDomainAuthentication"
    client = FakeClient({("PUT", path): [NotFound("absent", status=404)]})
    auth = {"type": "httpBasic", "username": "u", "password": "${P}"}
    update(client, endpoint((Change("systemDomainAuthentication.username", None, "u"),),
                            systemDomainAuthentication=auth), env={"P": "pw"})
    body = {**kinds.SYSTEM_DOMAIN_AUTH_DEFAULTS, **auth, "password": "pw"}
    assert client.writes() == [("PUT", path, body), ("POST", path, body)]
    client = FakeClient()
    update(client, endpoint((Change("systemDomainAuthentication", {}, None),), systemDomainAuthentication=None))
    assert client.writes() == [("DELETE", path, None)]


def test_a_singleton_with_a_nullable_object_under_it_is_written_at_that_object() -> None:
    client = FakeClient()
    update(client, service((Change("securityProfile.oauth.accessTokenTtl", 0, 60),),
                           securityProfile={"oauth": {"accessTokenTtl": 60}}))
    assert client.writes() == [("PUT", "/services/s1/securityProfile/oauth",
                                {**kinds.OAUTH_DEFAULTS, "accessTokenTtl": 60})]


# --- create bodies and reply projections ------------------------------------------------------


def test_create_bodies_get_the_dialects_link_actions_and_catalog_defaults() -> None:
    step = Step("create", "errorSet", "W/Errs", parent="service:W",
                desired={"name": "Errs", "errorMessages": [{"id": QPS}, {"id": "ERR_403_NOT_AUTHORIZED",
                                                                         "detailHeader": "mine"}]})
    mashery = BodyBuilder(LiveIndex(ids=dict(IDS)), {}, {}, MASHERY)
    assert mashery.body(step)["errorMessages"] == [
        {"id": QPS, "detailHeader": platform.MASHERY_MESSAGE_DETAILS[QPS]},
        {"id": "ERR_403_NOT_AUTHORIZED", "detailHeader": "mine"}]
    assert BodyBuilder(LiveIndex(ids=dict(IDS)), {}, {}).body(step)["errorMessages"] == [
        {"id": QPS}, {"id": "ERR_403_NOT_AUTHORIZED", "detailHeader": "mine"}]
    gold = Step("create", "plan", "Pkg/Gold", parent="package:Pkg", desired={"name": "Gold", "roles": ["A"]})
    assert mashery.body(gold)["roles"] == [{"id": "r1", "name": "A", "action": "register_keys"}]
    assert BodyBuilder(LiveIndex(ids=dict(IDS)), {}, {}).body(gold)["roles"] == [{"id": "r1", "name": "A"}]


def test_reply_projections_are_derived_from_the_kinds() -> None:
    assert ",".join(created_fields(kinds.ENDPOINT)) == "id,name,methods.id,methods.name"
    assert created_fields(kinds.ROLE) == ()  # the reply is used whole
    assert ",".join(tree_fields(kinds.SERVICE, kinds.children_of(kinds.SERVICE))) == (
        "id,name,updated,revisionNumber,endpoints.id,endpoints.name,endpoints.updated,"
        "endpoints.methods.id,endpoints.methods.name,errorSets.id,errorSets.name,errorSets.updated")
    assert ",".join(tree_fields(kinds.PACKAGE, kinds.children_of(kinds.PACKAGE))) == (
        "id,name,updated,plans.id,plans.name,plans.updated")
    # a parent kind no table lists: its projection comes from its entry alone
    shelf = Kind(name="shelf", manifest_key="shelves", path="/shelves", body="shelf",
                 children=("book",), read_also=("updated",), operations=Ops)
    book = Kind(name="book", manifest_key="books", path="/shelves/{shelf}/books", body="book", parent="shelf",
                operations=Ops)
    assert tree_fields(shelf, (book,)) == ("id", "name", "updated", "books.id", "books.name")


def test_read_projections_of_the_collections_name_every_field_they_compare() -> None:
    methods = kinds.ENDPOINT.ops.writes["methods"]
    assert isinstance(methods, KeyedItems)
    assert ",".join(methods.fields()) == (
        "id,name,sampleJsonResponse,sampleXmlResponse,responseFilters.id,responseFilters.name,"
        "responseFilters.notes,responseFilters.jsonFilterFields,responseFilters.xmlFilterFields")
    entitled = kinds.PLAN.ops.writes["services"]
    assert isinstance(entitled, Entitlements)
    assert ",".join(entitled.fields) == (
        "id,name,endpoints.id,endpoints.name,endpoints.undefinedMethodsAllowed,"
        "endpoints.methods.id,endpoints.methods.name")


# --- no kind named in apply -------------------------------------------------------------------

APPLYING = Path(kinds.__file__).parent.parent / "applying"


def _kind_modules() -> set[str]:
    """The modules of ``kinds/`` that declare a kind entry (not the shared modules)."""
    return {p.stem for p in Path(kinds.__file__).parent.glob("*.py") if ": Kind = Kind(" in p.read_text()}


def test_apply_writes_name_no_kind() -> None:
    """The writers learn what to do from the kinds' data: none of them imports a kind's module
    or a kind entry. Left out: ``lease.py`` (its role is the lease, by design) and ``doctor.py``
    (its first call lists services)."""
    entries = {name for name in dir(kinds) if isinstance(getattr(kinds, name), Kind)}
    modules = _kind_modules()
    for path in sorted(APPLYING.glob("*.py")):
        if path.name in ("lease.py", "doctor.py"):
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert node.module.removeprefix("apimctl.kinds.") not in modules, (path.name, node.module)
                if node.module == "apimctl.kinds":
                    assert not {a.name for a in node.names} & entries, (path.name, node.module)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "kinds":
                assert node.attr not in entries, (path.name, node.attr)



def test_every_read_of_a_nested_collection_names_its_fields() -> None:
    """Links, keyed items (and their nested lists), a catalog: each list read names the fields
    it is read for (real areas honour no nested wildcard and leave fields out unless named,
    SUPPLEMENT §10.10.8)."""
    client = FakeClient({("GET", "/services/s1/roles"): [[{"id": "r1", "name": "A"}]],
                         ("GET", METHODS): [[_method("m1", "get")]],
                         ("GET", f"{METHODS}/m1/responseFilters"): [[{"id": "f1", "name": "x"}]],
                         ("GET", MESSAGES): [_catalog_at_spec_defaults()]})
    update(client, service((Change("roles", ["A"], ["B"]),), roles=["B"]))
    update(client, endpoint((Change("methods[get]", None, {}),), methods=[{"name": "get"}]))
    update(client, _error_set((Change(f"errorMessages[{QPS}].status", "x", "Slow"),), [{"id": QPS, "status": "Slow"}]))
    reads = {path: params for method, path, params in client.calls if method == "GET"}
    assert set(reads) == {"/services/s1/roles", METHODS, f"{METHODS}/m1/responseFilters", MESSAGES}
    named = {path: str((params or {}).get("fields", "")).split(",") for path, params in reads.items()}
    assert named["/services/s1/roles"] == ["id", "name"]
    assert named[f"{METHODS}/m1/responseFilters"] == ["id", "name", *kinds.RESPONSE_FILTER_DEFAULTS]
    assert named[MESSAGES] == ["id", "status", "detailHeader", "responseBody"]
    assert all("*" not in f for fields in named.values() for f in fields)


def test_the_lookups_after_an_unknown_outcome_name_their_fields() -> None:
    from apimctl.applying.calls import find_by_name, find_in

    client = FakeClient({("LIST", "/domains"): [[{"id": "d1", "domain": "example.com"}]],
                         ("GET", METHODS): [[{"id": "m1", "name": "get"}]]})
    assert asyncio.run(find_by_name(client, "/domains", "example.com", key="domain")) == {
        "id": "d1", "domain": "example.com"}
    assert asyncio.run(find_in(client, METHODS, "get")) == {"id": "m1", "name": "get"}
    assert client.calls == [("LIST", "/domains", {"filter": "domain:example.com", "fields": "id,domain"}),
                            ("GET", METHODS, {"fields": "id,name"})]
