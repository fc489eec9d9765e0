"""Field-level differences between two normalised objects of one kind.

``planner`` calls :func:`diff` with the normal forms (see :mod:`apimctl.state.normalise`) of the
desired and the live object and turns the result into a step's ``changes``. Paths are dotted
within the object; members of keyed collections are addressed by their key:
``cors.maxAge``, ``errorMessages[ERR_403_DEVELOPER_OVER_QPS].status``,
``methods[getForecast].responseFilters[public].notes``, ``services[Weather].endpoints[Forecast]``.

The walk is written out rather than delegated to DeepDiff: it needs the kind's knowledge of
which maps are keyed collections and which are opaque values, must leave omitted collections
alone, marks changes to secret fields as sensitive, produces the plan's ``Change`` values
(paths as the plan shows them), and runs over tens of thousands of objects in the plan's time
budget. DeepDiff is therefore not a runtime dependency; it is a test dependency (the ``test``
extra), used for what it does well: as the independent oracle of this module's property tests
(``tests/unit/planning/test_diff_properties.py``), which check over generated endpoints that
:func:`diff` is empty exactly when DeepDiff finds no difference between the normalised sides
and that both report the same changed paths.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from apimctl.kinds import Kind
from apimctl.plans.model import Change


def _is_sensitive(kind: Kind, schema_path: str) -> bool:
    return any(schema_path == s or schema_path.startswith(s + ".") or s.startswith(schema_path + ".")
               for s in kind.compare.secret)


def _walk(kind: Kind, schema: str, shown: str, before: Any, after: Any,
          item: bool = False) -> Iterator[Change]:
    """Changes below one value; ``item`` marks a member of a keyed collection (an object)."""
    if before == after:
        return
    both_maps = isinstance(before, Mapping) and isinstance(after, Mapping)
    if both_maps and schema in kind.keyed and not item:
        for key in sorted(set(before) | set(after), key=str):
            yield from _walk(kind, schema, f"{shown}[{key}]", before.get(key), after.get(key), True)
        return
    one_map = isinstance(before, Mapping) != isinstance(after, Mapping)
    if one_map and not item and schema in kind.nested and schema not in kind.keyed:
        # a nullable singleton appearing or going away: show its fields one by one
        before, after = before if isinstance(before, Mapping) else {}, after if isinstance(after, Mapping) else {}
        both_maps = True
    if both_maps and schema not in kind.compare.opaque:
        for name in list(after) + [n for n in before if n not in after]:
            sub_schema = f"{schema}.{name}" if schema else name
            if name not in after and sub_schema in kind.compare.left_alone:
                continue  # a nested collection the manifest does not declare
            sub_shown = f"{shown}.{name}" if shown else name
            yield from _walk(kind, sub_schema, sub_shown, before.get(name), after.get(name))
        return
    yield Change(shown, before, after, sensitive=_is_sensitive(kind, schema))


def diff(kind: Kind, live: Mapping[str, Any], desired: Mapping[str, Any]) -> list[Change]:
    """Changes turning ``live`` into ``desired``; top-level keys absent from ``desired`` that
    the kind leaves alone when omitted (``Kind.compare.left_alone``) are not compared."""
    changes: list[Change] = []
    if live == desired:
        return changes
    for name, after in desired.items():
        before = live.get(name)
        if before != after:  # equal fields (most of them) need no walk
            changes.extend(_walk(kind, name, name, before, after))
    left_alone = kind.compare.left_alone
    for name, before in live.items():
        if name not in desired and name not in left_alone and before is not None:
            changes.extend(_walk(kind, name, name, before, None))
    return changes


def ignored(changes: Iterable[Change], patterns: Iterable[str]) -> tuple[list[Change], list[Change]]:
    """Split ``changes`` into (kept, ignored) by field-path patterns.

    A pattern matches a change whose path equals it, lies below it (``cors`` covers
    ``cors.maxAge``) or matches it as an fnmatch pattern (``methods[*].notes``).
    """
    pats = list(patterns)
    kept: list[Change] = []
    skipped: list[Change] = []
    for change in changes:
        hit = any(change.path == p or change.path.startswith(p + ".") or change.path.startswith(p + "[")
                  or fnmatch.fnmatchcase(change.path, p) for p in pats)
        (skipped if hit else kept).append(change)
    return kept, skipped


def _leaves(kind: Kind, schema: str, shown: str, value: Any, item: bool = False) -> Iterator[Change]:
    if isinstance(value, Mapping) and value and schema not in kind.compare.opaque:
        keyed = schema in kind.keyed and not item
        for name, sub in value.items():
            if keyed:
                yield from _leaves(kind, schema, f"{shown}[{name}]", sub, True)
            else:
                yield from _leaves(kind, f"{schema}.{name}", f"{shown}.{name}", sub)
        return
    yield Change(shown, None, value, sensitive=_is_sensitive(kind, schema))


def flatten(kind: Kind, doc: Mapping[str, Any], only: Iterable[str] | None = None) -> list[Change]:
    """Every leaf field of a normalised object as a change from nothing (for creates);
    ``only`` limits it to those top-level fields (the ones the manifest wrote)."""
    names = list(doc) if only is None else [n for n in doc if n in set(only)]
    return [c for name in names for c in _leaves(kind, name, name, doc[name])]
