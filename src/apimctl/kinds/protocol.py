"""The per-kind operations protocol and the plain values the operations exchange.

:class:`KindOps` is what every kind does at the stages (``Kind.ops``); :class:`Lookups`,
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
    """The operations of one kind (``Kind.ops``); pure, no I/O.

    - ``writes``: the nested parts an update writes apart from the object's own PUT, by
      field, in the order they are written, each with its strategy
      (:mod:`apimctl.kinds.nested_writes`: singletons with a sub-resource of their own, links
      by id, keyed items, a fixed catalog, entitlements).
    - :meth:`nested`: ``(label, id, name)`` of nested items other objects reference by id
      (an endpoint's methods), for :class:`Lookups`.
    - :meth:`read`: a raw API object (``parent``: its parent's raw object) in manifest shape.
    - :meth:`context`: what comparing an object needs from outside it, given the names of the
      objects under the same parent per kind name, in API order.
    - :meth:`body`: the API body of a manifest-shaped ``desired`` object (or of some of its
      fields, for an update): references resolved through ``refs``.
    - :meth:`export`: the manifest entry of a live object (:class:`Exported`: the fields that
      differ from the defaults, its exported children, a namer of secret variables);
      :meth:`written`: whether the exported entries of the kind under one parent are written
      (not when they are what the platform creates by itself); :meth:`export_dialect`: the
      exported fields set against the defaults of the target's dialect.

    Comparing (``apimctl.state.normalise``) asks the kind too: :meth:`defaults_for` (the
    defaults an object is compared with), :meth:`item_defaults` and :meth:`implied_items`
    (items of a keyed list the platform always has, with their defaults), ``context_fields``
    and :meth:`contextual` (fields whose empty value stands for a value of the
    :class:`Context`), :meth:`set_member` (how a member of a set is compared).

    The manifests ask it as well: :meth:`expand` (the kind's shorthands of one entry, in the
    canonical form of a valid document), :meth:`check` (the kind's own offline checks of the
    declared objects), :meth:`routes` (the routes an object claims in the area, for the checks
    and lint rules of unique routes, with ``route_fields`` that move them, :meth:`route_words`
    and :meth:`temporary_route` for planning's swaps). Plan lines ask :meth:`tells` and
    :meth:`change_words` (changes told in the kind's own words); caller impact asks
    :meth:`entitled`, :meth:`entitlement` and :meth:`grants` of a kind granting access, and :meth:`goes_with`
    (what goes with a deleted object, in words, from the :class:`Holdings` of the area).
    """

    writes: Mapping[str, NestedWrite]

    def nested(self, raw: Mapping[str, Any]) -> Iterable[tuple[str, Any, str]]: ...

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read: ...

    def context(self, siblings: Mapping[str, Sequence[str]]) -> Context: ...

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]: ...

    def export(self, entry: Exported) -> Any: ...

    def written(self, entries: Sequence[Any]) -> bool: ...

    def export_dialect(self, fields: dict[str, Any], normal: Mapping[str, Any],
                       dialect: Dialect) -> None: ...

    context_fields: frozenset[str]

    def defaults_for(self, doc: Mapping[str, Any]) -> Mapping[str, Any]: ...

    def item_defaults(self, path: str, key: str,
                      defaults: Mapping[str, Any]) -> Mapping[str, Any]: ...

    def implied_items(self, path: str) -> Sequence[str]: ...

    def contextual(self, path: str, value: Any, ctx: Context) -> Any: ...

    def set_member(self, item: Mapping[str, Any]) -> Any: ...

    def expand(self, entry: dict[str, Any], names: Names) -> None: ...

    def check(self, declared: Declarations) -> Iterable[Finding]: ...

    route_fields: tuple[str, ...]

    def routes(self, doc: Mapping[str, Any], by_method: bool) -> set[str]: ...

    def route_words(self, route: str) -> str | None: ...

    def temporary_route(self, doc: Mapping[str, Any], tag: str) -> tuple[str, Any, Any]: ...

    def tells(self, path: str) -> bool: ...

    def change_words(self, name: str, path: str, before: Any, after: Any) -> str | None: ...

    def entitled(self, doc: Mapping[str, Any]) -> Mapping[str, frozenset[str]]: ...

    def entitlement(self, path: str) -> tuple[str, str | None, str | None] | None: ...

    def grants(self, value: Any, endpoint: str | None, field: str | None) -> set[tuple[str, str]]: ...

    def goes_with(self, key: str, area: Holdings) -> list[str]: ...
