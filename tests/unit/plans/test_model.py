"""The plan's values: addresses, JSON round trips, secrets never serialised, summaries."""

from __future__ import annotations

import json

from apimctl.plans.model import (
    DUPLICATES,
    FORMAT_VERSION,
    TEMPORARY_ROUTE,
    WRITE_ONLY_NOTE,
    Change,
    Duplicate,
    Fingerprint,
    Plan,
    Step,
    Unmanaged,
    WriteOnly,
    address,
)


def _plan() -> Plan:
    return Plan(
        steps=[
            Step("create", "service", "W", desired={"name": "W"},
                 changes=(Change("name", None, "W"), Change("systemDomainCredentialSecret", None, "${S}", True))),
            Step("update", "endpoint", "W/F", id="e1", parent="service:W", parent_id="s1",
                 changes=(Change("cors.maxAge", 0, 60),), depends_on=("service:W",), desired={"name": "F"}),
            Step("delete", "role", "Old", id="r1"),
        ],
        unmanaged=[Unmanaged("role", "Stray", "r9")],
        fingerprints={"endpoint:W/F": Fingerprint("endpoint", "W/F", "e1", "2026-01-01T00:00:00Z", 3)},
        ignored=[{"target": "role:*:description", "reason": "HR"}],
        target="area-1",
        warnings=["careful"],
        duplicates=[Duplicate("maintenanceEvent", "Up", ("m1", "m2"), "m1", "oldest", repair=True)],
        write_only=[WriteOnly("endpoint", "W/F", "systemDomainAuthentication.password", sent=True)],
        secret_values={"S": "hunter2"},
    )


def test_address() -> None:
    assert address("endpoint", "Weather/Forecast") == "endpoint:Weather/Forecast"
    assert Step("delete", "role", "a\\/b").address == "role:a\\/b"


def test_a_plan_survives_its_json() -> None:
    plan = _plan()
    again = Plan.from_json(json.loads(plan.dumps()))
    assert again.to_json() == plan.to_json()
    assert again.steps[1:] == plan.steps[1:]
    # a sensitive change keeps only its path; the rest of the plan is equal
    assert again.steps[0].changes == (Change("name", None, "W"), Change("systemDomainCredentialSecret", None, None, True))
    again.steps[0] = plan.steps[0]
    assert again == plan  # secret_values take no part in the comparison
    assert again.secret_values == {}


def test_secrets_never_reach_the_json() -> None:
    text = _plan().dumps()
    assert "hunter2" not in text and "${S}" not in text
    change = json.loads(text)["steps"][0]["changes"][1]
    assert change == {"path": "systemDomainCredentialSecret", "before": "(sensitive)", "after": "(sensitive)",
                      "sensitive": True}
    assert Change.from_json(change) == Change("systemDomainCredentialSecret", None, None, True)


def test_the_json_document() -> None:
    doc = _plan().to_json()
    assert doc["format_version"] == FORMAT_VERSION and doc["target"] == "area-1"
    assert doc["summary"] == {"create": 1, "update": 1, "delete": 1, "unmanaged": 1}
    assert doc["steps"][1]["address"] == "endpoint:W/F"
    assert doc["duplicates"][0]["repair"] is True and doc["write_only"][0]["note"] == "sent by this plan"
    bare = Plan().to_json()
    assert "duplicates" not in bare and "write_only" not in bare  # optional keys only when present
    assert bare["summary"] == {"create": 0, "update": 0, "delete": 0, "unmanaged": 0}


def test_plan_lookups() -> None:
    plan = _plan()
    assert plan.has_changes and not Plan().has_changes
    assert plan.step("role:Old") is plan.steps[2]
    assert plan.step("role:Nobody") is None


def test_temporary_route_steps() -> None:
    assert Step("update", "endpoint", "W/F" + TEMPORARY_ROUTE).temporary
    assert not Step("update", "endpoint", "W/F").temporary


def test_duplicate_deletes() -> None:
    step = Step("update", "endpoint", "W/F", changes=(
        Change("methods[GET]" + DUPLICATES, ["m1", "m2", 3], ["m1"]),
        Change("methods[PUT]" + DUPLICATES, ["p1", "p2"], None),
        Change("methods[POST]", ["x"], []),
    ))
    assert step.duplicate_deletes() == {"m2", "3", "p1", "p2"}


def test_duplicate_and_write_only_values() -> None:
    dup = Duplicate("endpoint", "W/F", ("a", "b", "c"), "b", "pinned by id", path="methods[GET]")
    assert dup.extra == ("a", "c")
    assert dup.where == "endpoint:W/F methods[GET]"
    assert Duplicate("role", "R", ("1",), "1", "oldest").where == "role:R"
    assert Duplicate.from_json(dup.to_json()) == dup
    unsent = WriteOnly("endpoint", "W/F", "systemDomainAuthentication.password")
    assert unsent.note == WRITE_ONLY_NOTE and unsent.to_json()["address"] == "endpoint:W/F"
    assert WriteOnly.from_json(unsent.to_json()) == unsent
