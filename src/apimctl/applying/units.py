"""Units: the steps apply writes with one call.

A created parent carries its created children (a new service with its new endpoints and error
sets is one ``POST /services``); the endpoint updates of one service are one
``PUT /services/{id}/endpoints``. Called by :mod:`apimctl.applying.run`.
"""

from __future__ import annotations

from apimctl import kinds
from apimctl.applying.schedule import Unit, is_acyclic
from apimctl.plans.model import Plan, Step

# Child kinds written by their parent's call: created inside a new parent's POST, and gone
# with a deleted parent (the API deletes the whole tree).
NESTED_KINDS = {k.name: k.children for k in kinds.KINDS if k.children}
# Kinds whose updates under one parent are one call (``Kind.write.batch_updates``).
BATCHED_KINDS = frozenset(k.name for k in kinds.KINDS if k.write.batch_updates)


def group_units(plan: Plan, *, batch: bool = True) -> list[Unit]:
    """Group steps into units: a created parent carries its created children; the endpoint
    updates of one service go together. One step per unit if grouping would make a cycle."""
    singles = [Unit((s,)) for s in plan.steps]
    if not batch:
        return singles
    by_addr = {s.address: s for s in plan.steps}
    absorbed: dict[str, list[Step]] = {}
    batches: dict[str, list[Step]] = {}
    for s in plan.steps:
        parent = by_addr.get(s.parent or "")
        if (s.action in ("create", "delete") and parent is not None and parent.action == s.action
                and s.kind in NESTED_KINDS.get(parent.kind, ())):
            absorbed.setdefault(parent.address, []).append(s)  # covered by the parent's call
        elif s.action == "update" and s.kind in BATCHED_KINDS and s.parent and not s.temporary:
            batches.setdefault(s.parent, []).append(s)
    taken = {c.address for children in absorbed.values() for c in children}
    units: list[Unit] = []
    batched: set[str] = set()
    for s in plan.steps:
        if s.address in taken:
            continue
        group = (batches.get(s.parent or "", []) if s.action == "update" and s.kind in BATCHED_KINDS
                 and not s.temporary else [])
        if len(group) > 1:
            if s.parent not in batched:
                batched.add(s.parent or "")
                units.append(Unit(tuple(group)))
            continue
        units.append(Unit((s, *absorbed.get(s.address, []))))
    return units if is_acyclic(units) else singles
