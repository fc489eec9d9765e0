"""Caller impact against the reference server of each dialect: members, applications and keys
created through the management API on several plans, with and without key-level ceilings;
every impact line checked for its exact counts; ``--max-affected-keys`` refuses and names.

One in-process server per dialect for the module: the area is made once (services, plans,
then members, applications and keys through the API) and each test plans a variant of the
manifests against it; the tests that write restore what they changed.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from apimctl.applying.command import ApplyRequest, apply
from apimctl.applying.run import ApplyOptions, apply_plan
from apimctl.drift import detect_drift
from apimctl.errors import PlanError
from apimctl.manifests import load_manifests
from apimctl.planning import PlanOptions, make_plan
from apimctl.plans.model import Plan
from apimctl.render.json import plan_document
from apimctl.render.markdown import render_plan as render_markdown
from apimctl.render.text import render_plan as render_text

from .export_support import client_for, server_app

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "plan.schema.json").read_text())


def _endpoint(name: str, alias: str, methods: list[str]) -> dict[str, Any]:
    return {"name": name, "requestPathAlias": alias, "trafficManagerDomain": "api.example.com",
            "publicDomains": ["api.example.com"], "systemDomains": ["backend.example.net"],
            "supportedHttpMethods": methods}


BASE: dict[str, Any] = {
    "domains": ["example.com", "example.net"],
    "services": [
        {"name": "Ordering", "description": "Orders",
         "endpoints": [_endpoint("Track order", "/track", ["get"]),
                       _endpoint("Place order", "/place", ["get", "post"])]},
        {"name": "Legacy", "endpoints": [_endpoint("Old", "/old", ["get"])]},
    ],
    "packages": [{"name": "Shop", "plans": [
        {"name": "Pro", "rateLimitCeiling": 1000, "qpsLimitCeiling": 10, "maxNumKeysAllowed": 5,
         "services": [{"name": "Ordering", "endpoints": [{"name": "Track order"}, {"name": "Place order"}]}]},
        {"name": "Flex", "rateLimitCeiling": 1000, "rateLimitKeyOverrideAllowed": True,
         "services": [{"name": "Ordering", "endpoints": [{"name": "Track order"}]}]},
        {"name": "Free", "services": [{"name": "Legacy", "endpoints": [{"name": "Old"}]}]},
    ]}],
}

# (application, plan, key fields): Pro holds 5 keys in 3 applications (dev1: 3, dev2: 2);
# Flex 2 keys in 1 application; Free 1 key
KEYS: list[tuple[str, str, dict[str, Any]]] = [
    ("A1", "Pro", {}), ("A1", "Pro", {"rateLimitCeiling": 800}), ("A2", "Pro", {"rateLimitExempt": True}),
    ("B1", "Pro", {}), ("B1", "Pro", {"rateLimitCeiling": 300}),
    ("B1", "Flex", {"rateLimitCeiling": 2000}), ("B1", "Flex", {}),
    ("A2", "Free", {}),
]
OWNERS = {"A1": "dev1", "A2": "dev1", "B1": "dev2"}


class Area:
    """The module's server: its app, the database folder and the ids of the keys made."""

    def __init__(self, app: Any, tmp: Path) -> None:
        self.app, self.tmp = app, tmp
        self.key_ids: list[str] = []
        self.plan_ids: dict[str, str] = {}

    def manifest(self, doc: dict[str, Any]) -> Any:
        path = self.tmp / "area.yaml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return load_manifests([str(path)])

    def plan(self, doc: dict[str, Any], impact: str | None = "auto") -> tuple[Plan, Any]:
        async def run() -> tuple[Plan, Any]:
            async with client_for(self.app) as client:
                made = await make_plan(client, self.manifest(doc), PlanOptions(impact=impact))
                return made, client.stats.calls
        return asyncio.run(run())


