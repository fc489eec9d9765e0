"""Bring a desired or a live object into one comparable form.

``planner`` calls :func:`normalise` on both sides before ``diff`` compares them: the desired
object as the manifests declare it (secrets resolved), the live object as ``live`` translated
it into manifest shape. Everything is driven by the kind's entry in :mod:`apimctl.kinds`:

- fields not written get the server's defaults (SUPPLEMENT §3), so removing a field resets it;
- server-computed, write-only and meta (``id``, ``previousNames``) fields are dropped;
- enum arrays and sets become sorted lists (a single string is a one-element set, ``null`` is
  empty); datetimes become one canonical UTC rendering; a number where a string is expected
  (``version: 2``) becomes its text, and ``""`` where ``null`` is the default becomes ``null``;
- nested objects get their defaults (``null`` becomes the default object, except for the
  nullable ones such as ``systemDomainAuthentication``);
- a value spelling "not set" (``Kind.unset``: ``null``, ``""``, ``[""]`` where the platform
  treats them alike, SUPPLEMENT §10.10.3) is the field's default, as if it were not written;
- keyed lists become maps keyed by their identity (methods by name, messages by id);
- keyed lists hold the items the platform always has (``implied_items``: an error set's
  messages cover the whole catalog), an item not listed comparing against its defaults;
- the kind's own rules come from its operations (``Kind.ops``): the defaults an object is
  compared with (an OAuth endpoint's), fields whose empty value stands for a value of the
  :class:`Context` (an endpoint's error set), how members of sets compare;
- secret values are replaced by ``sha256:<hex>`` so that only hashes are ever compared.

Keys listed in ``Kind.left_alone`` stay absent when absent, so ``diff`` can leave them alone.

:mod:`apimctl.state.digests` fingerprints a normal form: the live model keeps the digests per
object, so that planning tells an unchanged object by them and normalises and diffs only the
others.

Each kind's fields are compiled once into tables (one per prefix: the top level, ``cors``,
``methods``, ...) of rows, each with how it is treated; a document naming few of a table's
fields (what manifests write) starts from the table's defaults already in normal form.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Mapping
from datetime import UTC
from typing import Any

import msgspec

from apimctl.kinds import BY_NAME, META_FIELDS, NESTED_COMPUTED_FIELDS, Kind
from apimctl.kinds.base import spelt_unset
from apimctl.kinds.ops import Context, KindOps
from apimctl.platform import parse_datetime
from apimctl.speed import per_name

__all__ = ["Context", "canonical_datetime", "normalise", "secret_hash"]

_ENCODE = msgspec.msgpack.Encoder().encode


def secret_hash(value: str) -> str:
    """The comparable form of a secret value (empty stays empty: nothing is set)."""
    if not value:
        return ""
    return "sha256:" + hashlib.sha256(value.encode("utf-8")).hexdigest()


def canonical_datetime(value: Any) -> Any:
    """One rendering of an instant: ``2026-12-01T02:00:00Z`` (``.mmm`` kept when non-zero).

    Accepts both platform renderings (``...+0000`` and ``...Z``) and any ISO 8601 text; a
    value that is not a datetime is returned unchanged, so the difference stays visible.
    """
    parsed = parse_datetime(value)
    if parsed is None:
        return value
    parsed = parsed.astimezone(UTC)
    if parsed.microsecond:
        return parsed.strftime("%Y-%m-%dT%H:%M:%S.") + f"{parsed.microsecond // 1000:03d}Z"
    return parsed.strftime("%Y-%m-%dT%H:%M:%SZ")


def _set_item(ops: KindOps, item: Any) -> Any:
    """Members of sets: names as given, objects as the kind compares them (``set_member``:
    their name or address, an event's ``{service, endpoint}`` pair as the endpoint's key)."""
    if type(item) is str:
        return item
    if isinstance(item, Mapping):
        member = ops.set_member(item)
        if member is not item:
            return member
    if isinstance(item, Mapping | list):
        return json.dumps(item, sort_keys=True)  # an odd member: compared by its content
    return item


def _set_key(value: Any) -> tuple[str, Any]:
    return (str(type(value)), value)


def _as_set(ops: KindOps, value: Any) -> list[Any]:
    if value is None or (type(value) is list and not value):
        return []
    if type(value) is list and all(type(i) is str for i in value):
        # plain names (the common case): one type, so the order is the strings' own
        return sorted(set(value))
    items = [value] if isinstance(value, str | Mapping) else list(value)
    members = {_set_item(ops, i) for i in items}
    if all(type(m) is str for m in members):
        return sorted(members)
    return sorted(members, key=_set_key)


def _fold_scalar(value: Any, default: Any) -> Any:
    """Quirk folds guided by the default's type."""
    if isinstance(default, str) and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if default is None and value == "":
        return None
    if isinstance(default, str) and value is None:
        return ""
    if isinstance(default, list) and value is None:
        return []
    return value


