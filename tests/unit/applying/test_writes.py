"""Step -> API call translation with a recording fake client (no server)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apimctl.api.ratelimit import Backoff
from apimctl.applying.bodies import LiveIndex, StepError, resolve_secrets
from apimctl.applying.calls import create_once
from apimctl.applying.command import check_fresh, check_secrets, stale_reasons
from apimctl.applying.run import ApplyOptions, apply_plan
from apimctl.applying.schedule import PartlyDone
from apimctl.applying.units import group_units
from apimctl.applying.writes import Writer
from apimctl.errors import Invalid, PlanError, ServerError, TransportError
from apimctl.plans.model import Change, Fingerprint, Plan, Step
from apimctl.plans.result import ApplyResult, StepOutcome
from apimctl.state.live import LiveObject, LiveState

from ..areakit import ClientDefaults

NO_WAIT = Backoff(base=0.0, cap=0.0)


class FakeClient(ClientDefaults):
    """Records calls; answers from ``replies`` (path -> value or exception list) or echoes."""

    def __init__(self, replies: dict[tuple[str, str], list[Any]] | None = None) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.replies = replies or {}
        self.next_id = 0

    def _reply(self, method: str, path: str, default: Any) -> Any:
        queue = self.replies.get((method, path))
        if queue:
            value = queue.pop(0)
            if isinstance(value, BaseException):
                raise value
            return value
        return default

    async def get(self, path: str, params: Any = None) -> Any:
        self.calls.append(("GET", path, params))
        return self._reply("GET", path, [])

    async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                       page_index: bool = False) -> list[dict[str, Any]]:
        self.calls.append(("LIST", path, params))
        return list(self._reply("LIST", path, []))

    async def post(self, path: str, body: Any, params: Any = None) -> dict[str, Any]:
        self.calls.append(("POST", path, body))
        self.next_id += 1
        default = {"id": f"id{self.next_id}", **(body if isinstance(body, dict) else {})}
        return dict(self._reply("POST", path, default))

    async def put(self, path: str, body: Any, params: Any = None) -> Any:
        self.calls.append(("PUT", path, body))
        return self._reply("PUT", path, body)

    async def delete(self, path: str) -> None:
        self.calls.append(("DELETE", path, None))
        self._reply("DELETE", path, None)

    def writes(self) -> list[tuple[str, str, Any]]:
        return [c for c in self.calls if c[0] in ("POST", "PUT", "DELETE")]


def writer(client: FakeClient, plan: Plan, ids: dict[str, str] | None = None,
           env: dict[str, str] | None = None) -> Writer:
    return Writer(client, plan, LiveIndex(ids=dict(ids or {})), env=env or {}, backoff=NO_WAIT)


def run_all(w: Writer, plan: Plan) -> None:
    async def go() -> None:
        for unit in group_units(plan):
            await w.execute(unit)
    asyncio.run(go())


SVC = Step("create", "service", "Weather", desired={"name": "Weather", "version": "2", "roles": ["Partners"]})
ES = Step("create", "errorSet", "Weather/JSON errors", parent="service:Weather", depends_on=("service:Weather",),
          desired={"name": "JSON errors", "type": "application/json",
                   "errorMessages": [{"id": "ERR_403_DEVELOPER_OVER_QPS", "status": "Too Many Requests"}]})
EP = Step("create", "endpoint", "Weather/Forecast", parent="service:Weather",
          depends_on=("service:Weather", "errorSet:Weather/JSON errors", "domain:example.com"),
          desired={"name": "Forecast", "requestPathAlias": "/f", "trafficManagerDomain": "api.example.com",
                   "publicDomains": ["api.example.com"], "systemDomains": ["b.example.com"],
                   "errorSet": "JSON errors", "systemDomainCredentialSecret": "${FORECAST_SECRET}",
                   "methods": [{"name": "getForecast", "responseFilters": [{"name": "public"}]}]})


def test_grouping_nests_children_of_created_parents() -> None:
    plan = Plan(steps=[Step("create", "domain", "example.com", desired={"domain": "example.com"}), SVC, ES, EP])
    units = group_units(plan)
    assert [u.addresses for u in units] == [("domain:example.com",),
                                            ("service:Weather", "errorSet:Weather/JSON errors",
                                             "endpoint:Weather/Forecast")]
    assert len(group_units(plan, batch=False)) == 4


def test_grouping_batches_endpoint_updates_of_one_service() -> None:
    ups = [Step("update", "endpoint", f"W/e{i}", id=f"e{i}", parent="service:W", parent_id="s1",
                changes=(Change("requestPathAlias", "/a", f"/b{i}"),), desired={"name": f"e{i}"}) for i in range(3)]
    other = Step("update", "endpoint", "V/x", id="x", parent="service:V", parent_id="s2",
                 changes=(Change("highSecurity", False, True),), desired={"name": "x", "highSecurity": True})
    units = group_units(Plan(steps=[*ups, other]))
    assert [len(u.steps) for u in units] == [3, 1]


def test_nested_service_create_resolves_names_domains_and_secrets() -> None:
    plan = Plan(steps=[SVC, ES, EP])
    made = {"id": "s1", "name": "Weather",
            "endpoints": [{"id": "e1", "name": "Forecast", "methods": [{"id": "m1", "name": "getForecast"}]}],
            "errorSets": [{"id": "es1", "name": "JSON errors"}]}
    client = FakeClient({("POST", "/services"): [made]})
    w = writer(client, plan, ids={"role:Partners": "r1"}, env={"FORECAST_SECRET": "s3cr3t"})
    run_all(w, plan)
    method, path, body = client.writes()[0]
    assert (method, path) == ("POST", "/services")
    assert body["version"] == "2"
    assert body["roles"] == [{"id": "r1", "name": "Partners"}]
    ep = body["endpoints"][0]
    assert ep["publicDomains"] == [{"address": "api.example.com"}]
    assert ep["systemDomainCredentialSecret"] == "s3cr3t"
    assert ep["errorSet"] == {"name": "JSON errors"}  # created in the same call: by name
    assert ep["methods"] == [{"name": "getForecast", "responseFilters": [{"name": "public"}]}]
    assert body["errorSets"][0]["errorMessages"][0]["id"] == "ERR_403_DEVELOPER_OVER_QPS"
    assert len(client.writes()) == 1  # the whole tree in one call
    assert w.index.ids["endpoint:Weather/Forecast"] == "e1"
    assert w.index.ids["method:Weather/Forecast/getForecast"] == "m1"


def test_secret_from_plan_values_wins_and_missing_variable_is_named() -> None:
    plan = Plan(steps=[EP], secret_values={"endpoint:Weather/Forecast#systemDomainCredentialSecret": "v1"})
    assert resolve_secrets(EP, EP.desired or {}, plan.secret_values, {})["systemDomainCredentialSecret"] == "v1"
    with pytest.raises(PlanError, match="FORECAST_SECRET is not set"):
        check_secrets(Plan(steps=[EP]), {})
    assert resolve_secrets(EP, {"systemDomainCredentialSecret": "${X:-dflt}"}, {}, {})[
        "systemDomainCredentialSecret"] == "dflt"
    with pytest.raises(StepError):
        resolve_secrets(EP, {"systemDomainCredentialSecret": "${NOPE}"}, {}, {})


def test_unknown_outcome_is_looked_up_before_retrying() -> None:
    created = {"id": "r9", "name": "Partners"}
    client = FakeClient({("POST", "/roles"): [TransportError("POST /roles: no reply")]})

    async def lookup() -> dict[str, Any] | None:
        return created

    got = asyncio.run(create_once(client, "/roles", {"name": "Partners"}, lookup, backoff=NO_WAIT))
    assert got == created
    assert [c[0] for c in client.writes()] == ["POST"]


def test_unknown_outcome_not_found_is_retried() -> None:
    client = FakeClient({("POST", "/roles"): [ServerError("POST /roles: 500", 500)]})

    async def lookup() -> dict[str, Any] | None:
        return None

    got = asyncio.run(create_once(client, "/roles", {"name": "P"}, lookup, backoff=NO_WAIT))
    assert got["name"] == "P"
    assert [c[0] for c in client.writes()] == ["POST", "POST"]


def test_duplicate_after_unknown_outcome_is_the_earlier_attempt() -> None:
    client = FakeClient({("POST", "/roles"): [TransportError("no reply"), Invalid("name: duplicate", 400)]})
    lookups = iter([None, {"id": "r1", "name": "P"}])  # invisible at first, then found

    async def lookup() -> dict[str, Any] | None:
        return next(lookups)

    got = asyncio.run(create_once(client, "/roles", {"name": "P"}, lookup, backoff=NO_WAIT))
    assert got == {"id": "r1", "name": "P"}
    assert [c[0] for c in client.writes()] == ["POST", "POST"]


def test_duplicate_on_first_attempt_is_an_error() -> None:
    client = FakeClient({("POST", "/roles"): [Invalid("name: duplicate", 400)]})

    async def lookup() -> dict[str, Any] | None:
        raise AssertionError("no lookup for a plain refusal")

    with pytest.raises(Invalid):
        asyncio.run(create_once(client, "/roles", {"name": "P"}, lookup, backoff=NO_WAIT))


def test_unknown_outcome_gives_up_after_retries() -> None:
    client = FakeClient({("POST", "/roles"): [ServerError("boom", 500)] * 3})

    async def lookup() -> dict[str, Any] | None:
        return None

    with pytest.raises(ServerError):
        asyncio.run(create_once(client, "/roles", {"name": "P"}, lookup, backoff=NO_WAIT, retries=2))


def test_endpoint_update_writes_own_fields_and_singletons() -> None:
    step = Step("update", "endpoint", "W/F", id="e1", parent="service:W", parent_id="s1",
                changes=(Change("cors.maxAge", 0, 60), Change("publicDomains", [], ["a.example.com"]),
                         Change("highSecurity", True, False)),
                desired={"name": "F", "cors": {"maxAge": 60}, "publicDomains": ["a.example.com"]})
    client = FakeClient()
    run_all(writer(client, Plan(steps=[step])), Plan(steps=[step]))
    writes = client.writes()
    assert len(writes) == 1
    method, path, body = writes[0]
    assert (method, path) == ("PUT", "/services/s1/endpoints/e1")
    assert body["publicDomains"] == [{"address": "a.example.com"}] and body["highSecurity"] is False
    assert body["cors"]["maxAge"] == 60 and body["cors"]["allDomainsEnabled"] is True  # defaults filled


def test_collections_are_reconciled_against_a_fresh_read() -> None:
    step = Step("update", "service", "W", id="s1", changes=(Change("roles", ["Old"], ["New"]),),
                desired={"name": "W", "roles": ["New"]})
    client = FakeClient({("GET", "/services/s1/roles"): [[{"id": "r-old", "name": "Old", "action": "read"}]]})
    run_all(writer(client, Plan(steps=[step]), ids={"role:New": "r-new"}), Plan(steps=[step]))
    assert client.writes() == [("POST", "/services/s1/roles", {"id": "r-new", "name": "New", "action": "read"}),
                               ("DELETE", "/services/s1/roles/r-old", None)]


def test_error_messages_reset_to_catalog_defaults() -> None:
    step = Step("update", "errorSet", "W/S", id="es1", parent="service:W", parent_id="s1",
                changes=(Change("errorMessages[ERR_400_BAD_REQUEST].responseBody", "x", ""),),
                desired={"name": "S", "errorMessages": []})
    live = [{"id": "ERR_400_BAD_REQUEST", "status": "Bad Request", "detailHeader": "", "responseBody": "x"},
            {"id": "ERR_502_BAD_GATEWAY", "status": "Bad Gateway", "detailHeader": "", "responseBody": ""}]
    client = FakeClient({("GET", "/services/s1/errorSets/es1/errorMessages"): [live]})
    run_all(writer(client, Plan(steps=[step])), Plan(steps=[step]))
    puts = [c for c in client.writes() if c[1].endswith("ERR_400_BAD_REQUEST")]
    assert puts == [("PUT", "/services/s1/errorSets/es1/errorMessages/ERR_400_BAD_REQUEST",
                     {"id": "ERR_400_BAD_REQUEST", "status": "Bad Request", "detailHeader": "", "responseBody": ""})]
    assert not any(c[1].endswith("ERR_502_BAD_GATEWAY") for c in client.writes())


def test_domains_cannot_be_deleted() -> None:
    step = Step("delete", "domain", "example.com", id="d1")
    with pytest.raises(StepError, match="cannot be deleted"):
        run_all(writer(FakeClient(), Plan(steps=[step])), Plan(steps=[step]))


def test_stale_plan_reasons() -> None:
    state = LiveState()
    state.add(LiveObject("service", "W", "s1", {"name": "W"}, revision=5))
    state.add(LiveObject("role", "New", "r1", {"name": "New"}))
    plan = Plan(steps=[Step("update", "endpoint", "W/F", id="e1", parent="service:W"),
                       Step("create", "role", "New"), Step("delete", "package", "Gone", id="p1")],
                fingerprints={"service:W": Fingerprint("service", "W", "s1", None, 4),
                              "package:Gone": Fingerprint("package", "Gone", "p1", "2026-01-01T00:00:00Z")})
    reasons = stale_reasons(plan, state)
    assert "service:W: changed (revision 4 -> 5)" in reasons
    assert "role:New: now exists (created since the plan was made)" in reasons
    assert "package:Gone: no longer exists" in reasons
    fresh = Plan(steps=[Step("update", "service", "W", id="s1")],
                 fingerprints={"service:W": Fingerprint("service", "W", "s1", None, 5)})
    assert stale_reasons(fresh, state) == []


def test_apply_plan_refuses_stale_plan_before_writing() -> None:
    plan = Plan(steps=[Step("create", "role", "New", desired={"name": "New"})])
    client = FakeClient({("LIST", "/roles"): [[{"id": "r1", "name": "New"}]]})
    check = ApplyOptions(check=lambda state: check_fresh(plan, state))  # as apply does for a saved plan
    with pytest.raises(PlanError, match="stale"):
        asyncio.run(apply_plan(client, plan, check))
    assert client.writes() == []


def test_deleting_a_parent_covers_its_children() -> None:
    plan = Plan(steps=[
        Step("delete", "endpoint", "W/F", id="e1", parent="service:W", parent_id="s1"),
        Step("delete", "errorSet", "W/S", id="es1", parent="service:W", parent_id="s1"),
        Step("delete", "service", "W", id="s1", depends_on=("endpoint:W/F", "errorSet:W/S")),
    ])
    units = group_units(plan)
    assert [u.addresses for u in units] == [("service:W", "endpoint:W/F", "errorSet:W/S")]
    client = FakeClient()
    run_all(writer(client, plan), plan)
    assert client.writes() == [("DELETE", "/services/s1", None)]


def test_resolved_secrets_of_a_saved_plan_are_kept_for_scrubbing() -> None:
    plan = Plan(steps=[EP])
    check_secrets(plan, {"FORECAST_SECRET": "v-123"})
    assert plan.secret_values == {"endpoint:Weather/Forecast#systemDomainCredentialSecret": "v-123"}
    assert "v-123" not in plan.dumps()


def test_convergence_check_looks_twice_before_reporting(monkeypatch: pytest.MonkeyPatch) -> None:
    import apimctl.applying.run as apply_module

    monkeypatch.setattr(apply_module, "VISIBILITY_DELAY", 0.0)
    step = Step("create", "role", "Partners", desired={"name": "Partners"})
    plan = Plan(steps=[step])
    done = ApplyResult(done=[StepOutcome("role:Partners", "create")])
    role = {"id": "r1", "name": "Partners", "description": "", "organization": None}
    late = FakeClient({("LIST", "/roles"): [[], [role]]})  # invisible at first, then there
    assert asyncio.run(apply_module.verify(late, plan, done, {})) == []
    never = FakeClient({("LIST", "/roles"): [[], []]})
    assert asyncio.run(apply_module.verify(never, plan, done, {})) == [
        StepOutcome("role:Partners", "create", "does not exist")]
    other = FakeClient({("LIST", "/roles"): [[{**role, "description": "x"}]] * 2})
    [outcome] = asyncio.run(apply_module.verify(other, plan, done, {}))
    assert outcome.reason == "still differs: description"


def test_renamed_objects_are_found_by_id_in_a_saved_plan() -> None:
    state = LiveState()
    state.add(LiveObject("service", "Old", "s1", {"name": "Old"}, revision=3))
    state.add(LiveObject("endpoint", "Old/E", "e1", {"name": "E"}, parent_key="Old"))
    plan = Plan(steps=[Step("update", "service", "New", id="s1"),
                       Step("update", "endpoint", "New/E2", id="e1", parent="service:New")],
                fingerprints={"service:New": Fingerprint("service", "New", "s1", None, 3)})
    assert stale_reasons(plan, state) == []
    plan.fingerprints["service:New"] = Fingerprint("service", "New", "s1", None, 2)
    assert stale_reasons(plan, state) == ["service:New: changed (revision 2 -> 3)"]


def test_renames_are_indexed_under_their_new_names_with_their_children() -> None:
    index = LiveIndex({"service:Old": "s1", "endpoint:Old/E": "e1", "method:Old/E/m": "m1",
                       "errorSet:Old/Errs": "es1", "package:Old": "p1", "plan:Old/Gold": "pl1"})
    index.add_renames([Step("update", "endpoint", "New/E2", id="e1"),  # inside the renamed service
                       Step("update", "service", "New", id="s1")])
    assert index.id("service:New") == "s1" and index.id("endpoint:New/E2") == "e1"
    assert index.id("method:New/E2/m") == "m1" and index.id("errorSet:New/Errs") == "es1"
    assert "package:New" not in index.ids and "plan:New/Gold" not in index.ids  # another kind
    assert index.id("service:Old") == "s1"  # the old names stay until the steps run


def test_failed_nested_writes_name_the_children_not_their_positions() -> None:
    plan = Plan(steps=[SVC, ES, EP])
    refused = Invalid("POST /services: 400 Bad Request: endpoints[0].publicDomains[0].address: not active; "
                      "errorSets[0].type: bad", status=400)
    client = FakeClient({("POST", "/services"): [refused]})
    with pytest.raises(Invalid) as caught:
        run_all(writer(client, plan, ids={"role:Partners": "r1"}, env={"FORECAST_SECRET": "x"}), plan)
    assert "endpoints[Forecast].publicDomains[0].address: not active" in str(caught.value)
    assert "errorSets[JSON errors].type: bad" in str(caught.value)
    ups = [Step("update", "endpoint", f"W/e{i}", id=f"e{i}", parent="service:W", parent_id="s1",
                changes=(Change("requestPathAlias", "/a", f"/b{i}"),),
                desired={"name": f"e{i}", "requestPathAlias": f"/b{i}"}) for i in range(2)]
    batch = Plan(steps=ups)
    client = FakeClient({("PUT", "/services/s1/endpoints"): [
        Invalid("PUT /services/s1/endpoints: 400 Bad Request: [1].requestPathAlias: duplicate", status=400)]})
    with pytest.raises(Invalid, match=r"endpoints\[e1\]\.requestPathAlias: duplicate"):
        run_all(writer(client, batch), batch)


def test_changed_entitled_methods_are_added_and_removed_one_by_one() -> None:
    """Only the method list of an entitled endpoint changes: the endpoint stays entitled."""
    step = Step("update", "plan", "P/Gold", id="pl1", parent="package:P", parent_id="p1",
                changes=(Change("services[W].endpoints[F].methods", ["a"], ["b"]),),
                desired={"name": "Gold", "services": [
                    {"name": "W", "endpoints": [{"name": "F", "undefinedMethodsAllowed": False, "methods": ["b"]}]}]})
    live = [{"id": "s1", "name": "W", "endpoints": [
        {"id": "e1", "name": "F", "undefinedMethodsAllowed": False, "methods": [{"id": "ma", "name": "a"}]}]}]
    base = "/packages/p1/plans/pl1/services"
    client = FakeClient({("GET", base): [live]})
    ids = {"service:W": "s1", "endpoint:W/F": "e1", "method:W/F/a": "ma", "method:W/F/b": "mb"}
    run_all(writer(client, Plan(steps=[step]), ids=ids), Plan(steps=[step]))
    assert client.writes() == [("POST", f"{base}/s1/endpoints/e1/methods", {"id": "mb"}),
                               ("DELETE", f"{base}/s1/endpoints/e1/methods/ma", None)]


def test_methods_created_by_an_endpoint_update_are_indexed_for_plans() -> None:
    step = Step("update", "endpoint", "W/F", id="e1", parent="service:W", parent_id="s1",
                changes=(Change("methods[b]", None, {}),), desired={"name": "F", "methods": [{"name": "b"}]})
    client = FakeClient({("POST", "/services/s1/endpoints/e1/methods"): [{"id": "mb", "name": "b"}]})
    w = writer(client, Plan(steps=[step]))
    run_all(w, Plan(steps=[step]))
    assert w.index.id("method:W/F/b") == "mb"


def test_a_service_tree_refused_for_one_endpoint_is_created_without_it() -> None:
    other = Step("create", "endpoint", "Weather/Alerts", parent="service:Weather", depends_on=("service:Weather",),
                 desired={"name": "Alerts", "requestPathAlias": "/a", "trafficManagerDomain": "api.example.com",
                          "publicDomains": ["api.example.com"], "systemDomains": ["b.example.com"]})
    plan = Plan(steps=[SVC, ES, EP, other])
    refused = Invalid("POST /services: 400 Bad Request: endpoints[1].publicDomains[0].address: not active",
                      status=400, items=[{"property": "endpoints[1].publicDomains[0].address",
                                          "message": "'api.example.com' is not under an active domain"}])
    made = {"id": "s1", "name": "Weather", "endpoints": [{"id": "e1", "name": "Forecast", "methods": []}],
            "errorSets": [{"id": "es1", "name": "JSON errors"}]}
    client = FakeClient({("POST", "/services"): [refused, made]})
    w = writer(client, plan, ids={"role:Partners": "r1"}, env={"FORECAST_SECRET": "x"})
    with pytest.raises(PartlyDone) as caught:
        run_all(w, plan)
    assert caught.value.failed == {"endpoint:Weather/Alerts": "POST /services: 400 Bad Request: "
                                   "publicDomains[0].address: 'api.example.com' is not under an active domain"}
    second = client.writes()[1][2]
    assert [e["name"] for e in second["endpoints"]] == ["Forecast"] and second["errorSets"]
    assert w.index.ids["service:Weather"] == "s1" and w.index.ids["endpoint:Weather/Forecast"] == "e1"


def test_a_batch_of_endpoint_updates_goes_again_without_the_refused_one() -> None:
    ups = [Step("update", "endpoint", f"W/e{i}", id=f"e{i}", parent="service:W", parent_id="s1",
                changes=(Change("requestPathAlias", "/a", f"/b{i}"),),
                desired={"name": f"e{i}", "requestPathAlias": f"/b{i}"}) for i in range(3)]
    batch = Plan(steps=ups)
    refused = Invalid("PUT /services/s1/endpoints: 400 Bad Request: [1].requestPathAlias: duplicate", status=400,
                      items=[{"property": "[1].requestPathAlias", "message": "duplicate"}])
    client = FakeClient({("PUT", "/services/s1/endpoints"): [refused]})
    with pytest.raises(PartlyDone) as caught:
        run_all(writer(client, batch), batch)
    assert list(caught.value.failed) == ["endpoint:W/e1"]
    assert "requestPathAlias: duplicate" in caught.value.failed["endpoint:W/e1"]
    assert [e["id"] for e in client.writes()[1][2]] == ["e0", "e2"]


def test_a_redacted_secret_is_never_written() -> None:
    with pytest.raises(StepError, match="holds no value for this secret"):
        resolve_secrets(EP, {"systemDomainCredentialSecret": "(sensitive)"}, {}, {})


def test_a_planned_update_goes_to_its_own_id_not_a_namesake() -> None:
    # a pinned object planned for update while a live duplicate of its name is pruned
    step = Step("update", "maintenanceEvent", "Upgrade", id="pinned",
                changes=(Change("endDateTime", "2026-12-01T04:00:00Z", "2026-12-01T05:00:00Z"),),
                desired={"name": "Upgrade", "startDateTime": "2026-12-01T02:00:00Z",
                         "endDateTime": "2026-12-01T05:00:00Z"})
    client = FakeClient()
    plan = Plan(steps=[step])
    run_all(writer(client, plan, ids={"maintenanceEvent:Upgrade": "duplicate"}), plan)
    assert [(m, p) for m, p, _ in client.writes()] == [("PUT", "/scheduledMaintenanceEvents/pinned")]
