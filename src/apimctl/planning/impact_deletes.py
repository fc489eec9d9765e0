"""What goes with a deleted object, told under its delete in the plan (pure, from the live area).

:func:`goes_with` names what the platform removes or changes along with the object: a
service's endpoints and error sets, the plans' entitlements that name it and its role
permissions; an endpoint's entitlements; a package's plans; a plan's entitlements and role
permissions; a role's permissions on services and plans; the endpoints that return an error
set's messages (they fall back to the service's first set). It needs no key, so it is told
whatever ``--impact`` says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from apimctl import kinds
from apimctl.kinds.references import refs_of
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


def _named_by(kind: str, doc: Mapping[str, Any], target: str, parent_key: str | None = None, *,
              keys: bool = True) -> list[str]:
    """The keys (or, not ``keys``, the names) of the objects of kind ``target`` that ``doc``
    (an object of ``kind``) names."""
    return [r.key if keys else r.name for r in refs_of(kind, doc, parent_key) if r.kind == target]


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
        roles = _named_by(kind, world.doc(kind, step.key), kinds.ROLE.name, keys=False)
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
        roles = _named_by(kind, plan.doc, kinds.ROLE.name, keys=False) if plan is not None else []
        if services:
            parts.append(f"its entitlements to {_listed(services)}")
        if roles:
            parts.append(f"the key permissions of {_named(kinds.ROLE.name, roles)}")
    elif kind == kinds.ROLE.name:
        parts = _role(step.key, world)
    elif kind == kinds.ERROR_SET.name:
        service = kinds.split_first(step.key)[0]
        users = [o.name for o in world.live.of(kinds.ENDPOINT.name) if o.parent_key == service
                 and step.key in _named_by(o.kind, o.doc, kind, o.parent_key)]
        if users:
            parts.append(f"the error messages of {_named(kinds.ENDPOINT.name, users)} (they fall back to "
                         "the service's first error set)")
    return Impact(f"goes with it: {', '.join(parts)}") if parts else None


def _role(role: str, world: World) -> list[str]:
    services = [o.key for o in world.live.of(kinds.SERVICE.name)
                if role in _named_by(o.kind, o.doc, kinds.ROLE.name)]
    plans = [p.name for p in world.plans.values()
             if role in _named_by(p.obj.kind, p.doc, kinds.ROLE.name)]
    parts = [f"its read permissions on {_named(kinds.SERVICE.name, services)}"] if services else []
    return parts + ([f"its key permissions on {_named(kinds.PLAN.name, plans)}"] if plans else [])
