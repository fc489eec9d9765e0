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
- keyed lists become maps keyed by their identity (methods by name, messages by id);
- keyed lists hold the items the platform always has (``implied_items``: an error set's
  messages cover the whole catalog), an item not listed comparing against its defaults;
- the kind's own rules come from its operations (``Kind.ops``): the defaults an object is
  compared with (an OAuth endpoint's), fields whose empty value stands for a value of the
  :class:`Context` (an endpoint's error set), how members of sets compare;
- secret values are replaced by ``sha256:<hex>`` so that only hashes are ever compared.

Keys listed in ``Kind.left_alone`` stay absent when absent, so ``diff`` can leave them alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from apimctl.kinds import BY_NAME, META_FIELDS, NESTED_COMPUTED_FIELDS, Kind
from apimctl.kinds.ops import Context, KindOps

__all__ = ["Context", "canonical_datetime", "normalise", "secret_hash"]


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
    if not isinstance(value, str) or not value:
        return value
    text = value.strip()
    if len(text) > 5 and text[-5] in "+-" and text[-4:].isdigit():
        text = f"{text[:-5]}{text[-5:-2]}:{text[-2:]}"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return value
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
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
    if value is None:
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


# One row of a compiled table: (name, path, tag, left_alone, default).
_Row = tuple[str, str, int, bool, Any]


class _Table:
    """The fields of one prefix (the top level, ``cors``, ``methods``, ...), compiled once.

    ``rows`` (each defaulted field with its default as found in ``source``, the defaults the
    table was compiled from: the kind's own mappings, the same object on every call) are kept
    split by treatment: ``pairs`` (name, default) of every row, in order; ``left_alone`` the
    names left out when absent; ``nested`` (name, path, tag) of the rows that are not plain
    scalars; ``scalars`` (name, default) of the others. ``known`` holds the names the rows
    cover; ``extra`` caches how other names of a document are treated (``None``: not
    compared)."""

    __slots__ = ("extra", "known", "left_alone", "nested", "pairs", "scalars", "source")

    def __init__(self, source: Mapping[str, Any], rows: list[_Row], known: frozenset[str]) -> None:
        self.source = source
        self.known = known
        self.pairs = [(r[0], r[4]) for r in rows]
        self.left_alone = tuple(r[0] for r in rows if r[3])
        self.nested = [(r[0], r[1], r[2]) for r in rows if r[2] != _SCALAR]
        self.scalars = [(r[0], r[4]) for r in rows if r[2] == _SCALAR]
        self.extra: dict[str, tuple[str, int] | None] = {}


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
            rows = [(*e, defaults.get(e[0])) for n in names
                    if (e := self.entry(prefix, n)) is not None]
            found = self.tables[prefix] = _Table(defaults, rows, frozenset(names))
        return found

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


_COMPILED: dict[str, _Compiled] = {}


def _compiled(kind: Kind) -> _Compiled:
    found = _COMPILED.get(kind.name)
    if found is None or found.kind is not kind:
        found = _COMPILED[kind.name] = _Compiled(kind)
    return found


class _Normaliser:
    def __init__(self, kind: Kind, ctx: Context) -> None:
        self.kind = kind
        self.ctx = ctx
        self.c = _compiled(kind)

    def object(self, prefix: str, doc: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
        table = self.c.table(prefix, defaults)
        own = defaults is not table.source  # defaults made for this object: their own values
        # every row at once, in order: the document's value, else the default ...
        if own:
            out = {name: doc[name] if name in doc else defaults.get(name) for name, _ in table.pairs}
        else:
            out = {name: doc.get(name, default) for name, default in table.pairs}
        for name in table.left_alone:  # ... but left alone when absent
            if name not in doc:
                del out[name]
        for name, path, tag in table.nested:
            if name in out:
                out[name] = self.value(tag, path, out[name])
        # scalars from the document fold by the default's type (a default never needs it)
        for name, default in table.scalars:
            if name in doc:
                if own:
                    default = defaults.get(name)
                value = out[name]
                if value is None or default is None or type(value) is not type(default):
                    out[name] = _fold_scalar(value, default)
        known = table.known
        if own or not doc.keys() <= known:
            for name in doc:
                if name in known or (own and name in defaults):
                    continue
                extra = self.c.extra(table, prefix, name)
                if extra is not None:
                    out[name] = self._one(extra[1], extra[0], doc[name], None)
        return out

    def _one(self, tag: int, path: str, value: Any, default: Any) -> Any:
        if tag == _SCALAR:
            if value is None or default is None or type(value) is not type(default):
                return _fold_scalar(value, default)
            return value
        return self.value(tag, path, value)

    def value(self, tag: int, path: str, value: Any) -> Any:
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
        key_field = kind.keyed[path]
        defaults = kind.nested.get(path, {})
        ops = kind.ops
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


def normalise(kind: Kind, doc: Mapping[str, Any], ctx: Context | None = None) -> dict[str, Any]:
    """The comparable form of ``doc`` (an object of ``kind`` in manifest shape).

    Child kinds (a service's ``endpoints`` and ``errorSets``, a package's ``plans``) are not
    part of the result: they are compared as objects of their own.
    """
    out = _Normaliser(kind, ctx or Context()).object("", doc, kind.ops.defaults_for(doc))
    if kind.fold_case and isinstance(out.get(kind.identity), str):
        out[kind.identity] = kind.identity_of(out[kind.identity])
    return out
