"""What goes with a deleted object, told under its delete in the plan (pure, from the live area).

:func:`goes_with` names what the platform removes or changes along with the object: a
service's endpoints and error sets, the plans' entitlements that name it and its role
permissions; an endpoint's entitlements; a package's plans; a plan's entitlements and role
permissions; a role's permissions on services and plans; the endpoints that return an error
set's messages (they fall back to the service's first set). It needs no key, so it is told
whatever ``--impact`` says.
"""

from __future__ import annotations

from collections.abc import Sequence

from apimctl import kinds
from apimctl.kinds.endpoint import ERROR_SET_FIELD
from apimctl.kinds.plan import ROLES
from apimctl.planning.impact_world import World
from apimctl.plans.model import Impact, Step

SHOWN = 10


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def _named(noun: str, names: Sequence[str]) -> str:
    """``plan Free``, ``plans Free, Pro``."""
    return f"{noun if len(names) == 1 else noun + 's'} {_listed(names)}"


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _plans(world: World, service: str, endpoint: str | None = None) -> list[str]:
    return [p.name for p in world.entitling(service, endpoint)]


def goes_with(step: Step, world: World) -> Impact | None:
    """The line under a delete, or ``None`` when nothing goes with it."""
    if step.action != "delete":
        return None
    parts: list[str] = []
    kind = step.kind
    if kind == kinds.SERVICE.name:
        parts = [_count(len(world.children(kinds.ENDPOINT.name, step.key)), kinds.ENDPOINT.name),
                 _count(len(world.children(kinds.ERROR_SET.name, step.key)), "error set")]
        plans = _plans(world, step.key)
        if plans:
            parts.append(f"its entitlements in {_named(kinds.PLAN.name, plans)}")
        roles = [str(r) for r in world.doc(kind, step.key).get(ROLES) or []]
        if roles:
            parts.append(f"the read permissions of {_named(kinds.ROLE.name, roles)}")
    elif kind == kinds.ENDPOINT.name:
        service, name = kinds.split_first(step.key)
        plans = _plans(world, service or "", name)
        if plans:
            parts.append(f"its entitlements in {_named(kinds.PLAN.name, plans)}")
    elif kind == kinds.PACKAGE.name:
        plans = [p.name for p in world.of_package(step.key)]
        if plans:
            parts.append(f"its {_named(kinds.PLAN.name, plans)}")
    elif kind == kinds.PLAN.name:
        plan = world.plan(step)
        services = sorted(plan.entitled()) if plan is not None else []
        roles = [str(r) for r in (plan.doc.get(ROLES) or [] if plan is not None else [])]
        if services:
            parts.append(f"its entitlements to {_listed(services)}")
        if roles:
            parts.append(f"the key permissions of {_named(kinds.ROLE.name, roles)}")
    elif kind == kinds.ROLE.name:
        parts = _role(step.key, world)
    elif kind == kinds.ERROR_SET.name:
        service, name = kinds.split_first(step.key)
        users = [o.name for o in world.live.of(kinds.ENDPOINT.name)
                 if o.parent_key == service and o.doc.get(ERROR_SET_FIELD) == name]
        if users:
            parts.append(f"the error messages of {_named(kinds.ENDPOINT.name, users)} (they fall back to "
                         "the service's first error set)")
    return Impact(f"goes with it: {', '.join(parts)}") if parts else None


def _role(role: str, world: World) -> list[str]:
    services = [o.key for o in world.live.of(kinds.SERVICE.name) if role in (o.doc.get(ROLES) or [])]
    plans = [p.name for p in world.plans.values() if role in (p.doc.get(ROLES) or [])]
    parts = [f"its read permissions on {_named(kinds.SERVICE.name, services)}"] if services else []
    return parts + ([f"its key permissions on {_named(kinds.PLAN.name, plans)}"] if plans else [])
