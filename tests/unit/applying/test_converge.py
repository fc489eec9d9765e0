"""The convergence check reads again only what the apply touched: which objects, in which list
calls, and how the steps are compared with what comes back (``apimctl.applying.converge``)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any
from urllib.parse import quote_plus, urlencode

from apimctl import kinds
from apimctl.applying import converge
from apimctl.applying.converge import (
    MAX_TARGET,
    Wanted,
    chunks,
    key_names,
    list_calls,
    wanted,
)
from apimctl.plans.model import TEMPORARY_ROUTE, Change, Plan, Step
from apimctl.plans.result import StepOutcome

SERVICES, PACKAGES, ROLES = "/services", "/packages", "/roles"


def endpoint_update(service: str, sid: str, name: str, eid: str) -> Step:
    return Step("update", "endpoint", f"{service}/{name}", id=eid, parent=f"service:{service}", parent_id=sid,
                changes=(Change("cors.maxAge", 60, 120),), desired={"name": name, "cors": {"maxAge": 120}})


class Recorder:
    """A lister answering from ``rows`` (per path) whatever the filter, recording each query."""

    def __init__(self, rows: dict[str, list[dict[str, Any]]]) -> None:
        self.rows = rows
        self.calls: list[tuple[str, dict[str, str]]] = []

    async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                       page_index: bool = False) -> list[dict[str, Any]]:
        query = dict(params or [])
        self.calls.append((path, query))
        flt = query.get("filter", "")
        if flt.startswith("id:") and "|" not in flt:  # one id asked alone: answered exactly
            return [dict(r) for r in self.rows.get(path, []) if r.get("id") == flt[3:]]
        return [dict(r) for r in self.rows.get(path, [])]


# --- which objects ------------------------------------------------------------------------------


def test_children_are_read_on_their_top_level_parent_once() -> None:
    steps = [endpoint_update("W", "s1", f"e{i}", f"e{i}") for i in range(5)]
    steps += [Step("update", "errorSet", "W/Errors", id="es1", parent="service:W", parent_id="s1"),
              Step("update", "service", "V", id="s2"),
              Step("update", "plan", "Partners/Gold", id="pl1", parent="package:Partners", parent_id="p1"),
              Step("update", "role", "Admins", id="r1")]
    want = wanted(steps, {})
    assert want.ids == {"service": ["s1", "s2"], "package": ["p1"], "role": ["r1"]}
    assert want.names == {} and want.gone == set()


def test_created_objects_are_read_by_the_ids_the_writes_recorded() -> None:
    ids = {"service:New": "s9", "endpoint:New/E": "e9", "role:Fresh": "r9"}
    steps = [Step("create", "service", "New", desired={"name": "New"}),
             Step("create", "endpoint", "New/E", parent="service:New", desired={"name": "E"}),
             Step("create", "role", "Fresh", desired={"name": "Fresh"}),
             Step("create", "role", "Unknown", desired={"name": "Unknown"})]  # no id recorded
    want = wanted(steps, ids)
    assert want.ids == {"service": ["s9"], "role": ["r9"]}
    assert want.names == {"role": ["Unknown"]}


def test_deleted_top_level_objects_are_expected_gone_and_children_keep_their_parent() -> None:
    steps = [Step("delete", "role", "Old", id="r1"),
             Step("delete", "endpoint", "W/Gone", id="e1", parent="service:W", parent_id="s1"),
             Step("update", "endpoint", f"W/Route{TEMPORARY_ROUTE}", id="e2", parent="service:X", parent_id="s7")]
    want = wanted(steps, {})
    assert want.ids == {"role": ["r1"], "service": ["s1"]}  # the temporary route reads nothing
    assert want.gone == {"r1"}


def test_a_renamed_parent_is_found_by_the_id_recorded_under_its_new_name() -> None:
    step = Step("update", "endpoint", "New/E", id="e1", parent="service:New", parent_id="s-old")
    assert wanted([step], {"service:New": "s1"}).ids == {"service": ["s1"]}


# --- in which calls -------------------------------------------------------------------------


def test_one_list_call_per_touched_kind_with_the_projection_of_the_live_read() -> None:
    want = Wanted(ids={"service": ["s1", "s2", "s3"], "package": ["p1"]}, names={"role": ["New"]})
    calls = list_calls(want)
    assert [(c.path, dict(c.params)["filter"]) for c in calls] == [
        (ROLES, "name:New"), (SERVICES, "id:s1|s2|s3"), (PACKAGES, "id:p1")]
    for call in calls:
        assert dict(call.params)["fields"] == call.kind.fields_param()
    assert calls[1].ids == ("s1", "s2", "s3") and calls[0].name == "New"


def test_ids_are_split_only_when_a_call_would_be_too_long_or_answer_more_than_a_page() -> None:
    ids = [f"{i:024d}" for i in range(1000)]
    runs = chunks(ids, budget=5000)
    assert [i for r in runs for i in r] == ids
    assert all(len(quote_plus("|".join(r))) <= 5000 for r in runs)
    assert len(runs) == -(-1000 * 27 // 5000)  # as few as the length allows (24 bytes and "%7C")
    assert len(chunks([str(i) for i in range(2500)], budget=10**9)) == 3  # pages of 1,000
    assert chunks(["x" * 5000, "a", "b"], budget=100) == [["x" * 5000], ["a", "b"]]


def test_the_calls_stay_short_enough_for_a_gateway() -> None:
    want = Wanted(ids={"service": [f"{i:024d}" for i in range(1000)],
                       "package": [f"{i:08d}-0000-0000-0000-000000000000" for i in range(1000)]})
    calls = list_calls(want)
    for call in calls:
        query = urlencode([*call.params, ("limit", "1000"), ("offset", "0")])
        assert len(call.path) + 1 + len(query) <= MAX_TARGET
    per_kind = Counter(c.kind.name for c in calls)
    # about 100 and 145 ids a call: the projection names every field (SUPPLEMENT §10.10.8)
    assert per_kind["service"] <= 10 and per_kind["package"] <= 7
    assert len(list_calls(Wanted(ids={"service": [f"{i:024d}" for i in range(100)]}))) == 1


# --- reading ------------------------------------------------------------------------------------


def test_only_the_objects_asked_for_are_kept() -> None:
    client = Recorder({SERVICES: [{"id": "s1", "name": "A"}, {"id": "s10", "name": "B"}, {"id": "s2", "name": "C"}]})
    raw = asyncio.run(converge.read_again(client, Wanted(ids={"service": ["s1", "s2"]})))
    assert [s["id"] for s in raw["service"]] == ["s1", "s2"]  # "s10" matched "s1" as a substring
    assert len(client.calls) == 1


class NoSets(Recorder):
    """A server that does not read ``|`` as a set of values: a set matches nothing."""

    async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                       page_index: bool = False) -> list[dict[str, Any]]:
        items = await super().list_all(path, params, page_size=page_size, page_index=page_index)
        return [] if "|" in dict(params or []).get("filter", "") else items


def test_a_missing_object_is_asked_for_alone_unless_it_was_deleted() -> None:
    want = Wanted(ids={"service": ["s1", "s2", "s3"]}, gone={"s3"})
    client = Recorder({SERVICES: [{"id": "s1", "name": "A"}]})
    raw = asyncio.run(converge.read_again(client, want))
    assert [s["id"] for s in raw["service"]] == ["s1"]
    assert [q["filter"] for _, q in client.calls] == ["id:s1|s2|s3", "id:s2"]  # not s3: deleted
    rows = [{"id": "s1", "name": "A"}, {"id": "s2", "name": "B"}]
    other = NoSets({SERVICES: rows})
    raw = asyncio.run(converge.read_again(other, want))
    assert [s["id"] for s in raw["service"]] == ["s1", "s2"]  # found all the same


# --- comparing ----------------------------------------------------------------------------------


ENDPOINT = {"id": "e1", "name": "F", "requestPathAlias": "/f", "cors": {"maxAge": 120}}


def outcomes(plan: Plan, raw: dict[str, list[dict[str, Any]]], ids: dict[str, str] | None = None) -> list[StepOutcome]:
    done = [(StepOutcome(s.address, s.action), s) for s in plan.steps]
    return converge.not_converged(plan, done, converge.found_in(raw, ids or {}), {}, ids or {})


def service(*endpoints: dict[str, Any], sid: str = "s1", name: str = "W") -> dict[str, Any]:
    return {"id": sid, "name": name, "endpoints": list(endpoints),
            "errorSets": [{"id": "es1", "name": "Default"}]}


def test_steps_are_compared_with_the_objects_read_again() -> None:
    step = Step("update", "endpoint", "W/F", id="e1", parent="service:W", parent_id="s1",
                desired={"name": "F", "requestPathAlias": "/f", "cors": {"maxAge": 120}})
    plan = Plan(steps=[step])
    assert outcomes(plan, {"service": [service(ENDPOINT)]}) == []
    [late] = outcomes(plan, {"service": [service({**ENDPOINT, "cors": {"maxAge": 60}})]})
    assert late.reason == "still differs: cors.maxAge"
    [gone] = outcomes(plan, {"service": [service()]})
    assert gone.reason == "does not exist"


def test_deletes_are_verified_as_gone() -> None:
    plan = Plan(steps=[Step("delete", "endpoint", "W/F", id="e1", parent="service:W", parent_id="s1"),
                       Step("delete", "role", "Old", id="r1")])
    assert outcomes(plan, {"service": [service()], "role": []}) == []
    left = outcomes(plan, {"service": [service(ENDPOINT)], "role": [{"id": "r1", "name": "Old"}]})
    assert [(o.address, o.reason) for o in left] == [("endpoint:W/F", "still exists"), ("role:Old", "still exists")]


def test_a_renamed_object_is_matched_by_its_id() -> None:
    step = Step("update", "service", "New", id="s1", changes=(Change("name", "Old", "New"),), desired={"name": "New"})
    assert outcomes(Plan(steps=[step]), {"service": [service(name="New")]}) == []
    [old] = outcomes(Plan(steps=[step]), {"service": [service(name="Old")]})
    assert old.reason.startswith("still differs: name")


def test_references_to_objects_not_read_again_are_named_from_the_known_ids() -> None:
    ids = {"service:W": "s1", "endpoint:W/F": "e1", "endpoint:a\\/b/c": "e2"}
    step = Step("update", "maintenanceEvent", "Upgrade", id="m1",
                desired={"name": "Upgrade", "startDateTime": "2026-12-01T02:00:00Z",
                         "endDateTime": "2026-12-01T04:00:00Z",
                         "endpoints": [{"service": "W", "endpoint": "F"}, {"service": "a/b", "endpoint": "c"}]})
    event = {"id": "m1", "name": "Upgrade", "startDateTime": "2026-12-01T02:00:00Z",
             "endDateTime": "2026-12-01T04:00:00Z", "endpoints": [{"id": "e1"}, {"id": "e2"}]}
    assert outcomes(Plan(steps=[step]), {"maintenanceEvent": [event]}, ids) == []


def test_key_names_unescape_each_part() -> None:
    assert key_names("a\\/b/c") == ("a/b", "c")
    assert key_names("W/F/get") == ("W", "F", "get")
    assert key_names("plain") == ("plain",)


def test_every_top_level_kind_can_be_read_again() -> None:
    want = Wanted(ids={k.name: ["x1"] for k in kinds.TOP_LEVEL})
    assert [c.kind for c in list_calls(want)] == list(kinds.TOP_LEVEL)
