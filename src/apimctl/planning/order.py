"""Dependencies between steps and the order they run in (``graphlib.TopologicalSorter``).

Called by :mod:`apimctl.planning.build`.
"""

from __future__ import annotations

import graphlib
import heapq
from collections.abc import Iterable, Mapping
from typing import Any

from apimctl import kinds
from apimctl.errors import PlanError
from apimctl.kinds import references as refs
from apimctl.planning.desired import Desired
from apimctl.plans.model import Step

# kinds other objects refer to by host name (domains)
_HOST_KINDS = frozenset(r.kind for k in kinds.KINDS for r in k.references if r.scope == "host")


def _adds_items(step: Step) -> bool:
    """An update adding items that other objects reference by id (``Kind.write.referenced_items``:
    an endpoint's methods): those referring to them (plans entitled to the methods) wait."""
    lists = kinds.get(step.kind).write.referenced_items
    return bool(lists) and step.action == "update" and any(
        c.path.startswith(tuple(f"{p}[" for p in lists)) and c.before is None for c in step.changes)


def _domain_steps(hosts: Iterable[str], domains: Mapping[str, str]) -> set[str]:
    """Domain steps whose domain covers one of ``hosts`` (equal, or a parent domain of it)."""
    return {domains[d] for host in hosts for d in refs.parent_domains(host) if d in domains}


def dependencies(steps: Mapping[str, Step], desired_at: Mapping[str, Desired],
                 live_docs: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[str, ...]]:
    """``depends_on`` of every step: parents and referenced objects that are created (or
    renamed) before the steps that need them; children and former referrers before deletes
    (and new objects of a kind a parent keeps one of before the old ones go:
    ``Kind.write.keeps_one``, a service's error sets)."""
    # what must exist under the referenced name first: creates, and renames
    prerequisites = {a for a, s in steps.items() if s.action == "create"
                     or (s.action == "update" and any(c.path == "name" for c in s.changes))
                     or _adds_items(s)}
    domains = {s.key.lower(): a for a, s in steps.items() if s.kind in _HOST_KINDS and a in prerequisites}
    deps: dict[str, set[str]] = {a: set() for a in steps}
    for addr, step in steps.items():
        if step.action == "delete":
            continue
        obj = desired_at[addr]
        parent_key = obj.parent.key if obj.parent else None
        wanted = refs.addresses(step.kind, obj.doc, parent_key) | _domain_steps(refs.hosts(step.kind, obj.doc), domains)
        if step.parent:
            wanted.add(step.parent)
        deps[addr] |= {w for w in wanted if w in prerequisites and w != addr}
    for addr, live_doc in live_docs.items():  # referrers of what is deleted go first
        step = steps[addr]
        parent_key = step.parent.partition(":")[2] if step.parent else None
        for ref in refs.addresses(step.kind, live_doc, parent_key):
            if ref in steps and steps[ref].action == "delete" and ref != addr:
                deps[ref].add(addr)
    for addr, step in steps.items():
        parent = step.parent or ""
        if step.action == "delete" and parent in steps and steps[parent].action == "delete":
            deps[parent].add(addr)
        if step.action == "delete" and kinds.get(step.kind).write.keeps_one:
            deps[addr] |= {a for a, s in steps.items() if s.kind == step.kind
                           and s.action == "create" and s.parent == step.parent}
    return {a: tuple(sorted(d)) for a, d in deps.items()}


def _rank(step: Step) -> tuple[int, int, str]:
    order = kinds.ORDER[step.kind]
    if step.action == "delete":
        return (1, -order, step.key)
    return (0, order, step.key)


def order(steps: Mapping[str, Step]) -> list[Step]:
    """Steps in an order that respects ``depends_on``; among ready steps, creates and updates
    parent kinds first, then deletes child kinds first, by key."""
    sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter(
        {a: s.depends_on for a, s in steps.items()})
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        cycle = " -> ".join(str(a) for a in exc.args[1])
        raise PlanError(f"the plan's steps depend on each other in a cycle: {cycle}") from None
    ready = [(_rank(steps[a]), a) for a in sorter.get_ready()]
    heapq.heapify(ready)
    out: list[Step] = []
    while ready:
        _, addr = heapq.heappop(ready)
        out.append(steps[addr])
        sorter.done(addr)
        for nxt in sorter.get_ready():
            heapq.heappush(ready, (_rank(steps[nxt]), nxt))
    return out