async def _setup(area: Area) -> None:
    async with client_for(area.app) as client:
        made = await make_plan(client, area.manifest(BASE))
        assert (await apply_plan(client, made, ApplyOptions(env={}))).ok
        (package,) = await client.list_all("/packages", {"fields": "id,name,plans.id,plans.name"})
        area.plan_ids = {p["name"]: p["id"] for p in package["plans"]}
        members = {}
        for user in sorted(set(OWNERS.values())):
            members[user] = await client.post("/members", {
                "username": user, "email": f"{user}@example.org", "displayName": user,
                "externalId": f"ext-{user}", "passwdNew": "S3cret-pass!"})
        apps = {}
        for name, user in OWNERS.items():
            apps[name] = await client.post(f"/members/{members[user]['id']}/applications",
                                           {"name": name, "username": user})
        for app_name, plan_name, fields in KEYS:
            key = await client.post(f"/applications/{apps[app_name]['id']}/packageKeys", {
                "package": {"id": package["id"]}, "plan": {"id": area.plan_ids[plan_name]}, **fields})
            area.key_ids.append(key["id"])


@pytest.fixture(scope="module")
def area(dialect: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Area]:
    tmp = tmp_path_factory.mktemp(f"impact-{dialect}")
    made = Area(server_app(tmp / "area.db", dialect=dialect), tmp)
    asyncio.run(_setup(made))
    yield made


