"""Warnings about domains that are not ``active``: the platform refuses an endpoint whose
public or system host is not under an active domain of the area, so a plan that needs a
domain still ``waiting`` for approval says so before apply fails on it."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.kinds.references import host_part
from apimctl.planning.desired import Desired
from apimctl.plans.model import Plan, Step, address
from apimctl.state.live import LiveState

ACTIVE = "active"
# the kinds other objects name by host (domains), and the kinds whose objects hold hosts
# that those must cover (endpoints: ``Kind.callers.host_fields``)
DOMAIN_KINDS: tuple[Kind, ...] = tuple(
    kinds.get(n) for n in dict.fromkeys(r.kind for k in kinds.KINDS for r in k.references
                                         if r.scope == "host"))
HOSTING: tuple[Kind, ...] = tuple(k for k in kinds.KINDS if k.callers.host_fields)
_HOSTING_LABEL = " or ".join(k.label for k in HOSTING)


def domain_warnings(desired: Mapping[str, Sequence[Desired]], live: LiveState) -> list[str]:
    """One warning per live domain that is not active and that declared objects need (a
    host under it and under no active domain: ``Kind.callers.host_fields``), naming those objects."""
    status: dict[str, str] = {}
    for kind in DOMAIN_KINDS:
        for obj in live.of(kind.name):
            name = str(obj.raw.get(kind.identity) or obj.name).strip().lower()
            status[name] = str(obj.raw.get("status") or ACTIVE).strip().lower()
    active = [d for d, s in status.items() if s == ACTIVE]
    if len(active) == len(status):
        return []
    return [w for kind in HOSTING for w in _waiting(kind, desired.get(kind.name, ()), status, active)]


def _waiting(kind: Kind, objs: Iterable[Desired], status: Mapping[str, str],
             active: Sequence[str]) -> list[str]:
    needs: dict[str, list[str]] = {d: [] for d, s in status.items() if s != ACTIVE}
    for obj in objs:
        for host in _hosts(kind, obj.doc):
            if any(_under(host, a) for a in active):
                continue
            for domain in needs:
                if _under(host, domain) and obj.key not in needs[domain]:
                    needs[domain].append(obj.key)
    return [f"domain {domain} is {status[domain]}" + (" for approval" if status[domain] == "waiting" else "")
            + f"; {kind.label}{'' if len(keys) == 1 else 's'} {', '.join(keys)} "
            + ("needs" if len(keys) == 1 else "need") + " it (apply fails on them until it is active)"
            for domain, keys in needs.items() if keys]


def _hosts(kind: Kind, doc: Mapping[str, Any]) -> Iterable[str]:
    for field in kind.callers.host_fields:
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
    return {domain: [s.key for s in steps] for domain, (_, steps) in _needing(plan).items()}


def awaited_domains(plan: Plan, done: Collection[str], failed: Collection[str]) -> list[str]:
    """The domains ``plan`` created (``done``: the addresses of the steps done) that objects
    whose steps failed (``failed``: their addresses) need: the area refuses those objects
    until the domains are approved, so a rerun alone changes nothing."""
    created = {a.lower() for a in done}
    return [domain for domain, (created_at, steps) in _needing(plan).items()
            if created_at.lower() in created and any(s.address in failed for s in steps)]


def _needing(plan: Plan) -> dict[str, tuple[str, list[Step]]]:
    """Each domain ``plan`` creates that objects it creates or updates need: the address it
    is created at and the steps of those objects."""
    domain_kinds = {k.name for k in DOMAIN_KINDS}
    created = {s.key.strip().lower(): address(s.kind, s.key.strip().lower()) for s in plan.steps
               if s.kind in domain_kinds and s.action == "create"}
    needs: dict[str, dict[str, Step]] = {}  # domain -> key -> the first step of that object
    if not created:
        return {}
    hosting = {k.name: k for k in HOSTING}
    for step in plan.steps:
        kind = hosting.get(step.kind)
        if kind is None or step.action == "delete":
            continue
        hosts = _hosts(kind, {c.path: c.after for c in step.changes if c.path in kind.callers.host_fields})
        for host in hosts:
            for domain in created:
                if _under(host, domain):
                    needs.setdefault(domain, {}).setdefault(step.key, step)
    return {d: (created[d], list(steps.values())) for d, steps in needs.items()}


def new_domain_warnings(plan: Plan) -> list[str]:
    """One warning per new domain that new or changed objects need (endpoints; for a target that does
    not approve domains at once: every real area)."""
    return [f"domain {domain} is new: the area holds it as waiting until an operator approves "
            f"it, and refuses {_HOSTING_LABEL}{'' if len(keys) == 1 else 's'} "
            f"{', '.join(keys)} until then (apply creates the domain, then fails on "
            f"{'it' if len(keys) == 1 else 'them'}); have it approved, then apply again"
            for domain, keys in new_domains_needed(plan).items()]
