"""The fields an exported object carries: those whose normal form differs from the normal form
of the server's defaults, in a stable order a reader can follow.

Defaults are omitted so that the manifests say only what was chosen, and still plan to zero
changes: the planner compares the same normal forms (:func:`apimctl.state.normalise.normalise`).
Called by the exporter in :mod:`apimctl.export.objects`; :func:`join_path` also by
:mod:`apimctl.export.fit`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.kinds.capabilities import CatalogItems


def join_path(prefix: str, name: str) -> str:
    """The dotted path of field ``name`` under ``prefix`` (``systemDomainAuthentication.type``)."""
    return f"{prefix}.{name}" if prefix else name


def differing(kind: Kind, prefix: str, norm: Mapping[str, Any],
              base: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of the normal form ``norm`` that differ from ``base`` (the defaults' form)."""
    order = _order(kind.export.export_first, prefix, tuple(norm), tuple(base))
    out: dict[str, Any] = {}
    for name, path in order.first:
        if name in base:
            if norm[name] != base[name]:
                out[name] = _exported(kind, path, norm[name], base[name])
        elif not _empty(norm[name]):
            out[name] = _exported(kind, path, norm[name], None)
    # most fields are at their defaults: find the few that are not in one pass
    for name in [n for n in order.known if norm[n] != base[n]]:
        out[name] = _exported(kind, order.paths[name], norm[name], base[name])
    for name, path in order.rest:
        if not _empty(norm[name]):
            out[name] = _exported(kind, path, norm[name], None)
    return out


@dataclass(frozen=True)
class _Order:
    """The fields of a normal form in the order written: those a reader looks for first (the
    kind's ``export_first``), then the others the defaults have (in the registry's order), then
    those they lack (sorted)."""

    first: tuple[tuple[str, str], ...]  # (name, path)
    known: tuple[str, ...]
    rest: tuple[tuple[str, str], ...]
    paths: Mapping[str, str]


@functools.lru_cache(maxsize=1024)
def _order(first_names: tuple[str, ...], prefix: str, norm: tuple[str, ...],
           base: tuple[str, ...]) -> _Order:
    """Objects of a kind share their keys (``norm``; the defaults': ``base``), so this is worked
    out once per kind and nesting."""
    in_norm, in_base = set(norm), set(base)
    first = [n for n in first_names if n in in_norm]
    known = tuple(n for n in base if n in in_norm and n not in first)
    rest = sorted(n for n in norm if n not in in_base and n not in first)
    return _Order(tuple((n, join_path(prefix, n)) for n in first), known,
                  tuple((n, join_path(prefix, n)) for n in rest), {n: join_path(prefix, n) for n in known})


def _empty(value: Any) -> bool:
    return value is None or value == [] or value == {}


def _exported(kind: Kind, path: str, value: Any, default: Any) -> Any:
    if path in kind.keyed and isinstance(value, Mapping):
        return _keyed_list(kind, path, value)
    if path in kind.compare.opaque:
        return _sorted_deep(value)
    if path in kind.nested and isinstance(value, Mapping):
        base = default if isinstance(default, Mapping) else kind.nested[path]
        return differing(kind, path, value, base)
    return value


def _sorted_deep(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _sorted_deep(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted_deep(v) for v in value]
    return value


def _keyed_list(kind: Kind, path: str, value: Mapping[str, Any]) -> list[Any]:
    """A keyed collection (normalised to a mapping by key) as the manifest's list of items,
    each with only the fields that differ from the item defaults."""
    key_field = kind.keyed[path]
    defaults = kind.nested.get(path, {})
    catalog = kinds.capability(kind, CatalogItems)
    implied = list(catalog.implied_items(path)) if catalog is not None else []
    items: list[Any] = []
    for key in _keys(implied, value):
        body = value[key]
        item_defaults = dict(catalog.item_defaults(path, key, defaults) if catalog is not None else defaults)
        if key in implied and body == item_defaults:
            continue  # not an override: an item the platform has at its defaults
        fields = differing(kind, path, body, item_defaults) if isinstance(body, Mapping) else {}
        items.append({key_field: key, **fields})
    return items


def _keys(implied: list[str], value: Mapping[str, Any]) -> list[str]:
    """The keys in the order written: the items the platform always has in its order (an
    error set's messages in the catalog's), then the others."""
    keys = list(value)
    if implied:
        order = {k: i for i, k in enumerate(implied)}
        keys.sort(key=lambda k: (order.get(k, len(order)), k))
    return keys