# Inside nested items (methods, response filters, messages): server-computed fields and the
# manifest's own ``id``/``previousNames``, which are not object fields.
_NESTED_SKIP = NESTED_COMPUTED_FIELDS | META_FIELDS

_SCALAR, _SECRET, _DATETIME, _SET, _KEYED, _OPAQUE, _NESTED, _CONTEXTUAL = range(8)


# One row of a compiled table: (name, path, tag, left_alone, default, fixed). ``fixed``: the
# normal form of the default does not depend on the context (it is computed once).
_Row = tuple[str, str, int, bool, Any, bool]
_UNSET: Any = object()


def _copy(value: Any) -> Any:
    """A copy of the containers of a normal value (its leaves are immutable)."""
    if type(value) is dict:
        return {k: _copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_copy(v) for v in value]
    return value


def _flat(value: Any) -> bool:
    """A container of leaves."""
    items = value.values() if type(value) is dict else value
    return all(type(v) not in (dict, list) for v in items)


def _copier(value: Any) -> Callable[[Any], Any] | None:
    """What copies a normal value: nothing for a leaf, a shallow copy for a container of
    leaves (or a dict of leaves and such containers: a singleton's defaults), else
    :func:`_copy`."""
    if type(value) not in (dict, list):
        return None
    if _flat(value):
        return copy.copy
    if type(value) is dict:
        inner = [k for k, v in value.items() if type(v) in (dict, list)]
        if all(_flat(value[k]) for k in inner):
            def shallow_twice(v: dict[str, Any]) -> dict[str, Any]:
                out = v.copy()
                for k in inner:
                    out[k] = out[k].copy()
                return out
            return shallow_twice
    return _copy


class _Template:
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
        self.rows: dict[str, _Row] = {}
        self.left_alone: frozenset[str] = frozenset()


class _Table:
    """The fields of one prefix (the top level, ``cors``, ``methods``, ...), compiled once.

    ``rows``: each defaulted field, in order, with its default as found in ``source`` (the
    defaults the table was compiled from: the kind's own mappings, the same object on every
    call). ``known`` holds the names the rows cover; ``extra`` caches how other names of a
    document are treated (``None``: not compared); ``normal`` the normal form of a row's
    default from ``source`` (made once, handed out as copies: normal forms are changed in
    place by the comparing stages); ``template`` the same for every row (:class:`_Template`),
    made when first needed."""

    __slots__ = ("extra", "known", "normal", "rows", "source", "template")

    def __init__(self, source: Mapping[str, Any], rows: list[_Row], known: frozenset[str]) -> None:
        self.source = source
        self.known = known
        self.rows = rows
        self.extra: dict[str, tuple[str, int] | None] = {}
        self.normal: dict[str, Any] = {}
        self.template: _Template | None = None


