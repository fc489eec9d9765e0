"""The worker process (``apimctl.workers``) against a reference server, in both dialects: the
area read with its normal forms made there and the plan's unchanged objects told there gives
the plan made without any worker. The thresholds are lowered so that a small area uses it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from apimctl import workers
from apimctl.api.client import ApiClient
from apimctl.manifests import load_manifests, pipeline
from apimctl.planning import make_plan, verdicts
from apimctl.plans.model import Plan
from apimctl.server import ServerConfig, create_app
from apimctl.state import normal_batches
from apimctl.state.digests import unchanged

from .export_support import apply, load

AREA = """
domains: [example.com]
roles: [Partners]
services:
  - name: Weather
    roles: [Partners]
    errorSets: [{name: Default}]
    endpoints:
      - {name: Forecast, requestPathAlias: /forecast, trafficManagerDomain: api.example.com,
         publicDomains: [api.example.com], methods: [{name: get}], errorSet: Default}
      - {name: Current, requestPathAlias: /current, trafficManagerDomain: api.example.com,
         publicDomains: [api.example.com], supportedHttpMethods: [get, post]}
      - {name: Alerts, requestPathAlias: /alerts, trafficManagerDomain: api.example.com,
         publicDomains: [api.example.com], cors: {allDomainsEnabled: true, maxAge: 60}}
  - name: Maps
    endpoints:
      - {name: Tiles, requestPathAlias: /tiles, trafficManagerDomain: api.example.com,
         publicDomains: [api.example.com]}
packages:
  - name: Partners
    plans:
      - {name: Gold, roles: [Partners], services: [{name: Weather, endpoints: [{name: Forecast, methods: [get]}]}]}
      - {name: Silver, services: [{name: Maps}]}
"""

# the same area with changes: an update of an endpoint, of a plan, and a new endpoint
CHANGED = (AREA.replace("maxAge: 60", "maxAge: 120").replace("{name: Silver,", "{name: Silver, qpsLimitCeiling: 5,")
           .replace("  - name: Maps\n    endpoints:\n", "  - name: Maps\n    endpoints:\n"
                    "      - {name: Labels, requestPathAlias: /labels, trafficManagerDomain: api.example.com,\n"
                    "         publicDomains: [api.example.com]}\n"))


@pytest.fixture
def forced(worker_answers: list[Any], monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every batch of normal forms and every verdict asked of the worker; its answers."""
    monkeypatch.setattr(normal_batches, "NORMAL_BATCH", 2)
    monkeypatch.setattr(normal_batches, "WARM_UP", 1)
    monkeypatch.setattr(normal_batches, "OFFLOAD_AFTER", 0)
    monkeypatch.setattr(verdicts, "APART_FROM", 0)
    monkeypatch.setattr(verdicts, "BATCH", 2)
    return worker_answers


