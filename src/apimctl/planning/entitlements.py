"""What the plan says about entitlements on a target that entitles whole services.

Where the target honours the endpoint list of a new plan entitlement (both known dialects,
SUPPLEMENT §10.6), apimctl entitles exactly the endpoints the manifests grant. A target
that can only entitle a whole service (``Dialect.whole_service_entitlements``) entitles
every endpoint of the service at once; apply then removes the endpoints the manifests do
not grant in the same run, and the plan says so, naming each plan and service concerned.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from apimctl.kinds.dialects import Dialect
from apimctl.kinds.plan import PLAN, SERVICES
from apimctl.plans.model import Step


def whole_service_warnings(steps: Iterable[Step], live_docs: Mapping[str, Mapping[str, Any]],
                           dialect: Dialect) -> list[str]:
    """One warning per plan step that entitles a service the plan is not entitled to yet."""
    if not dialect.whole_service_entitlements:
        return []
    warnings = []
    for step in steps:
        if step.kind != PLAN.name or step.action not in ("create", "update") or not step.desired:
            continue
        have = {str(s.get("name")) for s in (live_docs.get(step.address) or {}).get(SERVICES) or []}
        new = [str(s.get("name")) for s in step.desired.get(SERVICES) or [] if str(s.get("name")) not in have]
        if new:
            names = ", ".join(new)
            warnings.append(
                f"{step.address}: this {dialect.name} target entitles a whole service at once: "
                f"entitling {names} briefly entitles every endpoint of it; apimctl removes the "
                "endpoints the manifests do not grant in the same apply")
    return warnings