class _Compiled:
    """Per-kind lookups computed once: how each field path is treated, what to skip."""

    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        children = {BY_NAME[c].manifest_key for c in kind.children}
        self.top_skip = kind.computed | META_FIELDS | children
        self.top_extra = tuple(n for n in kind.nested if "." not in n and n not in kind.keyed
                               and n not in kind.defaults)
        self.tags: dict[str, int] = {}
        self.paths: dict[tuple[str, str], str] = {}
        self.tables: dict[str, _Table] = {}
        # by prefix, the fields there with their spellings of "not set" (``Kind.unset``)
        self.unset: dict[str, dict[str, tuple[Any, ...]]] = {}
        for path, spellings in kind.unset.items():
            prefix, _, name = path.rpartition(".")
            self.unset.setdefault(prefix, {})[name] = spellings

    def entry(self, prefix: str, name: str) -> tuple[str, str, int, bool] | None:
        """``(name, path, tag, left_alone)`` of a field, or ``None`` when it is not compared."""
        skip = self.top_skip if not prefix else _NESTED_SKIP
        path = self.path(prefix, name)
        if name in skip or path in self.kind.write_only:
            return None
        return (name, path, self.tag(path), path in self.kind.left_alone)

    def table(self, prefix: str, defaults: Mapping[str, Any]) -> _Table:
        """The compiled fields at ``prefix`` (the defaults there have the same keys on every
        call; only their values may differ: an OAuth endpoint's, a catalog message's)."""
        found = self.tables.get(prefix)
        if found is None:
            names = list(defaults) + (list(self.top_extra) if not prefix else [])
            rows = [(*e, defaults.get(e[0]), self.fixed(e[1], e[2])) for n in names
                    if (e := self.entry(prefix, n)) is not None]
            found = self.tables[prefix] = _Table(defaults, rows, frozenset(names))
        return found

    def fixed(self, path: str, tag: int) -> bool:
        """Whether the normal form of a value at ``path`` is the same in every context."""
        below = path + "."
        return tag != _CONTEXTUAL and not any(f.startswith(below)
                                              for f in self.kind.ops.context_fields)

    def extra(self, table: _Table, prefix: str, name: str) -> tuple[str, int] | None:
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
        if path in kind.secret:
            return _SECRET
        if path in kind.datetimes:
            return _DATETIME
        if path in kind.enum_arrays or path in kind.sets:
            return _SET
        if path in kind.keyed:
            return _KEYED
        if path in kind.opaque:
            return _OPAQUE
        if path in kind.nested:
            return _NESTED
        if path in kind.ops.context_fields:
            return _CONTEXTUAL
        return _SCALAR


_compiled = per_name(_Compiled)


