"""What some kinds do and most do not: optional protocols beside :class:`KindOps`.

:class:`~apimctl.kinds.protocol.KindOps` is what every kind does at the stages (read, write
bodies, export, offline checks, what goes with a delete). A rule only some kinds have is a
capability here, declared where the kind is defined (``class EndpointOps(Ops, Routed,
Contextual)``); a stage asks for it with :func:`apimctl.kinds.capability` (one kind) or
:func:`apimctl.kinds.having` (the kinds having it), both answered once per kind, and does
without it for the other kinds. A kind declaring a capability implements every member of it
(``tests/unit/kinds/test_capabilities.py``).

Like :mod:`apimctl.kinds.protocol`, this module imports nothing of the registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from apimctl.kinds.dialects import Dialect
from apimctl.kinds.protocol import Context, Names

__all__ = [
    "CAPABILITIES", "CatalogItems", "Contextual", "Granting", "KeyRule", "KeyRules", "Limit",
    "NestedIds", "ObjectDefaults", "Routed", "SetMembers", "Shorthands", "ToldInWords",
]


@runtime_checkable
class Routed(Protocol):
    """Objects claiming routes the platform keeps unique across an area (endpoints): the
    manifest checks and lint rules of unique routes, planning's order of route changes and
    its swaps, caller impact of a moved route.

    - ``route_fields``: the fields whose change moves the object's routes;
    - :meth:`routes`: the routes the object ``doc`` (manifest shape) claims; ``by_method``:
      the target keeps them unique by HTTP method too;
    - :meth:`route_words`: one of them in words (``GET api.example.com/forecast``), ``None``
      when it claims nothing two objects could clash on;
    - :meth:`temporary_route`: the field, its value in ``doc`` and its value moving the object
      to a route nobody else wants (``tag`` makes it unique): how a swap of routes is broken;
    - :meth:`cut_off`: what callers of the old route get when field ``path`` (one of
      ``route_fields``) changes from ``before`` to ``after``, in words (none when the route
      only grows), for caller impact.
    """

    route_fields: tuple[str, ...]

    def routes(self, doc: Mapping[str, Any], by_method: bool) -> set[str]: ...

    def route_words(self, route: str) -> str | None: ...

    def temporary_route(self, doc: Mapping[str, Any], tag: str) -> tuple[str, Any, Any]: ...

    def cut_off(self, path: str, before: Any, after: Any) -> list[str]: ...


@runtime_checkable
class Contextual(Protocol):
    """Objects compared in a :class:`~apimctl.kinds.protocol.Context` (an endpoint, whose
    ``errorSet`` of ``null`` is the service's first error set).

    - :meth:`context`: what comparing an object needs from outside it, given the names of the
      objects under the same parent per kind name, in API order;
    - ``context_fields``: the fields whose value depends on it, and :meth:`contextual` the
      comparable form of such a value (``path``) in the context ``ctx``.
    """

    context_fields: frozenset[str]

    def context(self, siblings: Mapping[str, Sequence[str]]) -> Context: ...

    def contextual(self, path: str, value: Any, ctx: Context) -> Any: ...


@runtime_checkable
class ObjectDefaults(Protocol):
    """Objects compared with defaults that depend on the object (an OAuth endpoint has no
    API-key locations); the others are compared with ``Kind.defaults``."""

    def defaults_for(self, doc: Mapping[str, Any]) -> Mapping[str, Any]: ...


@runtime_checkable
class NestedIds(Protocol):
    """Objects with nested items other objects reference by id (an endpoint's methods):
    ``(label, id, name)`` of each, for :class:`~apimctl.kinds.protocol.Lookups` and apply's
    index of ids."""

    def nested(self, raw: Mapping[str, Any]) -> Iterable[tuple[str, Any, str]]: ...


@runtime_checkable
class CatalogItems(Protocol):
    """Objects holding a catalog the platform fills (an error set's messages).

    - :meth:`implied_items`: the items of the keyed list at ``path`` the platform always has,
      and :meth:`item_defaults` the defaults of one (``key``), given the list's ``defaults``;
    - :meth:`written`: whether the exported entries of the kind under one parent are written
      (not when they are what the platform creates by itself; the other kinds write any);
    - :meth:`export_dialect`: export's ``fields`` of an object (changed in place) set against
      what the target's ``dialect`` creates it with (``normal``: its normal form).
    """

    def implied_items(self, path: str) -> Sequence[str]: ...

    def item_defaults(self, path: str, key: str,
                      defaults: Mapping[str, Any]) -> Mapping[str, Any]: ...

    def written(self, entries: Sequence[Any]) -> bool: ...

    def export_dialect(self, fields: dict[str, Any], normal: Mapping[str, Any],
                       dialect: Dialect) -> None: ...


@runtime_checkable
class SetMembers(Protocol):
    """Objects whose sets hold members compared by a form of their own (a maintenance
    event's ``{service, endpoint}`` pairs, by the endpoint's key); the other kinds compare an
    object in a set by its name or address (:func:`apimctl.kinds.ops.member_name`)."""

    def set_member(self, item: Mapping[str, Any]) -> Any: ...


@runtime_checkable
class Shorthands(Protocol):
    """Objects with shorthands of their own in manifests (a plan's entitled endpoints as
    names): :meth:`expand` writes one entry (in place) in the canonical form of a valid
    document, given the ``names`` the documents declare."""

    def expand(self, entry: dict[str, Any], names: Names) -> None: ...


@runtime_checkable
class ToldInWords(Protocol):
    """Objects some of whose changes plan lines tell in the kind's own words (a plan's
    entitlements: ``Pro loses Ordering/Track order``).

    - :meth:`tells`: whether a change at ``path`` is told so;
    - :meth:`change_words`: a change of the object ``name`` at ``path`` in words (``None``:
      shown as values).
    """

    def tells(self, path: str) -> bool: ...

    def change_words(self, name: str, path: str, before: Any, after: Any) -> str | None: ...


@runtime_checkable
class Granting(Protocol):
    """Objects granting their keys access to services and endpoints (a plan's entitlements),
    as caller impact reads them.

    - :meth:`entitled`: service name -> names of the endpoints the object ``doc`` (manifest
      shape) entitles its keys to call in it;
    - :meth:`entitlement`: ``(service, endpoint, field)`` of a change at ``path`` of the
      object's entitlements (the endpoint and the field are ``None`` when the path stops above
      them); ``None`` for any other path;
    - :meth:`grants`: the ``(endpoint, method or "*")`` pairs ``value``, at an entitlement
      path (its ``endpoint`` and ``field``), grants.
    """

    def entitled(self, doc: Mapping[str, Any]) -> Mapping[str, frozenset[str]]: ...

    def entitlement(self, path: str) -> tuple[str, str | None, str | None] | None: ...

    def grants(self, value: Any, endpoint: str | None, field: str | None) -> set[tuple[str, str]]: ...


@dataclass(frozen=True)
class Limit:
    """One limit of the calls of keys, by the fields of the object they are issued for.

    ``name``: the limit as a key's own facts name it (``rateLimit``, ``qpsLimit``:
    :class:`apimctl.state.keys.KeyFacts`); ``noun``: the limit in words; ``ceiling``,
    ``exempt``, ``override``: its fields (the ceiling, the flag exempting the keys, the flag
    letting a key keep a higher ceiling of its own); ``period``: the field naming the period
    the calls are counted over (``None``: ``per`` always), ``per`` the period when it names
    none, ``periods`` the periods, shortest first.
    """

    name: str
    noun: str
    ceiling: str
    exempt: str
    override: str
    period: str | None = None
    per: str = "second"
    periods: tuple[str, ...] = ()


# what a change of a field does to the keys: the ceiling of a limit moves, the keys are made
# exempt or not, keys may keep a higher ceiling of their own or not, the period of a limit
# changes, the number of keys a member may hold changes, the keys stop working (``value``)
KeyEffect = Literal["ceiling", "exempt", "override", "period", "allowance", "stops"]


@dataclass(frozen=True)
class KeyRule:
    """What a change of one field of an object keys are issued for does to those keys
    (:class:`KeyRules`): its ``effect``, the ``limit`` it bears on, and for ``stops`` the
    ``value`` that stops them."""

    effect: KeyEffect
    limit: Limit | None = None
    value: Any = None


@runtime_checkable
class KeyRules(Protocol):
    """Objects keys are issued for whose fields govern the keys' calls (a plan's ceilings,
    exempt and override flags, allowance, status): caller impact's engine
    (``apimctl.planning.impact.rules``) asks :meth:`key_rule` of each changed path and
    applies the rule, naming no field of its own."""

    def key_rule(self, path: str) -> KeyRule | None: ...


# every capability, for the registry's checks
CAPABILITIES: tuple[type, ...] = (
    Routed, Contextual, ObjectDefaults, NestedIds, CatalogItems, SetMembers, Shorthands, ToldInWords,
    Granting, KeyRules,
)
