"""Endpoint routes as resources: a step freeing a route runs before a step taking it.

The platform keeps ``requestPathAlias`` + each public domain unique across all endpoints of
an area (spec/SUPPLEMENT.md §4; real areas, with the HTTP method too, §10.10.1): an endpoint moved to another service cannot be created while
the old one still holds its route, and two endpoints swapping routes can never both go first.
Called by :mod:`apimctl.planning.build` after :func:`apimctl.planning.order.dependencies`:

- a *taker* is an endpoint create, or an update giving the endpoint a route it does not have;
- a *freer* is an endpoint delete (a service delete frees its endpoints' routes), or an update
  taking a route away from it;
- every taker depends on every freer of the same route, except two updates of one service,
  which apply writes in one call (the server checks the service's routes as a whole).

When that makes a cycle (a swap), one of its endpoints first moves to a temporary route
(``<alias>.apimctl-swap-<id hash>``) in an extra update step, ``endpoint:S/E (temporary
route)``, which frees its routes; its own step then runs after the other side's. All in one
plan, shown in its order.
"""

from __future__ import annotations

import graphlib
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from apimctl import kinds
from apimctl.errors import PlanError
from apimctl.kinds import Kind
from apimctl.kinds.capabilities import Routed
from apimctl.planning.desired import Desired
from apimctl.plans.model import TEMPORARY_ROUTE, Change, Step
from apimctl.state.live import LiveState

SWAP = ".apimctl-swap-"

# the kinds whose objects claim routes (endpoints), and their operations by kind name
ROUTED: tuple[Kind, ...] = kinds.having(Routed)
_ROUTES: Mapping[str, Routed] = {k.name: ops for k in ROUTED
                                 if (ops := kinds.capability(k, Routed)) is not None}


def check_routes(desired: Mapping[str, Sequence[Desired]], by_method: bool) -> None:
    """Refuse (``PlanError``) two declared objects claiming one route of the target: what
    validate cannot know offline, since only some dialects let endpoints share a path on a
    domain when their methods differ."""
    for kind in ROUTED:
        _check_routes(kind, _ROUTES[kind.name], desired.get(kind.name, ()), by_method)


def _check_routes(kind: Kind, ops: Routed, objs: Iterable[Desired], by_method: bool) -> None:
    first: dict[str, str] = {}
    clashes: list[str] = []
    for obj in objs:
        for route in sorted(ops.routes(obj.doc, by_method)):
            other = first.setdefault(route, obj.key)
            if other == obj.key:
                continue
            words = ops.route_words(route)  # in words only when shared: one in thousands
            if words is not None:  # else no route to claim
                clashes.append(f"{other} and {obj.key} ({words})")
    if clashes:
        shown = "; ".join(clashes[:5]) + (f"; and {len(clashes) - 5} more" if len(clashes) > 5 else "")
        rule = "method, public domain and path" if by_method else "public domain and path"
        raise PlanError(f"the target keeps {kind.label} routes unique by {rule}, and two declared "
                        f"{kind.label}s claim the same route: {shown}")


def _moves_route(ops: Routed, step: Step) -> bool:
    return any(c.path.partition("[")[0] in ops.route_fields for c in step.changes)


class _Claims:
    """Which steps take and free which routes."""

    def __init__(self) -> None:
        self.takes: dict[str, set[str]] = {}
        self.frees: dict[str, set[str]] = {}

    def edges(self, steps: Mapping[str, Step]) -> dict[str, set[str]]:
        freers: dict[str, list[str]] = {}
        for addr, freed in self.frees.items():
            for route in freed:
                freers.setdefault(route, []).append(addr)
        out: dict[str, set[str]] = {}
        for taker, taken in self.takes.items():
            for route in taken:
                for freer in freers.get(route, ()):
                    if freer != taker and not _one_call(steps[taker], steps[freer]):
                        out.setdefault(taker, set()).add(freer)
        return out


def _one_call(a: Step, b: Step) -> bool:
    """Updates of objects of one parent are one call, when the kind batches its updates
    (``PUT /services/{id}/endpoints``; unless one is temporary)."""
    return (a.action == b.action == "update" and a.parent == b.parent and a.kind == b.kind
            and kinds.get(a.kind).write.batch_updates and not a.temporary and not b.temporary)


