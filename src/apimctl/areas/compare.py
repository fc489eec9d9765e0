"""What differs between two sides (``apimctl diff``), object by object.

Both sides are exported documents (:mod:`apimctl.areas.reading`), in one dialect, rewritten by
the same rules (:mod:`apimctl.areas.rules`), so "identical" means what ``plan`` means: the
same normal forms, modulo the rules. Each object (top-level, and the endpoints, error sets and
plans under them) is identical, different (each differing field with both values; a field a
side does not write holds the default there), or present on one side only (what it holds goes
with it). Secret fields are marked ``sensitive`` and their values never shown; a write-only
field (``Kind.compare.write_only``: an area never returns it) is never a difference, its value unknown.
The result is a value of :mod:`apimctl.plans.comparison`, which ``render`` shows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.manifests.identity import identity
from apimctl.plans.comparison import DEFAULT, Comparison, FieldDifference, ObjectDifference, Side


def compare(source: Mapping[str, list[Any]], target: Mapping[str, list[Any]],
            source_side: Side, target_side: Side) -> Comparison:
    """The comparison of two sides' documents."""
    out = Comparison(source_side, target_side)
    for kind in kinds.TOP_LEVEL:
        _objects(out, kind, None, source.get(kind.manifest_key) or [], target.get(kind.manifest_key) or [])
    return out


def _index(kind: Kind, items: list[Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        name = identity(item, kind.identity)
        if name is not None:
            out[name] = item if isinstance(item, dict) else {kind.identity: item}
    return out


def _objects(out: Comparison, kind: Kind, parent: str | None, source: list[Any], target: list[Any]) -> None:
    ours, theirs = _index(kind, source), _index(kind, target)
    children = kinds.children_of(kind)
    child_keys = {c.manifest_key for c in children}
    for name in sorted(set(ours) | set(theirs)):
        key = kind.key_of(name, parent)
        if name not in theirs:
            out.differences.append(ObjectDifference(kind.name, key, "source-only"))
            continue
        if name not in ours:
            out.differences.append(ObjectDifference(kind.name, key, "target-only"))
            continue
        a = {k: v for k, v in ours[name].items() if k not in child_keys and k != kind.identity}
        b = {k: v for k, v in theirs[name].items() if k not in child_keys and k != kind.identity}
        found = tuple(_fields(kind, "", "", a, b))
        if found:
            out.differences.append(ObjectDifference(kind.name, key, "different", found))
        else:
            out.identical += 1
        for child in children:
            _objects(out, child, key, ours[name].get(child.manifest_key) or [],
                     theirs[name].get(child.manifest_key) or [])


def _fields(kind: Kind, schema: str, shown: str, a: Any, b: Any) -> Iterator[FieldDifference]:
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for name in list(a) + [n for n in b if n not in a]:
            sub = f"{schema}.{name}" if schema else name
            yield from _fields(kind, sub, f"{shown}.{name}" if shown else name,
                               a.get(name, DEFAULT), b.get(name, DEFAULT))
        return
    key_field = kind.keyed.get(schema)
    if key_field is not None and isinstance(a, list) and isinstance(b, list):
        ours, theirs = _keyed(a, key_field), _keyed(b, key_field)
        for key in sorted(set(ours) | set(theirs)):
            yield from _fields(kind, schema, f"{shown}[{key}]", ours.get(key, DEFAULT), theirs.get(key, DEFAULT))
        return
    if schema in kind.compare.write_only:
        return  # never read back: an area's value is unknown, not different
    yield FieldDifference(shown, a, b, _secret(kind, schema))


def _keyed(items: list[Any], key_field: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        name = identity(item, key_field)
        if name is not None:
            out[name] = {k: v for k, v in item.items() if k != key_field} if isinstance(item, dict) else {}
    return out


def _secret(kind: Kind, schema: str) -> bool:
    return any(schema == s or schema.startswith(s + ".") or s.startswith(schema + ".") for s in kind.compare.secret)
