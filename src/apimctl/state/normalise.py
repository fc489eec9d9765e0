"""Bring a desired or a live object into one comparable form.

``planner`` calls :func:`normalise` on both sides before ``diff`` compares them: the desired
object as the manifests declare it (secrets resolved; :func:`desired_form`, in the target's
dialect), the live object as ``live`` translated it into manifest shape. Everything is driven by the kind's entry in :mod:`apimctl.kinds`:

- fields not written get the server's defaults (SUPPLEMENT §3), so removing a field resets it;
- server-computed, write-only and meta (``id``, ``previousNames``) fields are dropped;
- enum arrays and sets become sorted lists (a single string is a one-element set, ``null`` is
  empty); datetimes become one canonical UTC rendering; a number where a string is expected
  (``version: 2``) becomes its text, and ``""`` where ``null`` is the default becomes ``null``;
- nested objects get their defaults (``null`` becomes the default object, except for the
  nullable ones such as ``systemDomainAuthentication``);
- a value spelling "not set" (``Kind.compare.unset``: ``null``, ``""``, ``[""]`` where the platform
  treats them alike, SUPPLEMENT §10.10.3) is the field's default, as if it were not written;
- keyed lists become maps keyed by their identity (methods by name, messages by id);
- keyed lists hold the items the platform always has (``implied_items``: an error set's
  messages cover the whole catalog), an item not listed comparing against its defaults;
- the kind's own rules come from its operations (``Kind.ops``): the defaults an object is
  compared with (an OAuth endpoint's), fields whose empty value stands for a value of the
  :class:`Context` (an endpoint's error set), how members of sets compare;
- secret values are replaced by ``sha256:<hex>`` so that only hashes are ever compared.

Keys listed in ``Kind.compare.left_alone`` stay absent when absent, so ``diff`` can leave them alone.

:mod:`apimctl.state.digests` fingerprints a normal form: the live model keeps the digests per
object, so that planning tells an unchanged object by them and normalises and diffs only the
others.

Each kind's fields are compiled once into tables (:mod:`apimctl.state.normal_tables`: one per
prefix, the top level, ``cors``, ``methods``, ...) of rows, each with how it is treated; a
document naming few of a table's fields (what manifests write) starts from the table's
defaults already in normal form.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from datetime import UTC
from typing import Any

import msgspec

from apimctl.kinds import Kind
from apimctl.kinds.base import spelt_unset
from apimctl.kinds.dialects import Dialect, comparable
from apimctl.kinds.ops import Context
from apimctl.platform import parse_datetime
from apimctl.state.normal_tables import (
    DATETIME,
    KEYED,
    NESTED,
    OPAQUE,
    SCALAR,
    SECRET,
    SET,
    UNSET,
    Table,
    Template,
    compiled,
    copier,
    copy_normal,
)

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


def _set_item(member_of: Callable[[Mapping[str, Any]], Any], item: Any) -> Any:
    """Members of sets: names as given, objects as the kind compares them (``member_of``:
    their name or address, an event's ``{service, endpoint}`` pair as the endpoint's key)."""
    if type(item) is str:
        return item
    if isinstance(item, Mapping):
        member = member_of(item)
        if member is not item:
            return member
    if isinstance(item, Mapping | list):
        return json.dumps(item, sort_keys=True)  # an odd member: compared by its content
    return item


def _set_key(value: Any) -> tuple[str, Any]:
    return (str(type(value)), value)


def _as_set(member_of: Callable[[Mapping[str, Any]], Any], value: Any) -> list[Any]:
    if value is None or (type(value) is list and not value):
        return []
    if type(value) is list and all(type(i) is str for i in value):
        # plain names (the common case): one type, so the order is the strings' own
        return sorted(set(value))
    items = [value] if isinstance(value, str | Mapping) else list(value)
    members = {_set_item(member_of, i) for i in items}
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




class _Normaliser:
    def __init__(self, kind: Kind, ctx: Context, memo: dict[Any, Any] | None = None) -> None:
        self.kind = kind
        self.ctx = ctx
        self.c = compiled(kind)
        self.memo = memo

    def object(self, prefix: str, doc: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
        table = self.c.table(prefix, defaults)
        unset = self.c.unset.get(prefix)
        if unset is not None:
            # "not set", however spelt, is the default: as if the field were not written (a
            # copy without those fields; a live document names every field, so the copy is
            # made in one go rather than field by field)
            drop = [name for name, spellings in unset.items()
                    if name in doc and spelt_unset(doc[name], spellings)]
            if drop:
                doc = dict(doc)
                for name in drop:
                    del doc[name]
        own = defaults is not table.source  # defaults made for this object: their own values
        if not own and 2 * len(doc) < len(table.rows):  # a few fields named: the rest default
            template = table.template or self._template(table)
            if template.left_alone.isdisjoint(doc):
                return self._sparse(table, template, prefix, doc)
        out: dict[str, Any] = {}
        get, absent, scalar, fold = doc.get, UNSET, SCALAR, _fold_scalar
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
                out[name] = value if tag == SCALAR else self.value(tag, path, value)
            elif tag == SCALAR:
                out[name] = default
            elif fixed:
                normal = table.normal.get(name, UNSET)
                if normal is UNSET:
                    normal = table.normal[name] = self.value(tag, path, default)
                out[name] = copy_normal(normal)
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

    def _template(self, table: Table) -> Template:
        template = Template()
        template.rows = {row[0]: row for row in table.rows}
        template.left_alone = frozenset(row[0] for row in table.rows if row[3])
        for name, path, tag, left_alone, default, fixed in table.rows:
            if left_alone:
                continue
            if tag == SCALAR:
                template.doc[name] = default
            elif fixed:
                normal = template.doc[name] = self.value(tag, path, default)
                copies = copier(normal)
                if copies is not None:
                    template.copies.append((name, copies))
            else:
                template.doc[name] = None
                template.unfixed.append((name, path, tag, default))
        table.template = template
        return template

    def _sparse(self, table: Table, template: Template, prefix: str,
                doc: Mapping[str, Any]) -> dict[str, Any]:
        """:meth:`object` for a document naming few fields, none of them left alone: the
        template's defaults (in row order), with the document's fields in their places and
        the fields it adds after them, as :meth:`object` orders them."""
        out = template.doc.copy()
        for name, copies in template.copies:
            if name not in doc:
                out[name] = copies(out[name])
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
        if tag == SCALAR:
            if value is None or default is None or type(value) is not type(default):
                return _fold_scalar(value, default)
            return value
        return self.value(tag, path, value)

    def value(self, tag: int, path: str, value: Any) -> Any:
        memo = self.memo
        if memo is None or (tag != NESTED and tag != KEYED) or type(value) not in (dict, list):
            return self._value(tag, path, value)
        try:
            key = (self.kind.name, path, self.ctx, _ENCODE(value))
        except (msgspec.EncodeError, TypeError, OverflowError):
            return self._value(tag, path, value)
        found = memo.get(key, UNSET)
        if found is UNSET:
            found = memo[key] = self._value(tag, path, value)
        return found

    def _value(self, tag: int, path: str, value: Any) -> Any:
        kind = self.kind
        if tag == SET:
            return _as_set(self.c.member_of, value)
        if tag == NESTED:
            if value is None and path in kind.compare.nullable:
                return None
            if value is None:
                value = {}
            if type(value) is dict or isinstance(value, Mapping):
                return self.object(path, value, kind.nested[path])
            return value
        if tag == KEYED:
            return self.keyed(path, value)
        if tag == SECRET:
            return secret_hash(value) if isinstance(value, str) else value
        if tag == DATETIME:
            return canonical_datetime(value)
        if tag == OPAQUE:
            return dict(value) if isinstance(value, Mapping) else ({} if value is None else value)
        contextual = self.c.contextual
        return contextual.contextual(path, value, self.ctx) if contextual is not None else value

    def keyed(self, path: str, value: Any) -> dict[str, Any]:
        kind = self.kind
        catalog = self.c.catalog
        implied = catalog.implied_items(path) if catalog is not None else ()
        if (value is None or (type(value) is list and not value)) and not implied:
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
            items[key] = self.object(path, body, catalog.item_defaults(path, key, defaults)
                                     if catalog is not None else defaults)
        if catalog is not None:
            for item_key in implied:  # the platform always has these
                if item_key not in items:
                    items[item_key] = self.object(path, {}, catalog.item_defaults(path, item_key, defaults))
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
    normaliser = _Normaliser(kind, ctx or Context(), memo)
    out = normaliser.object("", doc, normaliser.c.defaults_for(doc))
    if kind.compare.fold_case and isinstance(out.get(kind.identity), str):
        out[kind.identity] = kind.identity_of(out[kind.identity])
    return out


def desired_form(kind: Kind, doc: Mapping[str, Any], ctx: Context, dialect: Dialect) -> dict[str, Any]:
    """The normal form a desired object is compared in: normalised in ``ctx``, in the
    target's ``dialect`` (the live side is read in it already)."""
    want = normalise(kind, doc, ctx)
    comparable(kind, None, want, doc, dialect)
    return want
