"""One base and one overlay per area, from the areas' exported documents.

The overlays are what ``--overlay`` reads (:mod:`apimctl.manifests.overlay`), so base plus an
area's overlay is that area's documents again, field for field:

- an object (top-level, or in a keyed list: endpoints, plans, methods, ...) that more than
  half of the areas hold is in the base; the overlays of the areas without it delete it
  (``$patch: delete``); an object fewer areas hold is added by their overlays (``$patch: add``);
- a field every area holding the object writes goes to the base with the value most of them
  give it (a tie: the first area's), and the overlays of the others hold their own value;
- a field only some areas write (the others keep the default) stays out of the base, and the
  overlays of the areas writing it hold it;
- mappings merge key by key, keyed lists item by item, any other value is whole.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from apimctl import kinds
from apimctl.errors import ApimctlError
from apimctl.manifests.identity import NESTED, TOP_LEVEL, identity
from apimctl.manifests.overlay import ADD, DELETE, DIRECTIVE

Docs = dict[str, list[Any]]
Path = tuple[str, ...]


@dataclass
class Split:
    """The base's documents and each area's overlay documents (empty: nothing differs)."""

    base: Docs = field(default_factory=dict)
    overlays: dict[str, Docs] = field(default_factory=dict)


def split(areas: Mapping[str, Docs]) -> Split:
    """The base and the overlays of ``areas`` (in the order given: ties go to the first)."""
    out = Split(overlays={name: {} for name in areas})
    for kind in kinds.TOP_LEVEL:
        key = kind.manifest_key
        lists = {name: docs.get(key) or [] for name, docs in areas.items()}
        if not any(lists.values()):
            continue
        base, overlays = _keyed((key,), lists, TOP_LEVEL[key])
        if base:
            out.base[key] = base
        for name, items in overlays.items():
            if items:
                out.overlays[name][key] = items
    return out


def _keyed(path: Path, lists: Mapping[str, list[Any]], ident: str) -> tuple[list[Any], dict[str, list[Any]]]:
    """A keyed list every area in ``lists`` holds: the base's items and each area's overlay items."""
    indexed = {name: _index(path, name, items, ident) for name, items in lists.items()}
    order = list(dict.fromkeys(key for index in indexed.values() for key in index))
    base: list[Any] = []
    overlays: dict[str, list[Any]] = {name: [] for name in lists}
    for key in order:
        have = {name: index[key] for name, index in indexed.items() if key in index}
        if len(have) * 2 > len(lists):
            item, diffs = _item((*path, "*"), have, ident)
            base.append(item)
            for name in lists:
                if name not in have:
                    overlays[name].append({ident: key, DIRECTIVE: DELETE})
                elif diffs[name]:
                    overlays[name].append({ident: key, **diffs[name]})
        else:
            for name, item in have.items():
                whole = dict(item) if isinstance(item, dict) else {ident: item}
                overlays[name].append({ident: key, DIRECTIVE: ADD, **{k: v for k, v in whole.items() if k != ident}})
    return base, overlays


def _index(path: Path, area: str, items: list[Any], ident: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key = identity(item, ident)
        if key is None:
            continue
        if key in out:
            where = ".".join(p for p in path if p != "*")
            raise ApimctlError(f"area {area}: two objects of {where} are both named {key!r} once rewritten: "
                               "a rewrite rule maps two values to one")
        out[key] = item
    return out


def _item(path: Path, items: Mapping[str, Any], ident: str) -> tuple[Any, dict[str, dict[str, Any]]]:
    """One object several areas hold: its base form and each area's differences."""
    if all(isinstance(item, str) for item in items.values()):
        return next(iter(items.values())), {name: {} for name in items}
    maps = {name: item if isinstance(item, dict) else {ident: item} for name, item in items.items()}
    return _mapping(path, maps, ident)


def _mapping(path: Path, maps: Mapping[str, dict[str, Any]],
             ident: str | None = None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    base: dict[str, Any] = {}
    diffs: dict[str, dict[str, Any]] = {name: {} for name in maps}
    for key in dict.fromkeys(k for m in maps.values() for k in m):
        values = {name: m[key] for name, m in maps.items() if key in m}
        if key == ident:
            base[key] = next(iter(values.values()))
            continue
        if len(values) < len(maps):  # the others keep the default: not common
            for name, value in values.items():
                diffs[name][key] = value
            continue
        sub = (*path, key)
        keyed_by = NESTED.get(sub)
        if keyed_by is not None and all(isinstance(v, list) for v in values.values()):
            items, overlays = _keyed(sub, values, keyed_by)
            base[key] = items
            for name, over in overlays.items():
                if over:
                    diffs[name][key] = over
        elif all(isinstance(v, dict) for v in values.values()) and values:
            inner, inner_diffs = _mapping(sub, values)
            if not inner and any(inner_diffs.values()):
                for name, value in values.items():
                    diffs[name][key] = value
                continue
            base[key] = inner
            for name, diff in inner_diffs.items():
                if diff:
                    diffs[name][key] = diff
        else:
            common = _most_common(values)
            base[key] = common
            for name, value in values.items():
                if value != common:
                    diffs[name][key] = value
    return base, diffs


def _most_common(values: Mapping[str, Any]) -> Any:
    """The value most areas give (a tie: the first area's)."""
    counts = Counter(_encoded(v) for v in values.values())
    best = max(counts.values())
    return next(v for v in values.values() if counts[_encoded(v)] == best)


def _encoded(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