def _held(kind: Kind, parent_id: str | None, live: LiveState, by_method: bool) -> set[str]:
    """The routes the live children of the object ``parent_id`` of ``kind`` hold (a service's
    endpoints': deleting it frees them)."""
    held: set[str] = set()
    for child in kinds.children_of(kind):
        ops = _ROUTES.get(child.name)
        if ops is not None:
            for obj in live.of(child.name):
                if obj.parent_id == parent_id:
                    held |= ops.routes(obj.doc, by_method)
    return held


def _claims(steps: Mapping[str, Step], desired_at: Mapping[str, Desired],
            live_docs: Mapping[str, Mapping[str, Any]], live: LiveState, by_method: bool) -> _Claims:
    claims = _Claims()
    parents = {k.parent for k in ROUTED}
    for addr, step in steps.items():
        if step.kind in parents and step.action == "delete":
            claims.frees[addr] = _held(kinds.get(step.kind), step.id, live, by_method)
        ops = _ROUTES.get(step.kind)
        if ops is None:
            continue
        if step.action == "create":
            claims.takes[addr] = ops.routes(desired_at[addr].doc, by_method)
        elif step.action == "delete" and addr in live_docs:
            claims.frees[addr] = ops.routes(live_docs[addr], by_method)
        elif step.action == "update" and addr in live_docs and _moves_route(ops, step):
            want = ops.routes(desired_at[addr].doc, by_method)
            have = ops.routes(live_docs[addr], by_method)
            claims.takes[addr], claims.frees[addr] = want - have, have - want
    return claims


def _temporary(step: Step, live_doc: Mapping[str, Any]) -> Step:
    """The extra update moving ``step``'s object to a route nobody else wants."""
    kind = kinds.get(step.kind)
    tag = f"{SWAP}{hashlib.sha1(str(step.id).encode()).hexdigest()[:8]}"
    path, before, after = _ROUTES[step.kind].temporary_route(live_doc, tag)
    name = step.key.rpartition("/")[2] if step.parent else step.key
    return Step("update", step.kind, f"{step.key}{TEMPORARY_ROUTE}", step.id, step.parent,
                step.parent_id, (Change(path, before, after),),
                desired={kind.identity: str(live_doc.get(kind.identity) or name), path: after})


def _cycle(graph: Mapping[str, set[str]]) -> list[str]:
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return [str(a) for a in exc.args[1]]
    return []


def route_dependencies(steps: Mapping[str, Step], desired_at: Mapping[str, Desired],
                       live_docs: Mapping[str, Mapping[str, Any]],
                       deps: dict[str, tuple[str, ...]], live: LiveState,
                       by_method: bool = False) -> dict[str, Step]:
    """Add to ``deps`` what route conflicts require; answer the temporary steps that break
    swaps (to add to the plan, their ``deps`` entries added too). ``by_method``: the target
    keeps routes unique by method too (``Routed.routes``)."""
    claims = _claims(steps, desired_at, live_docs, live, by_method)
    if not claims.takes:
        return {}
    all_steps = dict(steps)
    base = {a: set(d) for a, d in deps.items()}
    extra: dict[str, Step] = {}
    while True:
        edges = claims.edges(all_steps)
        graph = {a: base.get(a, set()) | edges.get(a, set()) for a in all_steps}
        cycle = _cycle(graph)
        movable = sorted({a for a in cycle if claims.frees.get(a) and not all_steps[a].temporary
                          and a in live_docs and all_steps[a].kind in _ROUTES})
        if not cycle or not movable:
            break
        addr = movable[0]
        temp = _temporary(all_steps[addr], live_docs[addr])
        all_steps[temp.address] = extra[temp.address] = temp
        claims.frees[temp.address], claims.frees[addr] = claims.frees[addr], set()
        if all_steps[addr].action == "update":
            claims.takes[addr] = _ROUTES[all_steps[addr].kind].routes(desired_at[addr].doc,
                                                                      by_method)
        base[temp.address] = set()
        base.setdefault(addr, set()).add(temp.address)
    for addr, needed in graph.items():
        deps[addr] = tuple(sorted(needed))
    return extra
