"""The projections of create replies, derived from the kinds' data: the ids apply indexes for
later steps (an endpoint's methods) and, for a parent created with its children, the ids and
fingerprints of each of them. A new parent kind needs no table entry of its own."""

from __future__ import annotations

from collections.abc import Sequence

from apimctl.kinds.base import Kind
from apimctl.kinds.nested_writes import KeyedItems

# the fields of a read projection that tell a change of the object (its fingerprint)
FINGERPRINT_FIELDS: tuple[str, ...] = ("updated", "revisionNumber")


def indexed_fields(kind: Kind) -> tuple[str, ...]:
    """The ids and keys of the nested items apply indexes for later steps (an endpoint's
    methods: ``methods.id``, ``methods.name``)."""
    out: list[str] = []
    for name, write in kind.ops.writes.items():
        if isinstance(write, KeyedItems) and write.indexed_as:
            out += [f"{name}.id", f"{name}.{write.key}"]
    return tuple(out)


def created_fields(kind: Kind) -> tuple[str, ...]:
    """The projection of a create reply: the object's id and identity and the ids of its
    indexed nested items; empty when there are none of those (the reply is used whole)."""
    nested = indexed_fields(kind)
    return ("id", kind.identity, *nested) if nested else ()


def tree_fields(kind: Kind, children: Sequence[Kind]) -> tuple[str, ...]:
    """The projection of the reply to a parent created with its children: the id, identity
    and fingerprint of the parent and of each child (children in the order of their manifest
    keys), with the indexed nested items of the children."""

    def own(of: Kind) -> list[str]:
        return ["id", of.identity, *(f for f in FINGERPRINT_FIELDS if f in of.fields),
                *indexed_fields(of)]

    out = own(kind)
    for child in sorted(children, key=lambda c: c.manifest_key):
        out += [f"{child.manifest_key}.{f}" for f in own(child)]
    return tuple(out)
