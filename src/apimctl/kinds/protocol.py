"""The per-kind operations protocol and the plain values the operations exchange.

:class:`KindOps` is what every kind does at the stages (``Kind.ops``; what some kinds do is
in :mod:`apimctl.kinds.capabilities`); :class:`Lookups`,
:class:`Read`, :class:`Context`, :class:`Exported`, :class:`Resolver` and :class:`Holdings`
(with :class:`Held` and :class:`KindFacts`) are what the operations take and give. This
module imports nothing of the registry: :mod:`apimctl.kinds.base` types ``Kind.ops`` with it,
:mod:`apimctl.kinds.ops` implements it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from apimctl.kinds.dialects import Dialect
from apimctl.kinds.findings import Declarations, Finding
from apimctl.kinds.nested_writes import NestedWrite

Key = tuple[str, ...]
# the names of the objects a manifest document declares, by kind name and by the name of
# their parent (``""`` for top-level kinds), in the order written
Names = Mapping[str, Mapping[str, Sequence[str]]]


@dataclass
class Lookups:
    """Id → key of the objects (and nested items) the API renders by id, per kind name or item
    label (``role``: ``("Admin",)``; ``endpoint``: ``("Weather", "Forecast")``; ``method``:
    ``("Weather", "Forecast", "get")``). Built from the raw lists before any object is read."""

    keys: dict[str, dict[str, Key]] = field(default_factory=dict)

    def add(self, label: str, obj_id: Any, key: Key) -> None:
        self.keys.setdefault(label, {})[str(obj_id)] = key

    def key(self, label: str, obj_id: Any) -> Key | None:
        return self.keys.get(label, {}).get(str(obj_id))

    def name(self, label: str, obj_id: Any) -> str | None:
        """The object's own name (the last part of its key)."""
        found = self.key(label, obj_id)
        return found[-1] if found else None


@dataclass(frozen=True)
class Read:
    """One object read from the API: its manifest-shaped ``doc`` and its fingerprint."""

    doc: dict[str, Any]
    updated: str | None = None
    revision: int | None = None


@dataclass(frozen=True)
class Context:
    """Facts from outside the object that its normal form depends on.

    ``default_error_set`` is the name of the service's first error set: an endpoint whose
    ``errorSet`` is ``null`` uses it (SUPPLEMENT §2).
    """

    default_error_set: str | None = None


@dataclass(frozen=True)
class Exported:
    """What :meth:`KindOps.export` turns into a manifest entry.

    ``doc``: the object's identity (and ``id``, when asked for) followed by the fields whose
    normal form differs from the normal form of the defaults, in manifest shape, literal
    ``${`` escaped; ``live``: the object as read (manifest shape, not normalised, not escaped);
    ``children``: the entries of its child kinds, by manifest key, the lists to write only;
    ``secret``: the reference to write in place of a secret, given the last part of its
    variable's name (``BACKEND_SECRET``: the names of the object and its parents come first).
    """

    doc: dict[str, Any]
    live: Mapping[str, Any]
    children: Mapping[str, list[Any]] = field(default_factory=dict)
    secret: Callable[[str], str] = field(default=lambda part: "${" + part + "}")


class Resolver(Protocol):
    """Names to ids for write bodies: live ids plus the ids created earlier in the apply;
    ``dialect``: the target's, for how a body types them."""

    dialect: Dialect

    def id(self, label: str, key: str) -> str:
        """The id of the object ``label:key``; raises when there is none."""
        ...

    def find(self, label: str, key: str) -> str | None:
        """The id of the object ``label:key``, or ``None``."""
        ...


class CallerFacts(Protocol):
    """What one kind's words read of another kind's callers (its
    :class:`~apimctl.kinds.base.Callers`)."""

    @property
    def role_permits(self) -> str: ...


class KindFacts(Protocol):
    """What one kind's words read of another kind (a :class:`~apimctl.kinds.base.Kind`)."""

    @property
    def name(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def callers(self) -> CallerFacts: ...


class Held(Protocol):
    """A live object as :class:`Holdings` gives it: its kind's name, its key, its own name,
    its parent's key (``None`` at the top level) and its manifest-shaped document."""

    @property
    def kind(self) -> str: ...

    @property
    def key(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def parent_key(self) -> str | None: ...

    @property
    def doc(self) -> Mapping[str, Any]: ...


class Holdings(Protocol):
    """What the live area holds, as :meth:`KindOps.goes_with` reads it (planning's caller
    impact passes its index of the area, ``apimctl.planning.impact.world.World``)."""

    def kind(self, name: str) -> KindFacts:
        """The kind called ``name``."""
        ...

    def held(self, kind: str, key: str) -> Held | None:
        """The live object ``kind:key`` (``None`` when the area does not hold it)."""
        ...

    def doc(self, kind: str, key: str) -> Mapping[str, Any]:
        """The live document of ``kind:key`` (empty when the area does not hold it)."""
        ...

    def children(self, kind: str, parent_key: str) -> Sequence[str]:
        """Names of the live objects of ``kind`` under the parent ``parent_key``."""
        ...

    def naming(self, kind: str, key: str) -> Sequence[tuple[KindFacts, Sequence[Held]]]:
        """The live objects whose references name ``kind:key``, by their kind (in the order of
        the registry; kinds none of whose objects names it left out)."""
        ...

    def entitling(self, service: str, endpoint: str | None = None) -> Sequence[Held]:
        """The live objects whose keys may call the service (the endpoint of it), by address."""
        ...

    def of_package(self, key: str) -> Sequence[Held]:
        """The live objects keys are issued for under the package ``key``, by address."""
        ...


@runtime_checkable
class KindOps(Protocol):
    """The operations every kind has (``Kind.ops``); pure, no I/O.

    - ``writes``: the nested parts an update writes apart from the object's own PUT, by
      field, in the order they are written, each with its strategy
      (:mod:`apimctl.kinds.nested_writes`: singletons with a sub-resource of their own, links
      by id, keyed items, a fixed catalog, entitlements).
    - :meth:`read`: a raw API object (``parent``: its parent's raw object) in manifest shape.
    - :meth:`body`: the API body of a manifest-shaped ``desired`` object (or of some of its
      fields, for an update): references resolved through ``refs``.
    - :meth:`export`: the manifest entry of a live object (:class:`Exported`: the fields that
      differ from the defaults, its exported children, a namer of secret variables).
    - :meth:`check`: the kind's own offline checks of the declared objects (the manifests).
    - :meth:`goes_with`: what goes with a deleted object, in words, from the
      :class:`Holdings` of the area (caller impact).

    What only some kinds do (routes, a comparing context, a catalog of items, set members,
    shorthands, changes told in words, grants, rules of keys) is a capability of
    :mod:`apimctl.kinds.capabilities`, which a kind's operations declare.
    """

    writes: Mapping[str, NestedWrite]

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read: ...

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]: ...

    def export(self, entry: Exported) -> Any: ...

    def check(self, declared: Declarations) -> Iterable[Finding]: ...

    def goes_with(self, key: str, area: Holdings) -> list[str]: ...
