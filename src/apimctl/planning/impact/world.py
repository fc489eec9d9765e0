"""What the caller impact needs to know of the live area besides its keys.

:mod:`apimctl.planning.impact.rules` asks this index which live plans entitle a service or
an endpoint, which plans a package holds, what a plan's limits and flags are, and what goes
with a deleted service or endpoint. Plans are decoded once (an area holds few of them); the
services' endpoints and error sets are only counted, by their parent key, when a delete asks.
Keys come through a :class:`KeySource`: the keys read, or a recorder that notes which plans a
plan's changes need before anything is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.kinds.capabilities import Granting
from apimctl.kinds.protocol import Held
from apimctl.kinds.references import refs_of
from apimctl.plans.model import Step, address
from apimctl.state.keys import KeyFacts, KeyRead
from apimctl.state.live import LiveObject, LiveState


class PlanFacts:
    """A live plan: its address, id, name and package key; its manifest-shaped document and
    entitlements decoded on first use (a plan of endpoint changes reads none of them)."""

    def __init__(self, obj: LiveObject) -> None:
        self.obj = obj
        self.address = address(obj.kind, obj.key)
        self.id = obj.id
        self.name = obj.name
        self.package = obj.parent_key or kinds.split_first(obj.key)[0] or ""

    @property
    def kind(self) -> str:
        return self.obj.kind

    @property
    def key(self) -> str:
        return self.obj.key

    @property
    def parent_key(self) -> str | None:
        return self.package

    @cached_property
    def doc(self) -> dict[str, Any]:
        return self.obj.doc

    @cached_property
    def _entitled(self) -> Mapping[str, frozenset[str]]:
        granting = kinds.capability(kinds.get(self.obj.kind), Granting)
        return granting.entitled(self.doc) if granting is not None else {}

    def entitled(self) -> Mapping[str, frozenset[str]]:
        """Service name -> names of the endpoints the plan entitles in it."""
        return self._entitled

    def entitles(self, service: str, endpoint: str | None = None) -> bool:
        eps = self._entitled.get(service)
        return eps is not None and (endpoint is None or endpoint in eps)


class KeySource(Protocol):
    """Keys by plan: ``owners`` asks for keys whose application and member are known."""

    @property
    def owners_known(self) -> bool: ...

    def of(self, plan: PlanFacts, *, owners: bool = False) -> list[KeyFacts]: ...


@dataclass
class Recorder:
    """A :class:`KeySource` that has no keys and records what was asked of it."""

    plan_ids: set[str] = field(default_factory=set)
    owners: bool = False

    @property
    def owners_known(self) -> bool:
        return False

    def of(self, plan: PlanFacts, *, owners: bool = False) -> list[KeyFacts]:
        self.plan_ids.add(plan.id)
        self.owners = self.owners or owners
        return []


@dataclass
class Known:
    """A :class:`KeySource` over the keys read."""

    read: KeyRead

    @property
    def owners_known(self) -> bool:
        return self.read.applications

    def of(self, plan: PlanFacts, *, owners: bool = False) -> list[KeyFacts]:
        return self.read.of(plan.id)


def _by_address(plan: PlanFacts) -> str:
    return plan.address


class World:
    """The live facts the impact rules read, indexed once; what the kinds read of the area
    to tell what goes with a delete (:class:`~apimctl.kinds.protocol.Holdings`)."""

    def __init__(self, live: LiveState) -> None:
        self.live = live
        self.plans: dict[str, PlanFacts] = {}
        for obj in live.of(kinds.ROLES.keys_for.name):
            facts = PlanFacts(obj)
            self.plans[facts.address] = facts
        self._docs: dict[str, dict[str, Any]] = {}

    def plan(self, step: Step) -> PlanFacts | None:
        return self.plans.get(step.address)

    def kind(self, name: str) -> Kind:
        return kinds.get(name)

    def held(self, kind: str, key: str) -> Held | None:
        """The live object ``kind:key``: the one indexed for a kind keys are issued for, else
        the first the area lists."""
        if kind == kinds.ROLES.keys_for.name:
            return self.plans.get(address(kind, key))
        return next((o for o in self.live.of(kind) if o.key == key), None)

    def _of(self, kind: Kind) -> Sequence[Held]:
        if kind is kinds.ROLES.keys_for:
            return [p for p in self.plans.values() if p.kind == kind.name]
        return self.live.of(kind.name)

    def naming(self, kind: str, key: str) -> list[tuple[Kind, Sequence[Held]]]:
        """The live objects whose references name ``kind:key``, by their kind (only those
        under the same parent, where every such reference is within the parent)."""
        parent = kinds.split_first(key)[0]
        out: list[tuple[Kind, Sequence[Held]]] = []
        for referring in kinds.KINDS:
            scopes = {r.scope for r in referring.references if r.kind == kind}
            if not scopes:
                continue
            held = [o for o in self._of(referring)
                    if (scopes != {"parent"} or o.parent_key == parent)
                    and any(r.kind == kind and r.key == key
                            for r in refs_of(referring, o.doc, o.parent_key))]
            if held:
                out.append((referring, held))
        return out

    def all_plan_ids(self) -> set[str]:
        return {p.id for p in self.plans.values()}

    def of_package(self, key: str) -> list[PlanFacts]:
        return sorted((p for p in self.plans.values() if p.package == key), key=_by_address)

    def entitling(self, service: str, endpoint: str | None = None) -> list[PlanFacts]:
        return sorted((p for p in self.plans.values() if p.entitles(service, endpoint)),
                      key=_by_address)

    def doc(self, kind: str, key: str) -> dict[str, Any]:
        """The live document of one object (empty when the area does not hold it)."""
        addr = address(kind, key)
        if addr not in self._docs:
            found = next((o for o in self.live.of(kind) if o.key == key), None)
            self._docs[addr] = found.doc if found is not None else {}
        return self._docs[addr]

    def children(self, kind: str, parent_key: str) -> list[str]:
        """Names of the live objects of ``kind`` under the parent ``parent_key``."""
        return [o.name for o in self.live.of(kind) if o.parent_key == parent_key]
