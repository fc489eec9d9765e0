"""Warnings about domains that are not ``active``: the platform refuses an endpoint whose
public or system host is not under an active domain of the area, so a plan that needs a
domain still ``waiting`` for approval says so before apply fails on it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from apimctl import kinds
from apimctl.kinds.references import host_part
from apimctl.planning.desired import Desired
from apimctl.plans.model import Plan
from apimctl.state.live import LiveState

HOST_FIELDS = ("publicDomains", "systemDomains", "trafficManagerDomain")
ACTIVE = "active"


def domain_warnings(desired: Mapping[str, Sequence[Desired]], live: LiveState) -> list[str]:
    """One warning per live domain that is not active and that declared endpoints need (a
    host under it and under no active domain), naming those endpoints."""
    status: dict[str, str] = {}
    for obj in live.of(kinds.DOMAIN.name):
        name = str(obj.raw.get(kinds.DOMAIN.identity) or obj.name).strip().lower()
        status[name] = str(obj.raw.get("status") or ACTIVE).strip().lower()
    active = [d for d, s in status.items() if s == ACTIVE]
    needs: dict[str, list[str]] = {d: [] for d, s in status.items() if s != ACTIVE}
    if not needs:
        return []
    for endpoint in desired.get(kinds.ENDPOINT.name, ()):
        for host in _hosts(endpoint.doc):
            if any(_under(host, a) for a in active):
                continue
            for domain in needs:
                if _under(host, domain) and endpoint.key not in needs[domain]:
                    needs[domain].append(endpoint.key)
    return [f"domain {domain} is {status[domain]}" + (" for approval" if status[domain] == "waiting" else "")
            + f"; {kinds.ENDPOINT.label}{'' if len(keys) == 1 else 's'} {', '.join(keys)} "
            + ("needs" if len(keys) == 1 else "need") + " it (apply fails on them until it is active)"
            for domain, keys in needs.items() if keys]


def _hosts(doc: Mapping[str, Any]) -> Iterable[str]:
    for field in HOST_FIELDS:
        value = doc.get(field)
        for item in value if isinstance(value, list) else [value]:
            host = item.get("address") if isinstance(item, Mapping) else item
            if isinstance(host, str) and host.strip():
                yield host_part(host.strip().lower())


def _under(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


def new_domains_needed(plan: Plan) -> dict[str, list[str]]:
    """The domains ``plan`` creates that endpoints it creates or updates need (a host under
    one), each with those endpoints' keys. An area holds a new domain as ``waiting`` until an
    operator approves it, and refuses those endpoints meanwhile."""
    created = [s.key.strip().lower() for s in plan.steps
               if s.kind == kinds.DOMAIN.name and s.action == "create"]
    needs: dict[str, list[str]] = {}
    if not created:
        return needs
    for step in plan.steps:
        if step.kind != kinds.ENDPOINT.name or step.action == "delete":
            continue
        hosts = _hosts({c.path: c.after for c in step.changes if c.path in HOST_FIELDS})
        for host in hosts:
            for domain in created:
                if _under(host, domain) and step.key not in needs.setdefault(domain, []):
                    needs[domain].append(step.key)
    return {d: keys for d, keys in needs.items() if keys}


def new_domain_warnings(plan: Plan) -> list[str]:
    """One warning per new domain that new or changed endpoints need (for a target that does
    not approve domains at once: every real area)."""
    return [f"domain {domain} is new: the area holds it as waiting until an operator approves "
            f"it, and refuses {kinds.ENDPOINT.label}{'' if len(keys) == 1 else 's'} "
            f"{', '.join(keys)} until then (apply creates the domain, then fails on "
            f"{'it' if len(keys) == 1 else 'them'}); have it approved, then apply again"
            for domain, keys in new_domains_needed(plan).items()]
