"""Large generated configurations shared by the benchmarks.

``area(services, packages)`` is a manifest document (canonical form, as the loader returns
it) of ``services`` services with 10 endpoints each and ``packages`` packages with 5 plans
each, every plan entitled to two endpoints of one service; ``one_percent_change`` changes 1%
of its objects.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

ENDPOINTS_PER_SERVICE = 10
PLANS_PER_PACKAGE = 5


@dataclass
class Manifest:
    """What the planner needs of a loaded manifest."""

    doc: dict[str, Any]
    secret_refs: dict[tuple[str | int, ...], str] = field(default_factory=dict)
    validated: bool = False  # not made by the manifest pipeline

    def where(self, path: tuple[str | int, ...]) -> None:
        """Positions are unknown: the manifest was not read from files."""
        return None


def endpoint(s: int, e: int) -> dict[str, Any]:
    return {"name": f"ep-{e}", "requestPathAlias": f"/s{s}/e{e}",
            "trafficManagerDomain": "api.example.com", "publicDomains": ["api.example.com"],
            "systemDomains": ["backend.example.com"], "supportedHttpMethods": ["get", "post"],
            "cors": {"allDomainsEnabled": False, "maxAge": 60}}


def area(services: int, packages: int) -> dict[str, Any]:
    return {
        "domains": [{"domain": "example.com"}],
        "services": [{"name": f"svc-{s:05d}", "description": f"service {s}",
                      "endpoints": [endpoint(s, e) for e in range(ENDPOINTS_PER_SERVICE)]}
                     for s in range(services)],
        "packages": [{"name": f"pkg-{p:04d}", "plans": [
            {"name": f"plan-{k}", "rateLimitCeiling": 1000 * (k + 1), "qpsLimitCeiling": 10,
             "services": [{"name": f"svc-{(p * PLANS_PER_PACKAGE + k) % services:05d}",
                           "endpoints": [{"name": "ep-0"}, {"name": "ep-1"}]}]}
            for k in range(PLANS_PER_PACKAGE)]} for p in range(packages)],
    }


def one_percent_change(doc: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """1% of the objects changed: every endpoint of 1% of the services, 1% of the service
    descriptions and 1% of the plans. Returns the new document and the objects changed."""
    doc = copy.deepcopy(doc)
    services = doc["services"]
    step = 100
    changed = 0
    for svc in services[::step]:
        for ep in svc["endpoints"]:
            ep["cors"]["maxAge"] = 120
            changed += 1
    for svc in services[step // 2::step]:
        svc["description"] += " (changed)"
        changed += 1
    plans = [p for pkg in doc["packages"] for p in pkg["plans"]]
    for plan in plans[::step]:
        plan["qpsLimitCeiling"] = 20
        changed += 1
    return doc, changed


def objects_in(doc: dict[str, Any]) -> int:
    return (len(doc["domains"]) + len(doc["services"]) * (1 + ENDPOINTS_PER_SERVICE)
            + sum(1 + len(p["plans"]) for p in doc["packages"]))
