"""Duplicates found and repaired, routes moved and swapped in one apply, against the reference
server (in process): live copies sharing one identity are reported by plan and drift,
``--repair-duplicates`` deletes the extra copies (the next plan is zero); an endpoint moved to
another service with its route, and two endpoints of two services swapping routes, converge in
one apply, in an order the plan shows. Each against both dialects of the server (SUPPLEMENT §10)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from apimctl.api.client import ApiClient
from apimctl.applying.run import ApplyOptions, apply_plan
from apimctl.drift import detect_drift
from apimctl.errors import PlanError
from apimctl.planning import PlanOptions, make_plan
from apimctl.planning.duplicates import check_duplicates
from apimctl.plans.model import Plan
from apimctl.render.json import plan_document
from apimctl.render.text import render_plan

from .export_support import apply, client_for, describe, load, replan, server_app

DOMAINS = "domains: [example.com]\n"


def endpoint(name: str, alias: str, extra: str = "") -> str:
    return (f"      - name: {name}\n        requestPathAlias: {alias}\n"
            "        trafficManagerDomain: api.example.com\n        publicDomains: [api.example.com]\n"
            f"        systemDomains: [backend.example.com]\n{extra}")


def write(tmp: Path, text: str, name: str = "m") -> Path:
    folder = tmp / name
    folder.mkdir(exist_ok=True)
    (folder / "m.yaml").write_text(text)
    return folder


async def ids(client: ApiClient) -> dict[str, str]:
    out: dict[str, str] = {}
    for svc in await client.list_all("/services", [("fields", "id,name,endpoints.id,endpoints.name")]):
        out[svc["name"]] = svc["id"]
        for ep in svc.get("endpoints") or []:
            out[f"{svc['name']}/{ep['name']}"] = ep["id"]
    return out


async def converge(client: ApiClient, plan: Plan) -> None:
    result = await apply_plan(client, plan, ApplyOptions())
    assert result.ok, result.to_json()


DUPES = DOMAINS + """services:
  - name: S
    endpoints:
""" + endpoint("E", "/e", "        methods: [{name: GET}]\n") + """scheduledMaintenanceEvents:
  - name: Up
    startDateTime: "2030-01-01T00:00:00Z"
    endDateTime: "2030-01-02T00:00:00Z"
    endpoints: [{service: S, endpoint: E}]