def _variant(change: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    change(doc)
    return doc


def _plan_doc(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in doc["packages"][0]["plans"] if p["name"] == name)


def _lines(plan: Plan, address: str) -> list[tuple[str | None, str, str, int | None, int | None]]:
    step = plan.step(address)
    assert step is not None, [s.address for s in plan.steps]
    return [(i.path, i.effect, i.text, i.keys, i.applications) for i in step.impact]


def _key_reads(calls: Any) -> int:
    return int(calls[("GET", "/packageKeys")] + calls[("GET", "/applications")])


def test_a_plan_with_nothing_that_governs_calls_reads_no_keys(area: Area) -> None:
    made, calls = area.plan(_variant(lambda d: d["services"][0].update(description="All orders")))
    assert [s.address for s in made.steps] == ["service:Ordering"]
    assert _key_reads(calls) == 0
    assert made.impact is not None and not made.impact.read and made.steps[0].impact == ()


def test_entitlement_removed_names_keys_and_applications(area: Area) -> None:
    def drop(doc: dict[str, Any]) -> None:
        _plan_doc(doc, "Pro")["services"][0]["endpoints"] = [{"name": "Place order"}]

    made, calls = area.plan(_variant(drop))
    assert _lines(made, "plan:Shop/Pro") == [(
        "services[Ordering].endpoints[Track order]", "cuts_off",
        "5 keys (3 applications) on plan Pro lose access to Ordering/Track order", 5, 3)]
    assert calls[("GET", "/applications")] == 1 and calls[("GET", "/packageKeys")] == 0
    assert made.impact is not None and made.impact.read and made.impact.calls == 1
    text = render_text(made)
    assert "      ! 5 keys (3 applications) on plan Pro lose access to Ordering/Track order\n" in text
    markdown = render_markdown(made)
    alert = next(part for part in markdown.split("\n\n") if part.startswith("> [!WARNING]"))
    assert "5 keys (3 applications) on plan Pro lose access to Ordering/Track order" in alert
    document = plan_document(made)
    jsonschema.validate(document, SCHEMA)
    (step,) = document["steps"]
    assert step["impact"][0]["by_plan"] == [{"address": "plan:Shop/Pro", "keys": 5}]


def test_ceiling_lowered_counts_followers_clamped_lower_and_exempt_keys(area: Area) -> None:
    made, calls = area.plan(_variant(lambda d: _plan_doc(d, "Pro").update(rateLimitCeiling=500)))
    clamped = area.key_ids[1]
    assert _lines(made, "plan:Shop/Pro") == [
        ("rateLimitCeiling", "tightens",
         "5 keys on plan Pro: 2 follow the plan's ceiling: 500 calls per day (was 1000 calls per "
         "day); 1 has a higher ceiling of its own, which the plan does not allow; 1 has a lower "
         "ceiling of its own; 1 is exempt", 3, None),
        ("rateLimitCeiling", "tightens",
         f"the platform will clamp 1 key on plan Pro to 500 calls per day: {clamped}", 1, None)]
    step = made.step("plan:Shop/Pro")
    assert step is not None and step.impact[1].key_ids == (clamped,)
    assert calls[("GET", "/packageKeys")] == 1 and calls[("GET", "/applications")] == 0
    assert made.affected_keys() == 3


def test_ceiling_lowered_where_keys_may_override(area: Area) -> None:
    made, _ = area.plan(_variant(lambda d: _plan_doc(d, "Flex").update(rateLimitCeiling=500)))
    assert _lines(made, "plan:Shop/Flex") == [
        ("rateLimitCeiling", "tightens",
         "2 keys on plan Flex: 1 follows the plan's ceiling: 500 calls per day (was 1000 calls "
         "per day); 1 keeps a higher ceiling of its own (the plan allows key overrides)", 1, None)]


def test_period_exempt_and_override_flags(area: Area) -> None:
    def flags(doc: dict[str, Any]) -> None:
        _plan_doc(doc, "Pro").update(rateLimitPeriod="hour")
        _plan_doc(doc, "Flex").update(rateLimitKeyOverrideAllowed=False)

    made, _ = area.plan(_variant(flags))
    assert _lines(made, "plan:Shop/Pro") == [(
        "rateLimitPeriod", "tightens",
        "5 keys on plan Pro: 4 count their calls per hour (was per day)", 4, None)]
    assert _lines(made, "plan:Shop/Flex") == [(
        "rateLimitKeyOverrideAllowed", "tightens",
        f"the platform will clamp 1 key on plan Flex to 1000 calls per day: {area.key_ids[5]}", 1, None)]


def test_max_keys_below_what_a_member_holds(area: Area) -> None:
    made, calls = area.plan(_variant(lambda d: _plan_doc(d, "Pro").update(maxNumKeysAllowed=2)))
    assert _lines(made, "plan:Shop/Pro") == [(
        "maxNumKeysAllowed", "informs",
        "1 member already holds more than 2 keys on plan Pro (3 keys): they keep them, and get "
        "no new one", 3, None)]
    assert calls[("GET", "/applications")] == 1


def test_route_change_names_the_keys_entitled_to_the_endpoint(area: Area) -> None:
    def move(doc: dict[str, Any]) -> None:
        doc["services"][0]["endpoints"][0]["requestPathAlias"] = "/track2"
        doc["services"][0]["endpoints"][1]["supportedHttpMethods"] = ["get"]

    made, _ = area.plan(_variant(move))
    assert _lines(made, "endpoint:Ordering/Track order") == [(
        "requestPathAlias", "cuts_off",
        "7 keys (3 applications) on plans Flex, Pro call Ordering/Track order: calls to /track "
        "no longer reach it (its path becomes /track2)", 7, 3)]
    assert _lines(made, "endpoint:Ordering/Place order") == [(
        "supportedHttpMethods", "cuts_off",
        "5 keys (3 applications) on plan Pro call Ordering/Place order: POST calls no longer "
        "reach it", 5, 3)]


def test_deletes_say_what_goes_with_them(area: Area) -> None:
    def drop(doc: dict[str, Any]) -> None:
        doc["services"] = doc["services"][:1]
        plans = doc["packages"][0]["plans"]
        doc["packages"][0]["plans"] = [p for p in plans if p["name"] != "Free"]
        plans[1]["services"] = [{"name": "Ordering", "endpoints": [{"name": "Track order"}]}]

    def prune(doc: dict[str, Any]) -> None:
        drop(doc)
        doc["settings"] = {"prune": True}

    made, _ = area.plan(_variant(prune))
    assert _lines(made, "plan:Shop/Free") == [
        (None, "cuts_off", "1 key (1 application) on plan Free loses access to everything the "
         "plan entitles", 1, 1),
        (None, "informs", "goes with it: its entitlements to Legacy", None, None)]
    assert _lines(made, "service:Legacy") == [
        (None, "cuts_off", "1 key (1 application) on plan Free loses access to Legacy", 1, 1),
        (None, "informs", "goes with it: 1 endpoint, 1 error set, its entitlements in plan Free",
         None, None)]


def test_impact_never_reads_nothing_and_the_guard_refuses_without_it(area: Area) -> None:
    doc = _variant(lambda d: _plan_doc(d, "Pro").update(rateLimitCeiling=500))
    made, calls = area.plan(doc, impact="never")
    assert _key_reads(calls) == 0 and made.steps[0].impact == ()
    request = ApplyRequest(paths=(str(area.tmp / "area.yaml"),), max_affected_keys=10,
                           impact="never", lock=False, env={})
    with pytest.raises(PlanError, match="needs the plan's caller impact"):
        asyncio.run(_apply(area, request))


async def _apply(area: Area, request: ApplyRequest) -> Any:
    async with client_for(area.app) as client:
        before = client.stats.writes()
        try:
            return await apply(request, lambda: _same(client))
        finally:
            assert client.stats.writes() == before  # refused: nothing written


class _same:
    """The module's client as the connection ``apply`` opens (and does not close)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def __aenter__(self) -> Any:
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        return None


def test_max_affected_keys_refuses_and_names_the_changes(area: Area) -> None:
    doc = _variant(lambda d: _plan_doc(d, "Pro").update(rateLimitCeiling=500))
    area.manifest(doc)
    request = ApplyRequest(paths=(str(area.tmp / "area.yaml"),), max_affected_keys=2, lock=False,
                           env={})
    with pytest.raises(PlanError) as refused:
        asyncio.run(_apply(area, request))
    message = str(refused.value)
    assert "cuts off or tightens 3 keys, more than --max-affected-keys 2" in message
    assert "plan:Shop/Pro rateLimitCeiling: 5 keys on plan Pro: 2 follow" in message
    assert f"clamp 1 key on plan Pro to 500 calls per day: {area.key_ids[1]}" in message
    assert message.endswith("nothing was written")
    made, _ = area.plan(doc)
    assert made.step("plan:Shop/Pro") is not None  # still to do: nothing was applied


def test_drift_tells_the_impact_of_a_change_outside_git(area: Area) -> None:
    async def run() -> Any:
        async with client_for(area.app) as client:
            (package,) = await client.list_all("/packages", {"fields": "id,name"})
            path = f"/packages/{package['id']}/plans/{area.plan_ids['Pro']}"
            await client.put(path, {"rateLimitCeiling": 2000})
            try:
                return await detect_drift(client, area.manifest(BASE), impact="auto")
            finally:
                await client.put(path, {"rateLimitCeiling": 1000})

    report = asyncio.run(run())
    (difference,) = report.differences
    assert [(i.effect, i.text) for i in difference.step.impact] == [(
        "loosens", "5 keys on plan Pro: 2 follow the plan's ceiling: 2000 calls per day (was "
        "1000 calls per day); 2 have a lower ceiling of their own; 1 is exempt")]


def test_impact_always_reads_every_plan_once(area: Area) -> None:
    made, calls = area.plan(_variant(lambda d: d["services"][0].update(description="All orders")),
                            impact="always")
    assert calls[("GET", "/packageKeys")] == 1 and calls[("GET", "/applications")] == 0
    assert made.impact is not None and made.impact.read and made.impact.items == len(KEYS)
    assert made.steps[0].impact == ()


def test_apply_counts_the_impact_read_in_its_calls_and_passes_the_guard(area: Area) -> None:
    doc = _variant(lambda d: _plan_doc(d, "Flex").update(rateLimitCeiling=900))
    area.manifest(doc)
    request = ApplyRequest(paths=(str(area.tmp / "area.yaml"),), max_affected_keys=1, lock=False,
                           env={})

    async def run() -> Any:
        async with client_for(area.app) as client:
            result = await apply(request, lambda: _same(client))
            keys_read = client.stats.calls[("GET", "/packageKeys")]
            area.manifest(BASE)  # put the area back as the other tests expect it
            back = await apply(ApplyRequest(paths=request.paths, lock=False, env={}, impact="never"),
                               lambda: _same(client))
            return result, keys_read, back

    result, keys_read, back = asyncio.run(run())
    assert result.ok and back.ok, (result.to_json(), back.to_json())
    assert result.plan.impact.calls == 1 and keys_read == 1
    assert result.read_calls >= result.plan.impact.calls + 1  # the area's read and the keys
    assert result.plan.affected_keys() == 1
