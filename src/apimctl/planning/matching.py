"""Identity matching: pair each desired object with its live object.

By natural key within the same parent, by ``id:`` pin, or under a ``previousNames`` entry.
Several live objects with one name are duplicates (:mod:`apimctl.planning.duplicates`): the
pinned one, else the oldest, is matched, and the group is recorded in ``Match.duplicates``.
Called by :mod:`apimctl.planning.build`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from apimctl import kinds
from apimctl.errors import PlanError
from apimctl.planning.desired import Desired
from apimctl.planning.duplicates import PINNED, keeper
from apimctl.state.live import LiveObject, LiveState

# --- matching --------------------------------------------------------------------------------


@dataclass
class Match:
    """The outcome of identity matching for every kind."""

    pairs: list[tuple[Desired, LiveObject | None]] = field(default_factory=list)
    live_of: dict[str, LiveObject | None] = field(default_factory=dict)  # desired address ->
    unmatched: list[LiveObject] = field(default_factory=list)
    # (desired object, the live copies sharing its identity, the one kept, why)
    duplicates: list[tuple[Desired, tuple[LiveObject, ...], LiveObject, str]] = field(
        default_factory=list)


def _pick(candidates: list[LiveObject], obj: Desired, found: Match) -> LiveObject | None:
    """The live object of ``obj`` among those with its name: with several, the oldest (or
    the first listed), and the group is recorded as duplicates."""
    if len(candidates) > 1:
        index, reason = keeper([c.raw for c in candidates])
        found.duplicates.append((obj, tuple(candidates), candidates[index], reason))
        return candidates[index]
    return candidates[0] if candidates else None


@dataclass
class _Scope:
    """The live objects of one kind under one parent, by id and by (folded) name."""

    by_id: dict[str, LiveObject] = field(default_factory=dict)
    by_name: dict[str, list[LiveObject]] = field(default_factory=lambda: defaultdict(list))

    def add(self, kind: kinds.Kind, obj: LiveObject) -> None:
        self.by_id[obj.id] = obj
        self.by_name[kind.identity_of(obj.name)].append(obj)


_EMPTY_SCOPE = _Scope()


def _match_one(obj: Desired, scope: _Scope, result: Match) -> LiveObject | None:
    fold = obj.kind.identity_of
    if obj.pin is not None:
        found = scope.by_id.get(obj.pin)
        if found is None:
            raise PlanError(f"{obj.where()}: id {obj.pin!r} pins {obj.kind.name} {obj.key!r} "
                            "to no live object")
        copies = scope.by_name.get(fold(found.name), [])
        if len(copies) > 1:
            result.duplicates.append((obj, tuple(copies), found, PINNED))
        return found
    found = _pick(scope.by_name.get(fold(obj.name), []), obj, result)
    for old in obj.previous:
        if found is not None:
            break
        found = _pick(scope.by_name.get(fold(old), []), obj, result)
    return found


def match(desired: Mapping[str, list[Desired]], live: LiveState) -> Match:
    """Pair each desired object with its live object (or ``None`` when it must be created)."""
    result = Match()
    for kind in kinds.KINDS:
        scopes: dict[str | None, _Scope] = defaultdict(_Scope)
        for obj in live.of(kind.name):
            scopes[obj.parent_id].add(kind, obj)
        claimed: dict[str, Desired] = {}
        seen_keys: dict[str, Desired] = {}
        for want in desired.get(kind.name, []):
            identity = kind.identity_of(want.key)
            if identity in seen_keys:
                raise PlanError(f"{want.where()}: {kind.name} {want.key!r} is declared twice")
            seen_keys[identity] = want
            parent_live = result.live_of.get(want.parent.address) if want.parent else None
            if want.parent is not None and parent_live is None:
                found = None
            else:
                scope_id = parent_live.id if parent_live is not None else None
                found = _match_one(want, scopes.get(scope_id, _EMPTY_SCOPE), result)
            if found is not None:
                if found.id in claimed:
                    raise PlanError(f"{want.where()}: {kind.name} {want.key!r} and "
                                    f"{claimed[found.id].key!r} both match live id {found.id}")
                claimed[found.id] = want
            result.pairs.append((want, found))
            result.live_of[want.address] = found
        result.unmatched.extend(o for o in live.of(kind.name) if o.id not in claimed)
    return result


def written(obj: Desired, want: Mapping[str, Any]) -> dict[str, Any]:
    """The normalised fields the manifest wrote (keyed collections: the members it listed)."""
    out: dict[str, Any] = {}
    for name, value in want.items():
        if name not in obj.doc:
            continue
        if name in obj.kind.keyed and isinstance(value, Mapping):
            key_field = obj.kind.keyed[name]
            listed = {str(i.get(key_field)) if isinstance(i, Mapping) else str(i)
                      for i in obj.doc[name] or []}
            value = {k: v for k, v in value.items() if k in listed}
        out[name] = value
    return out
