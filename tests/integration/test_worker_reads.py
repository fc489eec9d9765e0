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
from apimctl.planning import PlanOptions, comparing, make_plan
from apimctl.plans.model import Plan
from apimctl.server import ServerConfig, create_app
from apimctl.state import normal_batches

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
    monkeypatch.setattr(comparing, "APART_FROM", 0)
    monkeypatch.setattr(comparing, "BATCH", 2)
    monkeypatch.setattr(workers.FromBothEnds, "patient", True)  # every verdict sent is taken
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
            return [await make_plan(client, load([tmp_path / name], {}), PlanOptions(prune=True))
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