"""


def test_duplicates_are_reported_refused_and_repaired(tmp_path: Path, dialect: str) -> None:
    asyncio.run(_duplicates_are_reported_refused_and_repaired(tmp_path, dialect))


async def _duplicates_are_reported_refused_and_repaired(tmp_path: Path, dialect: str) -> None:
    manifest = load([write(tmp_path, DUPES)], {})
    async with client_for(server_app(tmp_path / "a.db", dialect=dialect)) as client:
        await apply(client, manifest, {})
        known = await ids(client)
        base = f"/services/{known['S']}/endpoints/{known['S/E']}/methods"
        extra_method = await client.post(base, {"name": "GET"})
        await client.post("/scheduledMaintenanceEvents", {
            "name": "Up", "startDateTime": "2030-01-01T00:00:00Z", "endDateTime": "2030-01-02T00:00:00Z"})

        plan = await replan(client, manifest)  # no longer a PlanError, no longer "No changes"
        assert not plan.steps, describe(plan)
        assert plan.dialect == dialect  # detected from the area
        found = {(d.kind, d.key, d.path): d for d in plan.duplicates}
        assert set(found) == {("maintenanceEvent", "Up", ""), ("endpoint", "S/E", "methods[GET]")}
        assert found[("endpoint", "S/E", "methods[GET]")].extra == (extra_method["id"],)
        assert all(d.reason.startswith("oldest") and not d.repair for d in found.values())
        text = render_plan(plan)
        assert "Duplicates (live copies sharing one identity):" in text
        assert "--repair-duplicates" in text
        assert plan_document(plan)["duplicates"][0]["kind"] in ("maintenanceEvent", "endpoint")

        report = await detect_drift(client, manifest)
        assert report.drifted and not report.differences and len(report.duplicates) == 2

        # a change to a duplicated object without repair: apply must not guess
        changed = load([write(tmp_path, DUPES.replace("2030-01-02", "2030-01-03"), "changed")], {})
        with pytest.raises(PlanError, match="more than once"):
            check_duplicates(await replan(client, changed))

        repair = await make_plan(client, manifest, PlanOptions(repair_duplicates=True))
        shown = [(s.action, s.address) for s in repair.steps]
        assert ("update", "endpoint:S/E") in shown, shown
        assert next(a for a in shown if a[0] == "delete")[1].startswith("maintenanceEvent:Up (id "), shown
        change = repair.step("endpoint:S/E").changes[0]  # type: ignore[union-attr]
        assert change.path == "methods[GET] (duplicates)" and change.after == [found[("endpoint", "S/E", "methods[GET]")].keep]
        check_duplicates(repair)  # a repairing plan may be applied
        await converge(client, repair)

        after = await replan(client, manifest)
        assert not after.steps and not after.duplicates, describe(after)
        assert not (await detect_drift(client, manifest)).drifted


MOVE_BEFORE = DOMAINS + "services:\n  - name: Old\n    endpoints:\n" + endpoint("E", "/moving") + \
    "  - name: New\n    endpoints: []\n"
MOVE_AFTER = DOMAINS + "services:\n  - name: Old\n    endpoints: []\n  - name: New\n    endpoints:\n" + \
    endpoint("E", "/moving")


def test_an_endpoint_moved_to_another_service_with_its_route_converges_in_one_apply(tmp_path: Path, dialect: str) -> None:
    asyncio.run(_an_endpoint_moved_to_another_service_with_its_route_converges_in_one_apply(tmp_path, dialect))


async def _an_endpoint_moved_to_another_service_with_its_route_converges_in_one_apply(
        tmp_path: Path, dialect: str) -> None:
    async with client_for(server_app(tmp_path / "a.db", dialect=dialect)) as client:
        await apply(client, load([write(tmp_path, MOVE_BEFORE, "before")], {}), {})
        moved = load([write(tmp_path, MOVE_AFTER, "after")], {})
        plan = await replan(client, moved)
        order = [s.address for s in plan.steps]
        assert order.index("endpoint:Old/E") < order.index("endpoint:New/E"), order
        assert "endpoint:Old/E" in plan.step("endpoint:New/E").depends_on  # type: ignore[union-attr]
        await converge(client, plan)
        again = await replan(client, moved)
        assert not again.steps, describe(again)


SWAP = DOMAINS + "services:\n  - name: S1\n    endpoints:\n" + endpoint("A", "{a}") + \
    "  - name: S2\n    endpoints:\n" + endpoint("B", "{b}")


def test_a_cross_service_route_swap_converges_in_one_apply(tmp_path: Path, dialect: str) -> None:
    asyncio.run(_a_cross_service_route_swap_converges_in_one_apply(tmp_path, dialect))


async def _a_cross_service_route_swap_converges_in_one_apply(tmp_path: Path, dialect: str) -> None:
    async with client_for(server_app(tmp_path / "a.db", dialect=dialect)) as client:
        await apply(client, load([write(tmp_path, SWAP.format(a="/a", b="/b"), "before")], {}), {})
        swapped = load([write(tmp_path, SWAP.format(a="/b", b="/a"), "after")], {})
        plan = await replan(client, swapped)
        order = [s.address for s in plan.steps]
        assert order == ["endpoint:S1/A (temporary route)", "endpoint:S2/B", "endpoint:S1/A"], order
        temp = plan.steps[0]
        assert temp.changes[0].path == "requestPathAlias"
        assert str(temp.changes[0].after).startswith("/a.apimctl-swap-")
        text = render_plan(plan)
        assert text.index('endpoint "S1/A (temporary route)"') < text.index('endpoint "S2/B"')
        await converge(client, plan)
        again = await replan(client, swapped)
        assert not again.steps, describe(again)


def test_a_swap_within_one_service_needs_no_temporary_route(tmp_path: Path, dialect: str) -> None:
    asyncio.run(_a_swap_within_one_service_needs_no_temporary_route(tmp_path, dialect))


async def _a_swap_within_one_service_needs_no_temporary_route(tmp_path: Path, dialect: str) -> None:
    text = DOMAINS + "services:\n  - name: S\n    endpoints:\n" + endpoint("A", "{a}") + endpoint("B", "{b}")
    async with client_for(server_app(tmp_path / "a.db", dialect=dialect)) as client:
        await apply(client, load([write(tmp_path, text.format(a="/a", b="/b"), "before")], {}), {})
        swapped = load([write(tmp_path, text.format(a="/b", b="/a"), "after")], {})
        plan = await replan(client, swapped)
        assert sorted(s.address for s in plan.steps) == ["endpoint:S/A", "endpoint:S/B"]
        await converge(client, plan)
        assert not (await replan(client, swapped)).steps
