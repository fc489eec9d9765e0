"""How apply writes the nested parts of an object, as plain data: one strategy per part.

A kind's operations declare the parts an update writes apart from the object's own ``PUT``
(``Ops.writes``: field -> strategy, in the order they are written); one generic writer
(:mod:`apimctl.applying.collections`) carries out any strategy, so a new kind with a nested
collection needs no new code there. The strategies:

- :class:`Singleton`: a nested object with a sub-resource of its own (an endpoint's
  ``systemDomainAuthentication``, a service's ``securityProfile``);
- :class:`Links`: a set of links to other objects by their ids (role permissions, a
  maintenance event's endpoints), item by item or as one collection where the dialect says so;
- :class:`KeyedItems`: items created, updated and deleted by a key field, with keyed items of
  their own (an endpoint's methods and their response filters);
- :class:`Catalog`: a fixed catalog of items the platform always holds, written in place by id
  (an error set's messages);
- :class:`Entitlements`: links with links under them (a plan's services, the endpoints of
  each, the methods of those).

The ids of links are those the kind's own write body carries for the field (its
``Reference`` entries, resolved by ``Ops.body``). This module imports no stage.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from apimctl.kinds.dialects import Dialect


def _never(dialect: Dialect) -> bool:
    return False


def _nothing(item_id: str, dialect: Dialect) -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Singleton:
    """A nested object written through a sub-resource of its own: ``PUT {item}/{field}`` with
    the object and its defaults. A nullable object at or under the field (``Kind.compare.nullable``:
    ``securityProfile.oauth``) is written at its own path: updated, created when absent,
    deleted when the manifest sets it to ``null``."""


@dataclass(frozen=True)
class Links:
    """Links to other objects by their ids: exactly those the manifest lists (when it lists
    the field at all), created with ``POST {item}/{field}`` and removed with ``DELETE
    {item}/{field}/{id}``.

    - ``action``: sent with each link (a role permission's ``read`` or ``register_keys``,
      SUPPLEMENT §10.7); ``action_required``: whether a create body must carry it too.
    - ``named``: a link carries the linked object's name and the live links are told apart by
      it; the links to add are made in the order the manifest lists them, those to remove in
      the order the area lists them. Otherwise a link is its id alone: links are added and
      removed in id order, and a link the area holds twice is made once again (removed, then
      added), also when the plan repairs it (``endpoints[X] (duplicates)``) and the manifest
      leaves the field out.
    - ``whole``: whether the dialect writes the set as one collection instead: ``PUT
      {item}/{field}`` with ``{field: [{id, action}]}``, ``DELETE {item}/{field}`` to clear it.
    """

    action: str = ""
    named: bool = False
    whole: Callable[[Dialect], bool] = _never
    action_required: Callable[[Dialect], bool] = _never


@dataclass(frozen=True)
class KeyedItems:
    """Items keyed by ``key``, made exactly what the manifest lists (when it lists the field):
    created (``POST``, looked up by key before a retry), updated in place (``PUT`` of the item
    with its ``defaults`` when any field differs), deleted when not listed. ``nested``: keyed
    items of each item, written after it (an item's list the manifest leaves out is empty).
    ``indexed_as``: the label under which a created item's id is kept for later steps (plans
    entitle a method created in the same apply). Extra copies the plan repairs
    (``methods[GET] (duplicates)``) are deleted first, at every level."""

    key: str = "name"
    defaults: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    nested: Mapping[str, KeyedItems] = field(default_factory=lambda: MappingProxyType({}))
    indexed_as: str = ""

    def fields(self) -> tuple[str, ...]:
        """The read projection of the live items: id, key and defaulted fields, and the same
        of the nested items."""
        out = ["id", self.key, *self.defaults]
        for name, items in self.nested.items():
            out += [f"{name}.{f}" for f in items.fields()]
        return tuple(out)


@dataclass(frozen=True)
class Catalog:
    """A fixed catalog: the platform holds every item of ``ids`` (keyed by ``key``), so each
    is written in place (``PUT {item}/{field}/{id}``) when it differs from what the manifest
    makes it: ``default`` (the item as the platform creates it in the dialect) with the
    fields the manifest lists for it. An item the plan repairs (held twice:
    ``errorMessages[X] (duplicates)``) is written again, whole.
    ``filled``: the fields a create body's listed item gets from the dialect when the manifest
    leaves them out (SUPPLEMENT §10.5: not writing one means "the platform's default")."""

    key: str
    ids: tuple[str, ...]
    default: Callable[[str, Dialect], Mapping[str, Any]]
    filled: Callable[[str, Dialect], Mapping[str, Any]] = _nothing


@dataclass(frozen=True)
class Entitlements:
    """Links to objects by id, each with links of its own under ``inner``, each of those with
    links under ``leaf`` and a ``flag`` (a plan's services, their endpoints, the endpoints'
    methods and ``undefinedMethodsAllowed``; SUPPLEMENT §10.6). An outer link is added whole
    (its inner links listed: only those are entitled); an inner link whose flag is unchanged
    gets its leaf links added and removed one by one (the plan's keys never lose the
    endpoint), one whose flag changed is made again. Links held twice are made once again.
    ``fields``: the read projection of the live links, named down to the leaves."""

    fields: tuple[str, ...]
    inner: str
    leaf: str
    flag: str


NestedWrite = Singleton | Links | KeyedItems | Catalog | Entitlements


def collection_names(writes: Mapping[str, NestedWrite]) -> tuple[str, ...]:
    """The fields of ``writes`` that are collections (not singletons): left out of the
    object's own write bodies, which the kind's ``body`` adds them back to on a create."""
    return tuple(name for name, write in writes.items() if not isinstance(write, Singleton))


def fields_under(fields: Iterable[str], path: str) -> tuple[str, ...]:
    """The fields of a read projection under ``path``, relative to it
    (``services.endpoints.id`` under ``services``: ``endpoints.id``)."""
    head = f"{path}."
    return tuple(f[len(head):] for f in fields if f.startswith(head))
