"""What each kind does at the stages: read from the API, write bodies, compare, export.

The :class:`KindOps` protocol, its shared implementation :class:`Ops` and the plain values the
operations exchange (:class:`Lookups`, :class:`Read`, :class:`Context`, :class:`Exported`,
:class:`Resolver`). Each kind's module subclasses :class:`Ops`; the stages loop over ``KINDS``
and call ``kind.ops``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from apimctl.kinds.base import (
    Kind,
    spelt_unset,
)

# --- per-kind operations ----------------------------------------------------------------------
#
# What each kind does at the stages (read from the API, write bodies, compare, export), in the
# kind's own module, on plain mappings: this layer imports no stage. The stages loop over
# ``KINDS`` and call ``kind.ops``; none of them names a kind.

Key = tuple[str, ...]

# Fields of nested items (methods, response filters, messages) that the server computes.
NESTED_COMPUTED_FIELDS: frozenset[str] = frozenset({"id", "created", "updated", "code"})


def as_list(value: Any) -> list[Any]:
    """An array field as a list: ``None`` → ``[]``, a lone scalar or object → ``[value]``."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    return [value]


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


def escape_literal(value: Any) -> Any:
    """Strings with a literal ``${`` escaped as ``$${`` so substitution gives them back."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, list):
        return [escape_literal(v) for v in value]
    if isinstance(value, dict):
        return {k: escape_literal(v) for k, v in value.items()}
    return value


class Resolver(Protocol):
    """Names to ids for write bodies: live ids plus the ids created earlier in the apply."""

    def id(self, label: str, key: str) -> str:
        """The id of the object ``label:key``; raises when there is none."""
        ...

    def find(self, label: str, key: str) -> str | None:
        """The id of the object ``label:key``, or ``None``."""
        ...


@runtime_checkable
class KindOps(Protocol):
    """The operations of one kind (``Kind.ops``); pure, no I/O.

    - ``collections``: nested collections apply reconciles item by item when they changed
      (left out of the object's own PUT); ``singletons``: nested singletons written through a
      sub-resource of their own.
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
      (not when they are what the platform creates by itself).

    Comparing (``apimctl.state.normalise``) asks the kind too: :meth:`defaults_for` (the
    defaults an object is compared with), :meth:`item_defaults` and :meth:`implied_items`
    (items of a keyed list the platform always has, with their defaults), ``context_fields``
    and :meth:`contextual` (fields whose empty value stands for a value of the
    :class:`Context`), :meth:`set_member` (how a member of a set is compared).
    """

    collections: tuple[str, ...]
    singletons: tuple[str, ...]

    def nested(self, raw: Mapping[str, Any]) -> Iterable[tuple[str, Any, str]]: ...

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read: ...

    def context(self, siblings: Mapping[str, Sequence[str]]) -> Context: ...

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]: ...

    def export(self, entry: Exported) -> Any: ...

    def written(self, entries: Sequence[Any]) -> bool: ...

    context_fields: frozenset[str]

    def defaults_for(self, doc: Mapping[str, Any]) -> Mapping[str, Any]: ...

    def item_defaults(self, path: str, key: str,
                      defaults: Mapping[str, Any]) -> Mapping[str, Any]: ...

    def implied_items(self, path: str) -> Sequence[str]: ...

    def contextual(self, path: str, value: Any, ctx: Context) -> Any: ...

    def set_member(self, item: Mapping[str, Any]) -> Any: ...

    route_fields: tuple[str, ...]

    def routes(self, doc: Mapping[str, Any], by_method: bool) -> set[str]: ...

    def route_words(self, route: str) -> str | None: ...

    def temporary_route(self, doc: Mapping[str, Any], tag: str) -> tuple[str, Any, Any]: ...

    def tells(self, path: str) -> bool: ...

    def change_words(self, name: str, path: str, before: Any, after: Any) -> str | None: ...

    def entitled(self, doc: Mapping[str, Any]) -> Mapping[str, frozenset[str]]: ...

    def entitlement(self, path: str) -> tuple[str, str | None, str | None] | None: ...


def fingerprint(raw: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """``updated`` and ``revisionNumber`` of a raw object."""
    updated = raw.get("updated")
    revision = raw.get("revisionNumber")
    return (str(updated) if updated is not None else None,
            int(revision) if isinstance(revision, int | str) and str(revision).isdigit() else None)


def unset_as_default(kind: Kind, doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` (changed in place) with every value spelling "not set" at a path of
    ``Kind.unset`` replaced by the field's default: what both dialects accept in a write."""
    for path, spellings in kind.unset.items():
        _fold_at(doc, path.split("."), spellings, kind.default_at(path))
    return doc


def _fold_at(node: Any, parts: list[str], spellings: tuple[Any, ...], default: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _fold_at(item, parts, spellings, default)
        return
    if not isinstance(node, dict) or parts[0] not in node:
        return
    if len(parts) > 1:
        _fold_at(node[parts[0]], parts[1:], spellings, default)
    elif spelt_unset(node[parts[0]], spellings):
        node[parts[0]] = copy.deepcopy(default)


def names_of(items: Any, lookups: Lookups | None = None, label: str = "") -> list[str]:
    """Role permissions, domains and plan methods (objects or strings) as a list of names."""
    out: list[str] = []
    for item in as_list(items):
        if isinstance(item, Mapping):
            found = lookups.name(label, item.get("id", "")) if lookups is not None else None
            name = found or item.get("name") or item.get("address")
            if name is not None:
                out.append(str(name))
        elif item is not None:
            out.append(str(item))
    return out


class Ops:
    """The operations most kinds share: copy the fields, no nested references.

    A kind's own class overrides what differs; ``kind`` returns the kind's entry (looked up
    when called: the entry is made with its operations).
    """

    collections: tuple[str, ...] = ()
    singletons: tuple[str, ...] = ()
    context_fields: frozenset[str] = frozenset()
    # fields never sent back (dropped from every body besides the meta fields)
    meta: frozenset[str] = frozenset({"id", "previousNames"})

    def __init__(self, kind: Callable[[], Kind]) -> None:
        self._kind = kind

    @property
    def kind(self) -> Kind:
        return self._kind()

    def child_keys(self) -> tuple[str, ...]:
        """The manifest keys of the kind's child kinds (their objects are read on their own)."""
        return ()

    def nested(self, raw: Mapping[str, Any]) -> Iterable[tuple[str, Any, str]]:
        return ()

    def strip(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The raw object without server-computed fields and child collections."""
        kind = self.kind
        cached: tuple[Kind, frozenset[str]] | None = self.__dict__.get("_strip_drop")
        if cached is None or cached[0] is not kind:  # computed once per kind, not per object
            cached = self.__dict__["_strip_drop"] = (kind, kind.computed | set(self.child_keys()))
        drop = cached[1]
        return {k: v for k, v in raw.items() if k not in drop}

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        return Read(self.strip(raw), fingerprint(raw)[0])

    def context(self, siblings: Mapping[str, Sequence[str]]) -> Context:
        return Context()

    def own_fields(self, desired: Mapping[str, Any]) -> dict[str, Any]:
        """The object's own fields (not meta fields, child kinds or nested collections), an
        unset value written as the field's default (``Kind.unset``)."""
        skip = self.meta | set(self.child_keys()) | set(self.collections)
        return unset_as_default(self.kind, {k: copy.deepcopy(v) for k, v in desired.items()
                                            if k not in skip})

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]:
        return self.resolved(self.own_fields(desired), refs, parent)

    def resolved(self, body: Mapping[str, Any], refs: Resolver,
                 parent: str | None) -> dict[str, Any]:
        """``body`` with the kind's references as a write body carries them (names to ids
        through ``refs``: :func:`apimctl.kinds.references.resolve`)."""
        # imported here: the references module reads the registry, which imports this module
        from apimctl.kinds.references import resolve

        def id_of(ref: Any) -> str | None:
            if ref.reference.required:
                return refs.id(ref.kind, ref.key)
            return refs.find(ref.kind, ref.key)

        return resolve(self.kind, body, parent, id_of)

    # -- export

    def export(self, entry: Exported) -> Any:
        """The entry: its fields, then its child kinds' lists."""
        return {**entry.doc, **entry.children}

    def written(self, entries: Sequence[Any]) -> bool:
        return bool(entries)

    # -- routes: what the platform keeps unique across an area (none for most kinds)

    route_fields: tuple[str, ...] = ()  # fields whose change moves the object's routes

    def routes(self, doc: Mapping[str, Any], by_method: bool) -> set[str]:
        """The routes the object ``doc`` (manifest shape) claims; ``by_method``: the target
        keeps them unique by HTTP method too."""
        return set()

    def route_words(self, route: str) -> str | None:
        """One of :meth:`routes` in words (``GET api.example.com/forecast``); ``None`` when it
        claims nothing two objects could clash on."""
        return None

    def temporary_route(self, doc: Mapping[str, Any], tag: str) -> tuple[str, Any, Any]:
        """The field, its value in ``doc`` and its value moving the object to a route nobody
        else wants (``tag`` makes it unique): how a swap of routes is broken."""
        raise NotImplementedError(f"{self.kind.name} objects claim no routes")

    # -- plan lines

    def tells(self, path: str) -> bool:
        """Whether a change at ``path`` is told in the kind's own words (:meth:`change_words`),
        which name what changed."""
        return False

    def change_words(self, name: str, path: str, before: Any, after: Any) -> str | None:
        """A change of the object ``name`` at ``path`` in words (``None``: shown as values)."""
        return None

    # -- access the object grants (plans: their entitlements)

    def entitled(self, doc: Mapping[str, Any]) -> Mapping[str, frozenset[str]]:
        """Service name -> names of the endpoints the object ``doc`` (manifest shape) entitles
        its keys to call in it."""
        return {}

    def entitlement(self, path: str) -> tuple[str, str | None, str | None] | None:
        """``(service, endpoint, field)`` of a change at ``path`` of the object's entitlements
        (``services[Weather].endpoints[Forecast].methods``: the endpoint and the field are
        ``None`` when the path stops above them); ``None`` for any other path."""
        return None

    # -- comparing

    def defaults_for(self, doc: Mapping[str, Any]) -> Mapping[str, Any]:
        return self.kind.defaults

    def item_defaults(self, path: str, key: str,
                      defaults: Mapping[str, Any]) -> Mapping[str, Any]:
        return defaults

    def implied_items(self, path: str) -> Sequence[str]:
        return ()

    def contextual(self, path: str, value: Any, ctx: Context) -> Any:
        return value

    def set_member(self, item: Mapping[str, Any]) -> Any:
        """The comparable form of an object in a set: its name (or address); the item itself
        when it has neither (then compared by its content)."""
        if "name" in item:
            return item["name"]
        if "address" in item:
            return item["address"]
        return item


class MissingOps(Ops):
    """The operations of a kind whose module declares none: every call fails loudly."""

    def __init__(self) -> None:
        super().__init__(self._no_kind)

    @staticmethod
    def _no_kind() -> Kind:
        raise NotImplementedError("this kind declares no operations (Kind.ops)")
