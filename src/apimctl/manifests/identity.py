"""Identities of manifest objects: which field names an object within its list.

Used by :mod:`~apimctl.manifests.overlay` (overlays merge by identity), by
:mod:`~apimctl.manifests.checks` (identities must be unique) and by
:mod:`~apimctl.manifests.canonical` (string shorthands). Paths are patterns in which ``"*"``
stands for any list index.
"""

from __future__ import annotations

from typing import Any

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.manifests.model import JsonPath

TOP_LEVEL: dict[str, str] = {k.manifest_key: k.identity for k in kinds.TOP_LEVEL}
"""Top-level list -> identity field."""


def _nested(kind: Kind, base: tuple[str, ...]) -> dict[tuple[str, ...], str]:
    """The keyed lists under the kind's objects at ``base`` (its child kinds', recursively)."""
    out: dict[tuple[str, ...], str] = {}
    for dotted, field in kind.keyed.items():
        out[(*base, *"/*/".join(dotted.split(".")).split("/"))] = field
    for child in kinds.children_of(kind):
        out[(*base, child.manifest_key)] = child.identity
        out.update(_nested(child, (*base, child.manifest_key, "*")))
    return out


NESTED: dict[tuple[str, ...], str] = {
    path: field for k in kinds.TOP_LEVEL for path, field in _nested(k, (k.manifest_key, "*")).items()
}
"""Nested list (by path pattern) -> identity field of its items."""

KIND_LABEL: dict[str, str] = {
    **{k.manifest_key: k.label for k in kinds.KINDS},
    **{path.rpartition(".")[2]: label for k in kinds.KINDS for path, label in k.item_labels.items()},
}
"""Human names of the lists' objects, for messages."""


def pattern(path: JsonPath) -> tuple[str, ...]:
    """``("services", 3, "endpoints")`` -> ``("services", "*", "endpoints")``."""
    return tuple("*" if isinstance(p, int) else p for p in path)


def identity_field(path: JsonPath) -> str | None:
    """The identity field of the items of the list at ``path``, if it is a keyed list."""
    if len(path) == 1 and isinstance(path[0], str):
        return TOP_LEVEL.get(path[0])
    return NESTED.get(pattern(path))


def identity(item: Any, field: str) -> str | None:
    """The identity of one item: the field's value, or the item itself for string shorthands."""
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        value = item.get(field)
        return value if isinstance(value, str) else None
    return None
