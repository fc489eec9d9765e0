"""Generated (area, plan, log) triples: every outcome change seeded into the log is reported
against the plan change that causes it, nothing is blamed on a change the plan does not make,
and a plan with no changes reports none."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.replay.compare import OTHER, replay
from apimctl.replay.decide import Side
from apimctl.replay.records import Record
from apimctl.server.dialects import dialect_of
from apimctl.server.traffic.area import area_of

HOST = "api.example.com"
T0 = 1767607200.0  # 2026-01-05T10:00:00Z
ENDPOINTS = 4
PLANS = 3


def area_docs() -> dict[str, list[dict[str, Any]]]:
    endpoints = [{"id": f"e{n}", "name": f"E{n}", "requestPathAlias": f"/e{n}", "supportedHttpMethods": ["get"],
                  "publicDomains": [{"address": HOST}], "apiKeyValueLocations": ["request-parameters"],
                  "apiKeyValueLocationKey": "api_key"} for n in range(ENDPOINTS)]
    service = {"id": "s", "name": "S", "endpoints": endpoints}
    entitled = [{"id": "s", "endpoints": [{"id": e["id"]} for e in endpoints]}]
    plans = [{"id": f"p{n}", "name": f"P{n}", "services": copy.deepcopy(entitled)} for n in range(PLANS)]
    keys = [{"id": f"k{n}", "apikey": f"key-{n}-0123456789", "status": "active", "_packageId": "pk",
             "_planId": f"p{n}", "_applicationId": f"a{n}"} for n in range(PLANS)]
    return {"service": [service], "package": [{"id": "pk", "name": "PK", "plans": plans}], "key": keys, "event": []}


# a change: (what, endpoint index, plan index); each touches one endpoint or one plan
CHANGES = st.sampled_from(["https", "remove", "unentitle", "rate", "maintenance"])


def apply_change(docs: dict[str, list[dict[str, Any]]], what: str, ep: int, plan: int) -> str:
    """Change ``docs`` in place as a plan would; the address of the plan's step."""
    endpoints = docs["service"][0]["endpoints"]
    target = next(e for e in endpoints if e["id"] == f"e{ep}")
    plan_doc = docs["package"][0]["plans"][plan]
    if what == "https":
        target["inboundSslRequired"] = True
        return f"endpoint:S/E{ep}"
    if what == "remove":
        endpoints.remove(target)
        return f"endpoint:S/E{ep}"
    if what == "unentitle":
        plan_doc["services"][0]["endpoints"] = [e for e in plan_doc["services"][0]["endpoints"] if e["id"] != f"e{ep}"]
        return f"plan:PK/P{plan}"
    if what == "rate":
        plan_doc["rateLimitCeiling"], plan_doc["rateLimitPeriod"] = 1, "day"
        return f"plan:PK/P{plan}"
    docs["event"].append({"id": f"m{ep}", "name": f"Upgrade {ep}", "startDateTime": "2026-01-05T00:00:00Z",
                          "endDateTime": "2026-01-06T00:00:00Z", "endpoints": [{"id": f"e{ep}"}]})
    return f"maintenanceEvent:Upgrade {ep}"


def record(n: int, ep: int, plan: int, https: bool, key: str | None = None) -> Record:
    return Record(f"log:{n}", T0 + n, "GET", HOST, f"/e{ep}/x", (), key or f"key-{plan}-0123456789", "", https,
                  200, "")


def seeded(what: str, ep: int, plan: int, n: int) -> list[Record]:
    """Calls whose answer the change must change (a fresh key for the rate: twice)."""
    if what == "rate":
        return [record(n, ep, plan, True), record(n + 1, ep, plan, True)]
    return [record(n, ep, plan, what != "https")]


NOISE = st.lists(st.tuples(st.integers(0, ENDPOINTS), st.integers(0, PLANS), st.booleans()), max_size=15)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(CHANGES, st.integers(0, ENDPOINTS - 1), st.integers(0, PLANS - 1)), max_size=3,
                unique_by=lambda c: (c[1], c[2])), NOISE)
def test_every_seeded_change_is_blamed_on_its_cause(changes: list[tuple[str, int, int]],
                                                    noise: list[tuple[int, int, bool]]) -> None:
    # one change per endpoint and per plan, so that each seeded call has one cause
    changes = [c for i, c in enumerate(changes) if all(c[1] != d[1] and c[2] != d[2] for d in changes[:i])]
    before, after = area_docs(), area_docs()
    addresses = [apply_change(after, *change) for change in changes]
    made = set(addresses)
    touched_eps = {ep for _, ep, _ in changes}
    touched_plans = {plan for _, _, plan in changes}
    log: list[Record] = []
    for n, (ep, plan, https) in enumerate(noise):  # other calls: unknown keys, unrouted paths, ...
        key = "unknown-key-000000" if plan == PLANS else None
        log.append(record(n, ep, plan % PLANS, https, key) if ep < ENDPOINTS else
                   Record(f"log:{n}", T0 + n, "GET", HOST, "/nowhere", (), "", "", True, 200, ""))
    expected: dict[str, int] = {}
    for (what, ep, plan), address in zip(changes, addresses, strict=True):
        # the seeded call uses an endpoint and a plan no other change touches
        other_plan = next((p for p in range(PLANS) if p not in touched_plans), None)
        other_ep = next((e for e in range(ENDPOINTS) if e not in touched_eps), None)
        if what in ("https", "remove", "maintenance"):
            if other_plan is None:
                continue
            calls = seeded(what, ep, other_plan, 1000 + len(log))
        elif what == "unentitle":  # the endpoint the plan no longer entitles
            calls = seeded(what, ep, plan, 1000 + len(log))
        else:
            if other_ep is None:
                continue
            calls = seeded(what, other_ep, plan, 1000 + len(log))
        log += calls
        expected[address] = 1
    log.sort(key=lambda r: r.time)
    dialect = dialect_of("spec")
    found = replay(iter(log), Side([area_of("a", before)], dialect), Side([area_of("a", after)], dialect), made)
    blamed = {group.change for group in found.groups.values()}
    assert set(expected) <= blamed
    assert blamed <= made and OTHER not in blamed
    assert found.changed == sum(g.calls for g in found.groups.values())
    if not changes:
        assert found.changed == 0 and not found.groups


@settings(max_examples=15, deadline=None)
@given(NOISE)
def test_a_plan_without_changes_reports_none(noise: list[tuple[int, int, bool]]) -> None:
    log = [record(n, ep % ENDPOINTS, plan % PLANS, https) for n, (ep, plan, https) in enumerate(noise)]
    dialect = dialect_of("mashery")
    found = replay(iter(log), Side([area_of("a", area_docs())], dialect), Side([area_of("a", area_docs())], dialect),
                   set())
    assert found.changed == 0 and not found.groups and found.calls == len(log)
