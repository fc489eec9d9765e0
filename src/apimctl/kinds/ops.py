"""What each kind does at the stages: read from the API, write bodies, compare, export.

:class:`Ops` is the shared implementation of the :class:`KindOps` protocol
(:mod:`apimctl.kinds.protocol`, whose values are re-exported here: :class:`Lookups`,
:class:`Read`, :class:`Context`, :class:`Exported`, :class:`Resolver`). Each kind's module
subclasses :class:`Ops` and names the class in its entry (``Kind(..., operations=XOps)``): the
entry makes its operations with itself, so ``Ops.kind`` is the entry they belong to. The
stages loop over ``KINDS`` and call ``kind.ops``. What only some kinds do, their class declares
as capabilities (:mod:`apimctl.kinds.capabilities`: ``class EndpointOps(Ops, Routed, ...)``):
:class:`Ops` has none of them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from apimctl.kinds.base import Kind, spelt_unset
from apimctl.kinds.findings import Declarations, Finding
from apimctl.kinds.nested_writes import NestedWrite, collection_names
from apimctl.kinds.protocol import (
    Context,
    Exported,
    Holdings,
    Key,
    KindOps,
    Lookups,
    Names,
    Read,
    Resolver,
)
from apimctl.kinds.references.paths import Ref, resolve

__all__ = [
    "NESTED_COMPUTED_FIELDS", "Context", "Exported", "Key", "KindOps", "Lookups", "Names", "Ops", "Read",
    "Resolver", "as_list", "escape_literal", "fingerprint", "member_name", "names_of", "resolved_body",
    "unset_as_default",
]

# --- per-kind operations ----------------------------------------------------------------------
#
# What each kind does at the stages (read from the API, write bodies, compare, export), in the
# kind's own module, on plain mappings: this layer imports no stage. The stages loop over
# ``KINDS`` and call ``kind.ops``; none of them names a kind.


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


def escape_literal(value: Any) -> Any:
    """Strings with a literal ``${`` escaped as ``$${`` so substitution gives them back."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, list):
        return [escape_literal(v) for v in value]
    if isinstance(value, dict):
        return {k: escape_literal(v) for k, v in value.items()}
    return value


def fingerprint(raw: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """``updated`` and ``revisionNumber`` of a raw object."""
    updated = raw.get("updated")
    revision = raw.get("revisionNumber")
    return (str(updated) if updated is not None else None,
            int(revision) if isinstance(revision, int | str) and str(revision).isdigit() else None)


def unset_as_default(kind: Kind, doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` (changed in place) with every value spelling "not set" at a path of
    ``Kind.compare.unset`` replaced by the field's default: what both dialects accept in a write."""
    for path, spellings in kind.compare.unset.items():
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


def member_name(item: Mapping[str, Any]) -> Any:
    """The comparable form of an object in a set: its name (or address); the item itself when
    it has neither (then compared by its content). Kinds comparing members otherwise declare
    :class:`~apimctl.kinds.capabilities.SetMembers`."""
    if "name" in item:
        return item["name"]
    if "address" in item:
        return item["address"]
    return item


def names_of(items: Any, lookups: Lookups | None = None, label: str = "") -> list[str]:
    """Role permissions, domains and plan methods (objects or strings) as a list of names."""
    out: list[str] = []
    for item in as_list(items):
        if type(item) is dict or isinstance(item, Mapping):  # a dict nearly always: told first
            found = lookups.name(label, item.get("id", "")) if lookups is not None else None
            name = found or item.get("name") or item.get("address")
            if name is not None:
                out.append(str(name))
        elif item is not None:
            out.append(str(item))
    return out


class Ops:
    """The operations most kinds share: copy the fields, no nested references.

    A kind's own class overrides what differs. The kind's entry makes its operations with
    itself (``Kind(..., operations=XOps)``): ``kind`` is that entry.
    """

    writes: Mapping[str, NestedWrite] = MappingProxyType({})
    # fields never sent back (dropped from every body besides the meta fields)
    meta: frozenset[str] = frozenset({"id", "previousNames"})

    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        # what :meth:`strip` drops, computed once per kind rather than per object
        self._strip_drop: frozenset[str] = kind.compare.computed | set(self.child_keys())

    def child_keys(self) -> tuple[str, ...]:
        """The manifest keys of the kind's child kinds (their objects are read on their own)."""
        return ()

    def strip(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The raw object without server-computed fields and child collections."""
        doc = dict(raw)  # a copy in one go, then the few fields dropped (order kept)
        for name in self._strip_drop.intersection(doc):
            del doc[name]
        return doc

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        return Read(self.strip(raw), fingerprint(raw)[0])

    def own_fields(self, desired: Mapping[str, Any]) -> dict[str, Any]:
        """The object's own fields (not meta fields, child kinds or nested collections), an
        unset value written as the field's default (``Kind.compare.unset``)."""
        skip = self.meta | set(self.child_keys()) | set(collection_names(self.writes))
        return unset_as_default(self.kind, {k: copy.deepcopy(v) for k, v in desired.items()
                                            if k not in skip})

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]:
        return self.resolved(self.own_fields(desired), refs, parent)

    def resolved(self, body: Mapping[str, Any], refs: Resolver,
                 parent: str | None) -> dict[str, Any]:
        """``body`` with the kind's references as a write body carries them
        (:func:`resolved_body`)."""
        return resolved_body(self.kind, body, refs, parent)

    # -- export

    def export(self, entry: Exported) -> Any:
        """The entry: its fields, then its child kinds' lists."""
        return {**entry.doc, **entry.children}

    # -- what goes with a deleted object

    def goes_with(self, key: str, area: Holdings) -> list[str]:
        """What the platform removes or changes along with the object ``key`` when it is
        deleted, in words (``2 endpoints``, ``its entitlements in plan Pro``), from what the
        live ``area`` holds: nothing for most kinds."""
        return []

    # -- the manifests

    def check(self, declared: Declarations) -> Iterable[Finding]:
        """No offline check of the kind's own."""
        return ()


def resolved_body(kind: Kind, body: Mapping[str, Any], refs: Resolver,
                  parent: str | None) -> dict[str, Any]:
    """``body`` with ``kind``'s references as a write body carries them: names to ids through
    ``refs`` (:func:`apimctl.kinds.references.paths.resolve`); a name that resolves to nothing
    fails the write when the reference requires the id. A bare id (``Reference.id_field``) is
    an integer where the target's dialect types it so (``Dialect.integer_ids``)."""

    def id_of(ref: Ref) -> str | int | None:
        found = refs.id(ref.kind, ref.key) if ref.reference.required else refs.find(ref.kind, ref.key)
        field = ref.reference.id_field
        if found is not None and field is not None and found.isdigit() \
                and (kind.name, field) in refs.dialect.integer_ids:
            return int(found)
        return found

    return resolve(kind, body, parent, id_of)