class _Normaliser:
    def __init__(self, kind: Kind, ctx: Context, memo: dict[Any, Any] | None = None) -> None:
        self.kind = kind
        self.ctx = ctx
        self.c = _compiled(kind)
        self.memo = memo

    def object(self, prefix: str, doc: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
        table = self.c.table(prefix, defaults)
        unset = self.c.unset.get(prefix)
        if unset is not None and any(name in doc for name in unset):
            # "not set", however spelt, is the default: as if the field were not written
            doc = {k: v for k, v in doc.items() if k not in unset or not spelt_unset(v, unset[k])}
        own = defaults is not table.source  # defaults made for this object: their own values
        if not own and 2 * len(doc) < len(table.rows):  # a few fields named: the rest default
            template = table.template or self._template(table)
            if template.left_alone.isdisjoint(doc):
                return self._sparse(table, template, prefix, doc)
        out: dict[str, Any] = {}
        get, absent, scalar, fold = doc.get, _UNSET, _SCALAR, _fold_scalar
        # every row, in order: the document's value (scalars folded by the default's type),
        # else the default, in normal form; rows left alone stay out when absent
        for name, path, tag, left_alone, default, fixed in table.rows:
            value = get(name, absent)
            if value is not absent:
                if tag != scalar:
                    out[name] = self.value(tag, path, value)
                    continue
                if own:
                    default = defaults.get(name)
                if value is None or default is None or type(value) is not type(default):
                    value = fold(value, default)
                out[name] = value
            elif left_alone:
                continue
            elif own:
                value = defaults.get(name)
                out[name] = value if tag == _SCALAR else self.value(tag, path, value)
            elif tag == _SCALAR:
                out[name] = default
            elif fixed:
                normal = table.normal.get(name, _UNSET)
                if normal is _UNSET:
                    normal = table.normal[name] = self.value(tag, path, default)
                out[name] = _copy(normal)
            else:
                out[name] = self.value(tag, path, default)
        known = table.known
        if own or not doc.keys() <= known:
            for name in [n for n in doc if n not in known]:
                if own and name in defaults:
                    continue
                extra = self.c.extra(table, prefix, name)
                if extra is not None:
                    out[name] = self._one(extra[1], extra[0], doc[name], None)
        return out

    def _template(self, table: _Table) -> _Template:
        template = _Template()
        template.rows = {row[0]: row for row in table.rows}
        template.left_alone = frozenset(row[0] for row in table.rows if row[3])
        for name, path, tag, left_alone, default, fixed in table.rows:
            if left_alone:
                continue
            if tag == _SCALAR:
                template.doc[name] = default
            elif fixed:
                normal = template.doc[name] = self.value(tag, path, default)
                copier = _copier(normal)
                if copier is not None:
                    template.copies.append((name, copier))
            else:
                template.doc[name] = None
                template.unfixed.append((name, path, tag, default))
        table.template = template
        return template

    def _sparse(self, table: _Table, template: _Template, prefix: str,
                doc: Mapping[str, Any]) -> dict[str, Any]:
        """:meth:`object` for a document naming few fields, none of them left alone: the
        template's defaults (in row order), with the document's fields in their places and
        the fields it adds after them, as :meth:`object` orders them."""
        out = template.doc.copy()
        for name, copier in template.copies:
            if name not in doc:
                out[name] = copier(out[name])
        for name, path, tag, default in template.unfixed:
            if name not in doc:
                out[name] = self.value(tag, path, default)
        rows, known = template.rows, table.known
        for name, value in doc.items():
            row = rows.get(name)
            if row is not None:
                out[name] = self._one(row[2], row[1], value, row[4])
            elif name not in known:
                extra = self.c.extra(table, prefix, name)
                if extra is not None:
                    out[name] = self._one(extra[1], extra[0], value, None)
        return out

    def _one(self, tag: int, path: str, value: Any, default: Any) -> Any:
        if tag == _SCALAR:
            if value is None or default is None or type(value) is not type(default):
                return _fold_scalar(value, default)
            return value
        return self.value(tag, path, value)

    def value(self, tag: int, path: str, value: Any) -> Any:
        memo = self.memo
        if memo is None or (tag != _NESTED and tag != _KEYED) or type(value) not in (dict, list):
            return self._value(tag, path, value)
        try:
            key = (self.kind.name, path, self.ctx, _ENCODE(value))
        except (msgspec.EncodeError, TypeError, OverflowError):
            return self._value(tag, path, value)
        found = memo.get(key, _UNSET)
        if found is _UNSET:
            found = memo[key] = self._value(tag, path, value)
        return found

    def _value(self, tag: int, path: str, value: Any) -> Any:
        kind = self.kind
        if tag == _SET:
            return _as_set(kind.ops, value)
        if tag == _NESTED:
            if value is None and path in kind.nullable:
                return None
            if value is None:
                value = {}
            if type(value) is dict or isinstance(value, Mapping):
                return self.object(path, value, kind.nested[path])
            return value
        if tag == _KEYED:
            return self.keyed(path, value)
        if tag == _SECRET:
            return secret_hash(value) if isinstance(value, str) else value
        if tag == _DATETIME:
            return canonical_datetime(value)
        if tag == _OPAQUE:
            return dict(value) if isinstance(value, Mapping) else ({} if value is None else value)
        return kind.ops.contextual(path, value, self.ctx)

    def keyed(self, path: str, value: Any) -> dict[str, Any]:
        kind = self.kind
        ops = kind.ops
        if (value is None or (type(value) is list and not value)) and not ops.implied_items(path):
            return {}
        key_field = kind.keyed[path]
        defaults = kind.nested.get(path, {})
        items: dict[str, Any] = {}
        for item in [] if value is None else value:
            if isinstance(item, str):
                item = {key_field: item}
            if not (type(item) is dict or isinstance(item, Mapping)) or key_field not in item:
                continue
            key = str(item[key_field])
            body = {k: v for k, v in item.items() if k != key_field}
            items[key] = self.object(path, body, ops.item_defaults(path, key, defaults))
        for implied in ops.implied_items(path):  # the platform always has these
            if implied not in items:
                items[implied] = self.object(path, {}, ops.item_defaults(path, implied, defaults))
        return dict(sorted(items.items()))


def normalise(kind: Kind, doc: Mapping[str, Any], ctx: Context | None = None, *,
              memo: dict[Any, Any] | None = None) -> dict[str, Any]:
    """The comparable form of ``doc`` (an object of ``kind`` in manifest shape).

    Child kinds (a service's ``endpoints`` and ``errorSets``, a package's ``plans``) are not
    part of the result: they are compared as objects of their own.

    ``memo``: normal forms of nested objects and keyed lists already made, by their encoding,
    shared by the calls given the same dict (the objects of an area repeat most of theirs:
    defaults). The result then shares parts with other results: only for forms that are
    read, never changed (:func:`apimctl.state.digests.digests` takes apart the top level only).
    """
    out = _Normaliser(kind, ctx or Context(), memo).object("", doc, kind.ops.defaults_for(doc))
    if kind.fold_case and isinstance(out.get(kind.identity), str):
        out[kind.identity] = kind.identity_of(out[kind.identity])
    return out