def test_plans_with_the_worker_are_the_plans_without(tmp_path: Path, dialect: str, forced: list[Any],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    config = ServerConfig(db_path=str(tmp_path / "a.db"), tokens={"t": "a"},
                          auto_approve_domains=True, dialect=dialect)
    transport = httpx.ASGITransport(app=create_app(config))
    for name, text in (("area", AREA), ("changed", CHANGED)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "m.yaml").write_text(text)

    async def seed() -> None:
        async with ApiClient("http://x/v3/rest", token="t", qps=None, transport=transport) as client:
            await apply(client, load([tmp_path / "area"], {}), {})

    async def plans() -> list[Plan]:
        async with ApiClient("http://x/v3/rest", token="t", qps=None, transport=transport) as client:
            return [await make_plan(client, load([tmp_path / name], {}), prune=True)
                    for name in ("area", "changed")]

    asyncio.run(seed())
    apart = asyncio.run(plans())
    assert forced and None not in forced  # the worker answered every batch and verdict
    monkeypatch.setenv(workers.ENV, "0")
    assert [p.to_json() for p in asyncio.run(plans())] == [p.to_json() for p in apart]
    unchanged, changed = apart
    assert unchanged.steps == []
    assert sorted((s.action, s.address) for s in changed.steps) == [
        ("create", "endpoint:Maps/Labels"), ("update", "endpoint:Weather/Alerts"),
        ("update", "plan:Partners/Silver")]


# two files: Weather (declaring its error sets) with the packages, domains and roles, read
# here; Maps (declaring none: the platform gives it ``Default``), read by the worker. An
# endpoint of Weather has a field the dialect's translation changes.
PARTS = {
    "a.yaml": AREA.split("  - name: Maps")[0] + "packages:" + AREA.split("packages:")[1],
    "b.yaml": "services:\n  - name: Maps" + AREA.split("  - name: Maps")[1].split("packages:")[0],
}
EXTRA = ("      - {name: Headers, requestPathAlias: /headers, trafficManagerDomain: api.example.com,\n"
         "         publicDomains: [api.example.com], forwardedHeaders: [svc-host]}\n")


def test_digests_made_ahead_by_the_worker_plan_as_the_builder(
        tmp_path: Path, dialect: str, forced: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """While the manifests are checked, the worker makes the desired side of the services'
    comparisons (of those it read, and of those read here); the plans are those made
    without it."""
    monkeypatch.setattr(pipeline, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(pipeline, "_split", lambda sizes: 1)  # b.yaml read in the worker
    known: list[list[tuple[str, bool, bool]]] = []  # per plan: address, told ahead, by the builder
    init = verdicts.Verdicts.__init__

    def spied(self, builder, pairs):  # type: ignore[no-untyped-def]
        init(self, builder, pairs)
        told = []
        for index, ahead in self.known.items():
            obj, live = pairs[index]
            want = verdicts.desired_form(obj.kind, obj.doc, builder.context(obj, live)[0], builder.dialect)
            told.append((obj.address, ahead, unchanged(obj.kind, live.norm, want)))
        known.append(sorted(told))

    monkeypatch.setattr(verdicts.Verdicts, "__init__", spied)
    config = ServerConfig(db_path=str(tmp_path / "a.db"), tokens={"t": "a"},
                          auto_approve_domains=True, dialect=dialect)
    transport = httpx.ASGITransport(app=create_app(config))
    area = {**PARTS, "a.yaml": PARTS["a.yaml"].replace("    endpoints:\n", "    endpoints:\n" + EXTRA, 1)}
    changed = {name: text.replace("maxAge: 60", "maxAge: 120") for name, text in area.items()}
    for name, files in (("area", area), ("changed", changed)):
        (tmp_path / name).mkdir()
        for file, text in files.items():
            (tmp_path / name / file).write_text(text)

    assumed = [dialect]  # the dialect the digests are made in ahead

    def loaded(name: str) -> Any:
        return load_manifests([str(tmp_path / name)],
                              apart=(verdicts.made_of_items, (assumed[0],), verdicts.AHEAD_KINDS))

    async def seed() -> None:
        async with ApiClient("http://x/v3/rest", token="t", qps=None, transport=transport) as client:
            await apply(client, load([tmp_path / "area"], {}), {})

    async def plans() -> list[Plan]:
        async with ApiClient("http://x/v3/rest", token="t", qps=None, transport=transport) as client:
            return [await make_plan(client, loaded(name), prune=True) for name in ("area", "changed")]

    asyncio.run(seed())
    known.clear()
    apart = asyncio.run(plans())
    # told ahead: the services' objects but the endpoint the translation changes, each as the
    # builder's own comparison of digests tells it; a changed one is then diffed
    assert [[a for a, _, _ in told] for told in known] == [[
        "endpoint:Maps/Tiles", "endpoint:Weather/Alerts", "endpoint:Weather/Current",
        "endpoint:Weather/Forecast", "errorSet:Weather/Default", "service:Maps", "service:Weather"]] * 2
    assert all(ahead == here for told in known for _, ahead, here in told)
    assert ("endpoint:Weather/Alerts", False, False) in known[1]
    assert ("service:Weather", True, True) in known[0]
    assert ("endpoint:Weather/Alerts", True, True) in known[0]  # (mashery: without §10.8's fields)
    # made in the other dialect: not taken (the builder and the worker compare as before)
    known.clear()
    assumed[0] = "spec" if dialect == "mashery" else "mashery"
    assert [p.to_json() for p in asyncio.run(plans())] == [p.to_json() for p in apart]
    assert known == [[], []]
    monkeypatch.setenv(workers.ENV, "0")
    assert [p.to_json() for p in asyncio.run(plans())] == [p.to_json() for p in apart]
    assert apart[0].steps == []
    assert [(s.action, s.address) for s in apart[1].steps] == [("update", "endpoint:Weather/Alerts")]
