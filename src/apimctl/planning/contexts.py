"""The contexts a matched pair is compared in: what each side's normal form depends on from
outside the object (an endpoint's error set named ``null`` is its service's first one).

Each kind compared in a context says which facts it needs (``Contextual.context``, given the names of the objects
under the same parent, per kind); this index gives it those names for both sides of a pair:

- the live side: the live objects under the live object's parent, in API order;
- the desired side: the objects the manifests declare under the desired parent; for a kind
  the parent declares none of, the live ones under the parent's live object (the collection
  is left alone), or, for a new parent, those the platform creates with it
  (``Kind.write.made_with_parent``).

Kinds whose normal form depends on nothing outside it (not
:class:`~apimctl.kinds.capabilities.Contextual`) are compared in the empty context. Called by
:mod:`apimctl.planning.comparing`, for the builder (:mod:`apimctl.planning.steps`) and the worker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.kinds.capabilities import Contextual
from apimctl.planning.desired import Desired
from apimctl.state.live import LiveObject, LiveState
from apimctl.state.normalise import Context

Pair = tuple[Desired, LiveObject | None]
Sides = tuple[Context, Context]  # (desired side, live side)
_NO_CONTEXTS: Sides = (Context(), Context())

# the kinds whose objects are compared in a context, and the kinds under the same parents
_CONTEXTUAL = frozenset(k.name for k in kinds.having(Contextual))
_SIBLINGS = frozenset(c.name for k in kinds.KINDS if k.name in _CONTEXTUAL and k.parent
                      for c in kinds.children_of(kinds.get(k.parent)))


class Contexts:
    """The contexts of the pairs of one plan, made once per desired and live parent."""

    def __init__(self, pairs: Sequence[Pair], live: LiveState,
                 live_of: Mapping[str, LiveObject | None]) -> None:
        self.live_of = live_of
        # (kind name, parent id) -> names of the live objects, in API order
        self.live_names: dict[tuple[str, str], list[str]] = {}
        for name in _SIBLINGS:
            for obj in live.of(name):
                if obj.parent_id is not None:
                    self.live_names.setdefault((name, obj.parent_id), []).append(obj.name)
        # (kind name, parent address) -> names of the declared objects, in manifest order
        self.declared: dict[tuple[str, str], list[str]] = {}
        for desired, _ in pairs:
            if desired.kind.name in _SIBLINGS and desired.parent is not None:
                self.declared.setdefault((desired.kind.name, desired.parent.address),
                                         []).append(desired.name)
        self.made: dict[tuple[str, str, str | None], Sides] = {}

    def of(self, obj: Desired, live: LiveObject | None) -> Sides:
        """The contexts of the pair (``obj``, ``live``): (desired side, live side)."""
        if obj.kind.name not in _CONTEXTUAL or obj.parent is None:
            return _NO_CONTEXTS
        key = (obj.kind.name, obj.parent.address, live.parent_id if live is not None else None)
        found = self.made.get(key)
        if found is None:
            found = self.made[key] = self._sides(obj.kind, obj.parent, live)
        return found

    def _sides(self, kind: Kind, parent: Desired, live: LiveObject | None) -> Sides:
        parent_live = self.live_of.get(parent.address)
        desired: dict[str, Sequence[str]] = {}
        held: dict[str, Sequence[str]] = {}
        for child in kinds.children_of(parent.kind):
            declared = self.declared.get((child.name, parent.address))
            if declared:
                desired[child.name] = declared
            elif parent_live is not None:
                desired[child.name] = self.live_names.get((child.name, parent_live.id), ())
            else:
                desired[child.name] = child.write.made_with_parent
            if live is not None and live.parent_id is not None:
                held[child.name] = self.live_names.get((child.name, live.parent_id), ())
        ops = kinds.capability(kind, Contextual)
        if ops is None:
            return _NO_CONTEXTS
        return ops.context(desired), ops.context(held)
