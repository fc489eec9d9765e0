"""Planner semantics: identity, renames, ownership, prune, targets, ignores, order, secrets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from apimctl.errors import PlanError
from apimctl.planning import PlanOptions, build_plan
from apimctl.plans.model import Plan
from apimctl.state.live import from_raw


@dataclass
class M:
    doc: dict[str, Any]
    secret_refs: dict[tuple[str | int, ...], str] = field(default_factory=dict)
    validated: bool = False  # never checked offline: planning checks all it needs

    def where(self, path: tuple[str | int, ...]) -> Any:
        return None  # positions unknown


def svc(name: str, sid: str, endpoints: list[dict[str, Any]] | None = None,
        sets: list[str] = ("Default",), **extra: Any) -> dict[str, Any]:  # type: ignore[assignment]
    return {"id": sid, "name": name, "revisionNumber": 4, "updated": "2026-01-01T00:00:00.000+0000",
            "errorSets": [{"id": f"{sid}-{s}", "name": s, "errorMessages": []} for s in sets],
            "endpoints": endpoints or [], **extra}


def ep(name: str, eid: str, **extra: Any) -> dict[str, Any]:
    return {"id": eid, "name": name, "requestPathAlias": f"/{name}",
            "trafficManagerDomain": "api.example.com", "errorSet": None, **extra}


def want_ep(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "requestPathAlias": f"/{name}", "trafficManagerDomain": "api.example.com",
            **extra}


def plan_of(doc: dict[str, Any], live: dict[str, list[dict[str, Any]]], **kw: Any) -> Plan:
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}
    return build_plan(M(doc), from_raw(live), PlanOptions(**options))


def actions(plan: Plan) -> list[tuple[str, str]]:
    return [(s.action, s.address) for s in plan.steps]


def test_no_changes_when_equal_by_defaults_and_quirks() -> None:
    live = {"service": [svc("W", "s1", [ep("F", "e1", supportedHttpMethods="get", cors=None)])]}
    plan = plan_of({"services": [{"name": "W", "endpoints": [want_ep("F")]}]}, live)
    assert plan.steps == [] and not plan.has_changes


def test_removed_field_resets_to_default() -> None:
    live = {"service": [svc("W", "s1", [ep("F", "e1", cors={"maxAge": 60})])]}
    plan = plan_of({"services": [{"name": "W", "endpoints": [want_ep("F")]}]}, live)
    (step,) = plan.steps
    assert step.action == "update" and step.id == "e1" and step.parent_id == "s1"
    assert [(c.path, c.before, c.after) for c in step.changes] == [("cors.maxAge", 60, 0)]
    assert plan.fingerprints["service:W"].revision == 4


def test_rename_by_previous_names_is_an_update() -> None:
    live = {"service": [svc("Old", "s1")]}
    plan = plan_of({"services": [{"name": "New", "previousNames": ["Old"]}]}, live)
    assert actions(plan) == [("update", "service:New")]
    assert [(c.path, c.before, c.after) for c in plan.steps[0].changes] == [("name", "Old", "New")]


def test_id_pin_and_duplicate_names() -> None:
    live = {"service": [svc("W", "s1"), svc("W", "s2", description="two")]}
    plan = plan_of({"services": [{"name": "W"}]}, live)  # duplicates: reported, not an error
    (dup,) = plan.duplicates
    assert (dup.address, dup.ids, dup.keep, dup.reason) == ("service:W", ("s1", "s2"), "s1", "first listed")
    assert not plan.steps and not plan.unmanaged and "--repair-duplicates" in plan.warnings[-1]
    repaired = plan_of({"services": [{"name": "W"}]}, live, repair_duplicates=True)
    assert actions(repaired) == [("delete", "service:W (id s2)")]
    plan = plan_of({"services": [{"name": "W", "id": "s2"}]}, live)
    assert [s.id for s in plan.steps] == ["s2"]
    assert [(d.keep, d.reason) for d in plan.duplicates] == [("s2", "pinned by id")]
    with pytest.raises(PlanError, match="no live object"):
        plan_of({"services": [{"name": "W", "id": "nope"}]}, live)


def test_unmanaged_listed_and_pruned_on_request() -> None:
    live = {"service": [svc("W", "s1"), svc("team-a-x", "s2"), svc("other", "s3")]}
    doc: dict[str, Any] = {"services": [{"name": "W"}]}
    plan = plan_of(doc, live)
    assert plan.steps == [] and {u.key for u in plan.unmanaged} == {"team-a-x", "other"}
    assert actions(plan_of(doc, live, prune=True)) == [("delete", "service:other"),
                                                       ("delete", "service:team-a-x")]
    doc["settings"] = {"prune": {"services": ["team-a-*"]}}
    assert actions(plan_of(doc, live)) == [("delete", "service:team-a-x")]
    with pytest.raises(PlanError, match="max-deletes"):
        plan_of(doc, live, prune=True, max_deletes=1)


def test_domains_are_never_deleted() -> None:
    live = {"domain": [{"id": "d1", "domain": "old.example"}]}
    plan = plan_of({"domains": [{"domain": "example.com"}]}, live, prune=True)
    assert actions(plan) == [("create", "domain:example.com")]
    assert plan.unmanaged[0].key == "old.example" and plan.warnings


def test_declared_collection_is_exact_omitted_left_alone() -> None:
    live = {"service": [svc("W", "s1", [ep("F", "e1"), ep("G", "e2")], sets=["Default", "X"])]}
    assert plan_of({"services": [{"name": "W"}]}, live).steps == []
    plan = plan_of({"services": [{"name": "W", "endpoints": [want_ep("F")],
                                  "errorSets": [{"name": "Default"}]}]}, live)
    assert actions(plan) == [("delete", "endpoint:W/G"), ("delete", "errorSet:W/X")]


def test_new_error_set_before_old_one_goes_and_referrers_first() -> None:
    live = {"service": [svc("W", "s1", [ep("F", "e1")])]}
    doc = {"services": [{"name": "W", "errorSets": [{"name": "JSON"}],
                         "endpoints": [want_ep("F", errorSet="JSON")]}]}
    plan = plan_of(doc, live)
    order = actions(plan)
    assert order.index(("create", "errorSet:W/JSON")) < order.index(("update", "endpoint:W/F"))
    assert order.index(("update", "endpoint:W/F")) < order.index(("delete", "errorSet:W/Default"))
    delete = plan.step("errorSet:W/Default")
    assert delete is not None and "endpoint:W/F" in delete.depends_on


def test_create_tree_orders_parents_first_and_records_dependencies() -> None:
    doc = {"domains": [{"domain": "example.com"}], "roles": [{"name": "R"}],
           "services": [{"name": "W", "endpoints": [want_ep("F", publicDomains=["api.example.com"])]}],
           "packages": [{"name": "P", "plans": [{"name": "G", "roles": ["R"], "services": [
               {"name": "W", "endpoints": [{"name": "F"}]}]}]}],
           "scheduledMaintenanceEvents": [{"name": "M", "startDateTime": "2026-12-01T02:00:00Z",
                                           "endDateTime": "2026-12-01T03:00:00Z",
                                           "endpoints": [{"service": "W", "endpoint": "F"}]}]}
    plan = plan_of(doc, {})
    assert [a for _, a in actions(plan)] == [
        "domain:example.com", "role:R", "service:W", "endpoint:W/F", "package:P", "plan:P/G",
        "maintenanceEvent:M"]
    f = plan.step("endpoint:W/F")
    assert f is not None and set(f.depends_on) == {"service:W", "domain:example.com"}
    g = plan.step("plan:P/G")
    assert g is not None and set(g.depends_on) == {"package:P", "role:R", "service:W", "endpoint:W/F"}


def test_targets_select_objects_children_and_dependencies() -> None:
    doc = {"roles": [{"name": "R"}, {"name": "Q"}],
           "services": [{"name": "W", "roles": ["R"], "endpoints": [want_ep("F")]}]}
    plan = plan_of(doc, {}, targets=["service:W"])
    assert {a for _, a in actions(plan)} == {"role:R", "service:W", "endpoint:W/F"}
    assert plan.target == "" and any("service:W (--target)" in w for w in plan.warnings)
    with pytest.raises(PlanError, match="matches no"):
        plan_of(doc, {}, targets=["service:Nope"])
    with pytest.raises(PlanError, match="KIND:NAME"):
        plan_of(doc, {}, targets=["Weather"])


def test_ignores_recorded_with_reasons() -> None:
    live = {"service": [svc("W", "s1", [ep("F", "e1", cors={"maxAge": 60})])]}
    doc = {"services": [{"name": "W", "endpoints": [want_ep("F")]}],
           "settings": {"ignore": [{"target": "endpoint:W/F:cors.maxAge", "reason": "ops"}]}}
    plan = plan_of(doc, live)
    assert plan.steps == []
    assert plan.ignored == [{"target": "endpoint:W/F:cors.maxAge", "reason": "ops"}]
    assert plan_of({**doc, "settings": {}}, live, ignores=["endpoint:W/*:cors"]).steps == []


def test_secrets_as_references_and_hash_compare() -> None:
    doc = {"services": [{"name": "W", "endpoints": [want_ep("F", systemDomainCredentialSecret="s3cret")]}]}
    refs: dict[tuple[str | int, ...], str] = {
        ("services", 0, "endpoints", 0, "systemDomainCredentialSecret"): "${SECRET}"}
    live = {"service": [svc("W", "s1", [ep("F", "e1", systemDomainCredentialSecret="s3cret")])]}
    assert build_plan(M(doc, refs), from_raw(live)).steps == []
    live["service"][0]["endpoints"][0]["systemDomainCredentialSecret"] = "changed"
    plan = build_plan(M(doc, refs), from_raw(live))
    (step,) = plan.steps
    assert step.changes[0].sensitive and step.desired is not None
    assert step.desired["systemDomainCredentialSecret"] == "${SECRET}"
    assert plan.secret_values == {"endpoint:W/F#systemDomainCredentialSecret": "s3cret"}
    assert "s3cret" not in plan.dumps() and "changed" not in plan.dumps()


def test_empty_input_is_an_error() -> None:
    with pytest.raises(PlanError, match="no objects"):
        plan_of({"settings": {"prune": True}}, {"service": [svc("W", "s1")]})


def test_plan_round_trips_through_json() -> None:
    plan = plan_of({"services": [{"name": "W", "endpoints": [want_ep("F")]}]}, {})
    again = Plan.from_json(plan.to_json())
    assert [s.to_json() for s in again.steps] == [s.to_json() for s in plan.steps]


@dataclass
class Located(M):
    def where(self, path: tuple[str | int, ...]) -> Any:
        from apimctl.manifests import Position

        return Position("team.yaml", 3 + len(path), 5)


def test_errors_point_at_the_manifest() -> None:
    live = {"service": [svc("W", "s1"), svc("W", "s2")]}
    with pytest.raises(PlanError, match=r"^team\.yaml:5:5: services\[0\]: id 'nope' pins service"):
        build_plan(Located({"services": [{"name": "W", "id": "nope"}]}), from_raw(live))


def test_pinned_update_and_pruned_duplicate_are_both_planned() -> None:
    """A pinned object and a pruned live duplicate of its name get distinct steps."""
    live = {"service": [svc("W", "s1"), svc("W", "s2", description="two"), svc("X", "s3"),
                        svc("X", "s4")]}
    plan = plan_of({"services": [{"name": "W", "id": "s2"}, {"name": "Y"}]}, live, prune=True)
    got = sorted((s.action, s.key, s.id) for s in plan.steps)
    assert got == [("create", "Y", None), ("delete", "W (id s1)", "s1"), ("delete", "X", "s3"),
                   ("delete", "X (id s4)", "s4"), ("update", "W", "s2")]
    assert len({s.address for s in plan.steps}) == len(plan.steps)
    assert plan.fingerprints["service:W"].id == "s2"
    assert plan.fingerprints["service:W (id s1)"].id == "s1"


def test_pinned_child_and_deleted_duplicate_child_are_both_planned() -> None:
    live = {"service": [svc("W", "s1", [ep("F", "e1", description="x"), ep("F", "e2")])]}
    doc = {"services": [{"name": "W", "endpoints": [want_ep("F", id="e1", requestPathAlias="/G")]}]}
    plan = plan_of(doc, live)
    assert sorted((s.action, s.key, s.id) for s in plan.steps) == [
        ("delete", "W/F (id e2)", "e2"), ("update", "W/F", "e1")]


def test_domains_match_case_insensitively() -> None:
    live = {"domain": [{"id": "d1", "domain": "example.com", "status": "active"}]}
    plan = plan_of({"domains": [{"domain": "EXAMPLE.com"}]}, live)
    assert plan.steps == [] and plan.unmanaged == []
    with pytest.raises(PlanError, match="declared twice"):
        plan_of({"domains": [{"domain": "example.com"}, {"domain": "Example.COM"}]}, live)


def test_nested_item_meta_fields_are_not_compared() -> None:
    """``id``/``previousNames`` of methods and response filters are not API fields."""
    methods = [{"id": "m1", "name": "get", "sampleJsonResponse": "{}",
                "responseFilters": [{"id": "f1", "name": "pub", "notes": "n"}]}]
    live = {"service": [svc("W", "s1", [ep("F", "e1", methods=methods)])]}
    want = [{"name": "get", "id": "m1", "previousNames": ["old"], "sampleJsonResponse": "{}",
             "responseFilters": [{"name": "pub", "previousNames": ["x"], "id": "f1", "notes": "n"}]}]
    plan = plan_of({"services": [{"name": "W", "endpoints": [want_ep("F", methods=want)]}]}, live)
    assert plan.steps == []


def test_error_set_reference_by_id_alone() -> None:
    live = {"service": [svc("W", "s1", [ep("F", "e1", errorSet={"id": "s1-B"})], sets=["A", "B"])]}
    doc = {"services": [{"name": "W", "endpoints": [want_ep("F", errorSet="B")]}]}
    assert plan_of(doc, live).steps == []


def test_literal_secrets_are_found_for_saved_plans() -> None:
    from apimctl.planning import literal_secrets

    live = {"service": [svc("W", "s1", [ep("F", "e1")])]}
    doc = {"services": [{"name": "W", "endpoints": [
        want_ep("F", systemDomainCredentialSecret="literal-value",
                systemDomainAuthentication={"type": "httpBasic", "password": "pw"})]}]}
    refs = {("services", 0, "endpoints", 0, "systemDomainAuthentication", "password"): "${PW}"}
    plan = build_plan(M(doc, refs), from_raw(live))
    assert literal_secrets(plan) == ["endpoint:W/F#systemDomainCredentialSecret"]
    assert "literal-value" not in plan.dumps()


def test_entitled_methods_referenced_by_id_alone() -> None:
    methods = [{"id": "m1", "name": "get"}, {"id": "m2", "name": "put"}]
    live = {"service": [svc("W", "s1", [ep("F", "e1", methods=methods)])],
            "package": [{"id": "p1", "name": "P", "plans": [{"id": "q1", "name": "G", "services": [
                {"id": "s1", "endpoints": [{"id": "e1", "undefinedMethodsAllowed": False,
                                            "methods": [{"id": "m2"}]}]}]}]}]}
    doc = {"services": [{"name": "W"}], "packages": [{"name": "P", "plans": [{"name": "G", "services": [
        {"name": "W", "endpoints": [{"name": "F", "undefinedMethodsAllowed": False,
                                     "methods": ["put"]}]}]}]}]}
    assert plan_of(doc, live).steps == []


def test_target_drops_warnings_about_objects_outside_it() -> None:
    live = {"domain": [{"id": "d1", "domain": "old.example"}], "service": [svc("X", "s9")]}
    doc = {"services": [{"name": "W"}], "domains": [{"domain": "example.com"}]}
    assert plan_of(doc, live, prune=True).warnings
    plan = plan_of(doc, live, prune=True, targets=["service:*"])
    assert [w for w in plan.warnings if "(--target)" not in w] == []
    assert actions(plan) == [("create", "service:W"), ("delete", "service:X")]
    plan = plan_of(doc, live, prune=True, targets=["domain:old.example"])
    assert plan.warnings and plan.steps == []


def test_plan_entitled_to_a_new_method_waits_for_the_endpoint_update_that_adds_it() -> None:
    methods = [{"id": "m1", "name": "get"}]
    live = {"service": [svc("W", "s1", [ep("F", "e1", methods=methods)])],
            "package": [{"id": "p1", "name": "P", "plans": [{"id": "q1", "name": "G", "services": [
                {"id": "s1", "endpoints": [{"id": "e1", "undefinedMethodsAllowed": False,
                                            "methods": [{"id": "m1"}]}]}]}]}]}
    doc = {"services": [{"name": "W", "endpoints": [want_ep("F", methods=[{"name": "get"}, {"name": "put"}])]}],
           "packages": [{"name": "P", "plans": [{"name": "G", "services": [
               {"name": "W", "endpoints": [{"name": "F", "undefinedMethodsAllowed": False,
                                            "methods": ["get", "put"]}]}]}]}]}
    plan = plan_of(doc, live)
    assert actions(plan) == [("update", "endpoint:W/F"), ("update", "plan:P/G")]
    assert plan.step("plan:P/G").depends_on == ("endpoint:W/F",)  # type: ignore[union-attr]


def test_target_finds_children_of_a_service_whose_name_has_a_slash() -> None:
    live = {"service": [svc("a/b", "s1", [ep("E", "e1", cors={"maxAge": 60})]),
                        svc("a", "s2", [ep("X", "e2", cors={"maxAge": 60})])]}
    doc = {"services": [{"name": "a/b", "endpoints": [want_ep("E")]},
                        {"name": "a", "endpoints": [want_ep("X")]}]}
    # the key of service "a/b" is "a\/b" (a "/" inside a name is escaped)
    plan = plan_of(doc, live, targets=["service:a\\/b"])
    assert [(s.action, s.address, s.id) for s in plan.steps] == [("update", "endpoint:a\\/b/E", "e1")]


def test_a_route_clash_is_refused_before_what_matching_refuses() -> None:
    """Two endpoints on one route and a service declared twice: the route is named, as the
    first refusal, whichever step of planning finds the other."""
    live = {"service": [svc("W", "s1")]}
    clash = [want_ep("A", requestPathAlias="/same", publicDomains=["api.example.com"]),
             want_ep("B", requestPathAlias="/same", publicDomains=["api.example.com"])]
    twice = {"services": [{"name": "W", "endpoints": clash}, {"name": "W"}]}
    with pytest.raises(PlanError, match="claim the same route"):
        plan_of(twice, live)
    with pytest.raises(PlanError, match="declared twice"):
        plan_of({"services": [{"name": "W", "endpoints": clash[:1]}, {"name": "W"}]}, live)
    with pytest.raises(PlanError, match="claim the same route"):
        plan_of({"services": [{"name": "W", "endpoints": clash}]}, live)
