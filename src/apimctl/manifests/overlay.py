"""``--overlay DIR``: per-environment files deep-merged onto the base by identity.

Called by the pipeline after the base and the overlay files have each been merged. Mappings
merge key by key; keyed lists (endpoints, error sets, plans, ...; see
:mod:`~apimctl.manifests.identity`) merge item by item on their identity; any other value
(strings, numbers, lists of names) replaces the base's. Naming an object the base does not
declare is an error (a misspelt name must not pass silently), unless the object says what it
is with kustomize's merge directive ``$patch``:

- ``$patch: add``: an object (top-level or in a keyed list) the base does not declare, added
  whole and checked against the schema like any manifest object; the base declaring it too is
  an error;
- ``$patch: delete``: the base's object of that identity is removed (with what it holds);
  the base not declaring it is an error.

Positions of overlaid values point into the overlay file.
"""

from __future__ import annotations

from typing import Any

from apimctl.manifests.documents import Item
from apimctl.manifests.identity import KIND_LABEL, TOP_LEVEL, identity, identity_field
from apimctl.manifests.merge import Merged
from apimctl.manifests.model import JsonPath, Position, Problems, format_path

DIRECTIVE = "$patch"
ADD, DELETE = "add", "delete"


def directive(value: Any) -> str | None:
    """The ``$patch`` directive of an overlay object, taken out of it (``None``: a change)."""
    if isinstance(value, dict) and DIRECTIVE in value:
        return str(value.pop(DIRECTIVE))
    return None


def _bad_directive(found: str | None) -> str | None:
    if found is None or found in (ADD, DELETE):
        return None
    return f"{DIRECTIVE}: expected {ADD} or {DELETE}, got {found!r}"


def apply_overlay(base: Merged, overlay: Merged, problems: Problems) -> None:
    """Merge ``overlay`` into ``base`` in place."""
    for kind, items in overlay.items.items():
        field = TOP_LEVEL[kind]
        index = {identity(it.value, field): it for it in base.items.get(kind, [])}
        for over in items:
            name = identity(over.value, field)
            target = index.get(name) if name is not None else None
            where = over.positions.get((), Position(over.file, 0, 0))
            label = f"{KIND_LABEL[kind]} '{name}'"
            found = directive(over.value)
            bad = _bad_directive(found)
            if bad is not None:
                problems.error(where, format_path((kind, over.index, DIRECTIVE)), bad)
            elif name is None:
                problems.error(where, format_path((kind, over.index)),
                               f"an overlay object needs its {field} to say which object it changes")
            elif found == DELETE:
                if target is None:
                    problems.error(where, format_path((kind, over.index)), f"overlay deletes {label}, "
                                   "which the base manifests do not declare")
                else:
                    base.items[kind].remove(target)
                    del index[name]
            elif found == ADD:
                if target is not None:
                    problems.error(where, format_path((kind, over.index)), f"overlay adds {label}, "
                                   f"which the base manifests already declare at {target.positions.get(())}")
                else:
                    base.items.setdefault(kind, []).append(over)
                    base.keys.setdefault(kind, where)
                    index[name] = over
            elif target is None:
                problems.error(where, format_path((kind, over.index)), f"overlay names {KIND_LABEL[kind]} "
                               f"'{name}', which the base manifests do not declare")
            else:
                _Merger(target, over, problems).top(field)
    if overlay.settings is not None:
        _merge_settings(base, overlay)


def _merge_settings(base: Merged, overlay: Merged) -> None:
    if base.settings is None:
        base.settings = {}
    for key, value in (overlay.settings or {}).items():
        base.settings[key] = _deep(base.settings.get(key), value)
    base.settings_positions.update(overlay.settings_positions)
    base.settings_refs.update(overlay.settings_refs)


