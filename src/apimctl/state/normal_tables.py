"""The tables :func:`apimctl.state.normalise.normalise` works from, compiled once per kind.

Each kind's fields are compiled into tables (one per prefix: the top level, ``cors``,
``methods``, ...) of rows, each with how its value is treated (a tag: scalar, secret,
datetime, set, keyed list, opaque, nested object, contextual) and its default; a table's
:class:`Template` holds its defaults already in normal form, the start of the normal form of a
document naming few of the table's fields (what manifests write). :func:`compiled` keeps one
:class:`Compiled` per kind (:func:`apimctl.speed.per_name`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from apimctl.kinds import BY_NAME, META_FIELDS, NESTED_COMPUTED_FIELDS, Kind, capability
from apimctl.kinds.capabilities import CatalogItems, Contextual, ObjectDefaults, SetMembers
from apimctl.kinds.ops import member_name
from apimctl.speed import per_name

# Inside nested items (methods, response filters, messages): server-computed fields and the
# manifest's own ``id``/``previousNames``, which are not object fields.
NESTED_SKIP = NESTED_COMPUTED_FIELDS | META_FIELDS

SCALAR, SECRET, DATETIME, SET, KEYED, OPAQUE, NESTED, CONTEXTUAL = range(8)


# One row of a compiled table: (name, path, tag, left_alone, default, fixed). ``fixed``: the
# normal form of the default does not depend on the context (it is computed once).
Row = tuple[str, str, int, bool, Any, bool]
UNSET: Any = object()


def copy_normal(value: Any) -> Any:
    """A copy of the containers of a normal value (its leaves are immutable)."""
    if type(value) is dict:
        return {k: copy_normal(v) for k, v in value.items()}
    if type(value) is list:
        return [copy_normal(v) for v in value]
    return value


def flat(value: Any) -> bool:
    """A container of leaves."""
    items = value.values() if type(value) is dict else value
    return all(type(v) not in (dict, list) for v in items)


def copier(value: Any) -> Callable[[Any], Any] | None:
    """What copies a normal value: nothing for a leaf, a shallow copy for a container of
    leaves (or a dict of leaves and such containers: a singleton's defaults), else
    :func:`copy_normal`."""
    if type(value) not in (dict, list):
        return None
    if flat(value):
        return copy.copy
    if type(value) is dict:
        inner = [k for k, v in value.items() if type(v) in (dict, list)]
        if all(flat(value[k]) for k in inner):
            def shallow_twice(v: dict[str, Any]) -> dict[str, Any]:
                out = v.copy()
                for k in inner:
                    out[k] = out[k].copy()
                return out
            return shallow_twice
    return copy_normal


class Template:
    """A table's defaults (from its ``source``) in normal form, the start of the normal form
    of a document naming few of the table's fields: ``doc`` holds every row but those left
    alone, in order (a row whose normal default depends on the context holds a stand-in,
    ``unfixed`` lists those); ``copies`` the rows holding containers, with what copies them
    (the template's own are never handed out); ``rows`` every row by name; ``left_alone``
    the names of the rows left alone."""

    __slots__ = ("copies", "doc", "left_alone", "rows", "unfixed")

    def __init__(self) -> None:
        self.doc: dict[str, Any] = {}
        self.copies: list[tuple[str, Callable[[Any], Any]]] = []
        self.unfixed: list[tuple[str, str, int, Any]] = []
        self.rows: dict[str, Row] = {}
        self.left_alone: frozenset[str] = frozenset()


class Table:
    """The fields of one prefix (the top level, ``cors``, ``methods``, ...), compiled once.

    ``rows``: each defaulted field, in order, with its default as found in ``source`` (the
    defaults the table was compiled from: the kind's own mappings, the same object on every
    call). ``known`` holds the names the rows cover; ``extra`` caches how other names of a
    document are treated (``None``: not compared); ``normal`` the normal form of a row's
    default from ``source`` (made once, handed out as copies: normal forms are changed in
    place by the comparing stages); ``template`` the same for every row (:class:`Template`),
    made when first needed."""

    __slots__ = ("extra", "known", "normal", "rows", "source", "template")

    def __init__(self, source: Mapping[str, Any], rows: list[Row], known: frozenset[str]) -> None:
        self.source = source
        self.known = known
        self.rows = rows
        self.extra: dict[str, tuple[str, int] | None] = {}
        self.normal: dict[str, Any] = {}
        self.template: Template | None = None


class Compiled:
    """Per-kind lookups computed once: how each field path is treated, what to skip."""

    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        children = {BY_NAME[c].manifest_key for c in kind.children}
        self.top_skip = kind.compare.computed | META_FIELDS | children
        self.top_extra = tuple(n for n in kind.nested if "." not in n and n not in kind.keyed
                               and n not in kind.defaults)
        # the kind's rules of comparing (:mod:`apimctl.kinds.capabilities`), resolved once
        self.contextual = capability(kind, Contextual)
        self.context_fields: frozenset[str] = (self.contextual.context_fields
                                               if self.contextual is not None else frozenset())
        self.catalog = capability(kind, CatalogItems)
        members = capability(kind, SetMembers)
        self.member_of: Callable[[Mapping[str, Any]], Any] = (
            members.set_member if members is not None else member_name)
        defaults = capability(kind, ObjectDefaults)
        self.defaults_for: Callable[[Mapping[str, Any]], Mapping[str, Any]] = (
            defaults.defaults_for if defaults is not None else lambda doc: kind.defaults)
        self.tags: dict[str, int] = {}
        self.paths: dict[tuple[str, str], str] = {}
        self.tables: dict[str, Table] = {}
        # by prefix, the fields there with their spellings of "not set" (``Kind.compare.unset``)
        self.unset: dict[str, dict[str, tuple[Any, ...]]] = {}
        for path, spellings in kind.compare.unset.items():
            prefix, _, name = path.rpartition(".")
            self.unset.setdefault(prefix, {})[name] = spellings

    def entry(self, prefix: str, name: str) -> tuple[str, str, int, bool] | None:
        """``(name, path, tag, left_alone)`` of a field, or ``None`` when it is not compared."""
        skip = self.top_skip if not prefix else NESTED_SKIP
        path = self.path(prefix, name)
        if name in skip or path in self.kind.compare.write_only:
            return None
        return (name, path, self.tag(path), path in self.kind.compare.left_alone)

    def table(self, prefix: str, defaults: Mapping[str, Any]) -> Table:
        """The compiled fields at ``prefix`` (the defaults there have the same keys on every
        call; only their values may differ: an OAuth endpoint's, a catalog message's)."""
        found = self.tables.get(prefix)
        if found is None:
            names = list(defaults) + (list(self.top_extra) if not prefix else [])
            rows = [(*e, defaults.get(e[0]), self.fixed(e[1], e[2])) for n in names
                    if (e := self.entry(prefix, n)) is not None]
            found = self.tables[prefix] = Table(defaults, rows, frozenset(names))
        return found

    def fixed(self, path: str, tag: int) -> bool:
        """Whether the normal form of a value at ``path`` is the same in every context."""
        below = path + "."
        return tag != CONTEXTUAL and not any(f.startswith(below)
                                              for f in self.context_fields)

    def extra(self, table: Table, prefix: str, name: str) -> tuple[str, int] | None:
        """``(path, tag)`` of a field without a default, ``None`` when it is not compared."""
        if name in table.extra:
            return table.extra[name]
        entry = self.entry(prefix, name)
        found = table.extra[name] = (entry[1], entry[2]) if entry is not None else None
        return found

    def path(self, prefix: str, name: str) -> str:
        key = (prefix, name)
        path = self.paths.get(key)
        if path is None:
            path = self.paths[key] = f"{prefix}.{name}" if prefix else name
        return path

    def tag(self, path: str) -> int:
        tag = self.tags.get(path)
        if tag is None:
            tag = self.tags[path] = self._classify(path)
        return tag

    def _classify(self, path: str) -> int:
        kind = self.kind
        if path in kind.compare.secret:
            return SECRET
        if path in kind.compare.datetimes:
            return DATETIME
        if path in kind.compare.enum_arrays or path in kind.compare.sets:
            return SET
        if path in kind.keyed:
            return KEYED
        if path in kind.compare.opaque:
            return OPAQUE
        if path in kind.nested:
            return NESTED
        if path in self.context_fields:
            return CONTEXTUAL
        return SCALAR


compiled = per_name(Compiled)
