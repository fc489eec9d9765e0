"""Identities of manifest objects: which field names an object within its list.

Used by :mod:`~apimctl.manifests.overlay` (overlays merge by identity), by
:mod:`~apimctl.manifests.checks` (identities must be unique) and by
:mod:`~apimctl.manifests.canonical` (string shorthands). Paths are patterns in which ``"*"``
stands for any list index.
"""

from __future__ import annotations

from typing import Any

from apimctl.manifests.model import JsonPath

TOP_LEVEL: dict[str, str] = {
    "services": "name",
    "packages": "name",
    "roles": "name",
    "domains": "domain",
    "scheduledMaintenanceEvents": "name",
}
"""Top-level list -> identity field."""

NESTED: dict[tuple[str, ...], str] = {
    ("services", "*", "endpoints"): "name",
    ("services", "*", "errorSets"): "name",
    ("services", "*", "errorSets", "*", "errorMessages"): "id",
    ("services", "*", "endpoints", "*", "methods"): "name",
    ("services", "*", "endpoints", "*", "methods", "*", "responseFilters"): "name",
    ("packages", "*", "plans"): "name",
    ("packages", "*", "plans", "*", "services"): "name",
    ("packages", "*", "plans", "*", "services", "*", "endpoints"): "name",
}
"""Nested list (by path pattern) -> identity field of its items."""

KIND_LABEL: dict[str, str] = {
    "services": "service", "packages": "package", "roles": "role", "domains": "domain",
    "scheduledMaintenanceEvents": "maintenance event", "endpoints": "endpoint",
    "errorSets": "error set", "errorMessages": "error message", "methods": "method",
    "responseFilters": "response filter", "plans": "plan",
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