def _deep(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            out[key] = _deep(base.get(key), value)
        return out
    return over


class _Merger:
    """Merges one overlay item into its base item, keeping the position tables in step."""

    def __init__(self, base: Item, over: Item, problems: Problems) -> None:
        self.base, self.over, self.problems = base, over, problems

    def top(self, field: str) -> None:
        if isinstance(self.over.value, dict):
            if not isinstance(self.base.value, dict):
                self.base.value = {field: self.base.value}
            self.value(self.base.value, self.over.value, (), (), field)

    def value(self, base: Any, over: Any, base_rel: JsonPath, over_rel: JsonPath, ident: str | None = None) -> Any:
        if isinstance(base, dict) and isinstance(over, dict):
            for key, value in over.items():
                if key == ident and base.get(key) == value:
                    continue  # the identity only says which object; it stays located in the base
                b_sub, o_sub = (*base_rel, key), (*over_rel, key)
                if key in base:
                    self.note(b_sub, o_sub)
                    base[key] = self.value(base[key], value, b_sub, o_sub)
                else:
                    base[key] = self.replace(b_sub, o_sub, value)
            return base
        field = identity_field((self.base.kind, 0, *base_rel))
        if field is not None and isinstance(base, list) and isinstance(over, list):
            return self.keyed(base, over, field, base_rel, over_rel)
        return self.replace(base_rel, over_rel, over)

    def keyed(self, base: list[Any], over: list[Any], field: str, base_rel: JsonPath, over_rel: JsonPath) -> list[Any]:
        index = {identity(item, field): i for i, item in enumerate(base)}
        deleted: list[int] = []
        for j, item in enumerate(over):
            name = identity(item, field)
            i = index.get(name) if name is not None else None
            found = directive(item)
            where = self.over.positions.get((*over_rel, j), self.over.positions.get(()))
            label = KIND_LABEL.get(str(base_rel[-1]), "object") if base_rel else "object"
            what = f"{label} '{name}'" if name is not None else f"a {label} without {field}"
            shown = format_path((self.over.kind, self.over.index, *over_rel, j))
            bad = _bad_directive(found)
            if bad is not None:
                self.problems.error(where, format_path((self.over.kind, self.over.index, *over_rel, j, DIRECTIVE)), bad)
                continue
            if found == ADD and name is not None:
                if i is not None:
                    self.problems.error(where, shown, f"overlay adds {what}, which the base manifests "
                                        "already declare")
                else:
                    index[name] = len(base)
                    base.append(self.replace((*base_rel, len(base)), (*over_rel, j), item))
                continue
            if i is None:
                verb = "deletes" if found == DELETE else "names"
                self.problems.error(where, shown, f"overlay {verb} {what}, which the base manifests do not declare")
                continue
            if found == DELETE:
                deleted.append(i)
                continue
            if isinstance(item, dict):
                if not isinstance(base[i], dict):
                    base[i] = {field: base[i]}
                base[i] = self.value(base[i], item, (*base_rel, i), (*over_rel, j), field)
        for i in sorted(set(deleted), reverse=True):
            self.drop(base, base_rel, i)
        return base

    def drop(self, base: list[Any], base_rel: JsonPath, i: int) -> None:
        """Remove item ``i`` of the list at ``base_rel``; the later items' paths move up one."""
        del base[i]
        n = len(base_rel)
        for table in (self.base.positions, self.base.refs, self.base.shown, self.base.typed):
            moved: dict[JsonPath, Any] = {}
            for path in [p for p in table if p[:n] == base_rel and len(p) > n]:
                at = path[n]
                if not isinstance(at, int) or at < i:
                    continue
                value = table[path]
                del table[path]
                if at > i:
                    moved[(*base_rel, at - 1, *path[n + 1:])] = value
            for path, value in moved.items():
                table[path] = value

    def note(self, base_rel: JsonPath, over_rel: JsonPath) -> None:
        where = self.over.positions.get(over_rel)
        if where is not None:
            self.base.positions[base_rel] = where
            self.base.shown[base_rel] = (self.over.kind, self.over.index, *over_rel)

    def replace(self, base_rel: JsonPath, over_rel: JsonPath, value: Any) -> Any:
        """``value`` replaces the base's value at ``base_rel``: swap the position tables too."""
        n, m = len(base_rel), len(over_rel)
        for table in (self.base.positions, self.base.refs, self.base.shown):
            for path in [p for p in table if p[:n] == base_rel and len(p) > n]:
                del table[path]
        self.base.refs.pop(base_rel, None)
        for path, pos in self.over.positions.items():
            if path[:m] == over_rel:
                self.base.positions[base_rel + path[m:]] = pos
                self.base.shown[base_rel + path[m:]] = (self.over.kind, self.over.index, *path)
        for path, raw in self.over.refs.items():
            if path[:m] == over_rel:
                self.base.refs[base_rel + path[m:]] = raw
        return value
