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
- an error set's messages always cover the whole catalog: a message not listed compares
  against its catalog default;
- secret values are replaced by ``sha256:<hex>`` so that only hashes are ever compared.

Keys listed in ``Kind.left_alone`` stay absent when absent, so ``diff`` can leave them alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from apimctl.kinds import (
    BY_NAME,
    ENDPOINT,
    ERROR_CATALOG,
    ERROR_SET,
    META_FIELDS,
    NESTED_COMPUTED_FIELDS,
    SERVICE,
    Kind,
)
from apimctl.kinds.base import Context
from apimctl.kinds.endpoint import ERROR_SET_FIELD
from apimctl.kinds.error_set import MESSAGES
from apimctl.kinds.maintenance_event import endpoint_key

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


def _set_item(item: Any) -> Any:
    """Members of sets: names as given; ``{service, endpoint}`` pairs as ``service/endpoint``."""
    if isinstance(item, Mapping):
        if SERVICE.name in item and ENDPOINT.name in item:
            return endpoint_key(item)
        if "name" in item:
            return item["name"]
        if "address" in item:
            return item["address"]
    if isinstance(item, Mapping | list):
        return json.dumps(item, sort_keys=True)  # an odd member: compared by its content
    return item


def _as_set(value: Any) -> list[Any]:
    if value is None:
        return []
    items = [value] if isinstance(value, str | Mapping) else list(value)
    return sorted({_set_item(i) for i in items}, key=lambda v: (str(type(v)), v))


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

_SCALAR, _SECRET, _DATETIME, _SET, _KEYED, _OPAQUE, _NESTED, _ERROR_SET = range(8)


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
        self.plans: dict[str, list[tuple[str, str, int, bool]]] = {}

    def entry(self, prefix: str, name: str) -> tuple[str, str, int, bool] | None:
        """``(name, path, tag, left_alone)`` of a field, or ``None`` when it is not compared."""
        skip = self.top_skip if not prefix else _NESTED_SKIP
        path = self.path(prefix, name)
        if name in skip or path in self.kind.write_only:
            return None
        return (name, path, self.tag(path), path in self.kind.left_alone)

    def fields(self, prefix: str, defaults: Mapping[str, Any]) -> list[tuple[str, str, int, bool]]:
        """The entries of the defaulted fields at ``prefix`` (same keys for every call)."""
        found = self.plans.get(prefix)
        if found is None:
            names = list(defaults) + (list(self.top_extra) if not prefix else [])
            found = [e for n in names if (e := self.entry(prefix, n)) is not None]
            self.plans[prefix] = found
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
        if kind.name == ENDPOINT.name and path == ERROR_SET_FIELD:
            return _ERROR_SET
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
        out: dict[str, Any] = {}
        for name, path, tag, left_alone in self.c.fields(prefix, defaults):
            default = defaults.get(name)
            if name in doc:
                value = doc[name]
            elif left_alone:
                continue
            else:
                value = default
            out[name] = self._one(tag, path, value, default)
        for name in doc:
            if name in defaults or name in out:
                continue
            entry = self.c.entry(prefix, name)
            if entry is not None:
                out[name] = self._one(entry[2], entry[1], doc[name], None)
        return out

    def _one(self, tag: int, path: str, value: Any, default: Any) -> Any:
        if tag == _SCALAR:
            if value is None or default is None or type(value) is not type(default):
                return _fold_scalar(value, default)
            return value
        return self.value(tag, path, value)

    def value(self, tag: int, path: str, value: Any) -> Any:
        kind = self.kind
        if tag == _SECRET:
            return secret_hash(value) if isinstance(value, str) else value
        if tag == _DATETIME:
            return canonical_datetime(value)
        if tag == _SET:
            return _as_set(value)
        if tag == _KEYED:
            return self.keyed(path, value)
        if tag == _OPAQUE:
            return dict(value) if isinstance(value, Mapping) else ({} if value is None else value)
        if tag == _NESTED:
            if value is None and path in kind.nullable:
                return None
            if value is None:
                value = {}
            if isinstance(value, Mapping):
                return self.object(path, value, kind.nested[path])
            return value
        return self._error_set(value)

    def keyed(self, path: str, value: Any) -> dict[str, Any]:
        key_field = self.kind.keyed[path]
        defaults = self.kind.nested.get(path, {})
        items: dict[str, Any] = {}
        for item in [] if value is None else value:
            if isinstance(item, str):
                item = {key_field: item}
            if not isinstance(item, Mapping) or key_field not in item:
                continue
            key = str(item[key_field])
            body = {k: v for k, v in item.items() if k != key_field}
            item_defaults = self._item_defaults(path, key, defaults)
            items[key] = self.object(path, body, item_defaults)
        if self.kind.name == ERROR_SET.name and path == MESSAGES:
            for msg_id in ERROR_CATALOG:
                if msg_id not in items:
                    items[msg_id] = self.object(path, {}, self._item_defaults(path, msg_id, defaults))
        return dict(sorted(items.items()))

    def _item_defaults(self, path: str, key: str, defaults: Mapping[str, Any]) -> Mapping[str, Any]:
        if self.kind.name == ERROR_SET.name and path == MESSAGES and key in ERROR_CATALOG:
            return {**defaults, "status": ERROR_CATALOG[key][1]}
        return defaults

    def _error_set(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            value = value.get("name")
        if value in (None, ""):
            return self.ctx.default_error_set
        return value


def _defaults(kind: Kind, doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """The defaults ``doc`` is compared with. An OAuth endpoint has no API-key locations
    (SUPPLEMENT §4 forbids them with ``requestAuthenticationType: oauth``), so the platform
    stores ``[]`` rather than the usual ``["request-parameters"]``."""
    if kind.name == ENDPOINT.name and doc.get("requestAuthenticationType") == "oauth":
        return {**kind.defaults, "apiKeyValueLocations": []}
    return kind.defaults


def normalise(kind: Kind, doc: Mapping[str, Any], ctx: Context | None = None) -> dict[str, Any]:
    """The comparable form of ``doc`` (an object of ``kind`` in manifest shape).

    Child kinds (a service's ``endpoints`` and ``errorSets``, a package's ``plans``) are not
    part of the result: they are compared as objects of their own.
    """
    out = _Normaliser(kind, ctx or Context()).object("", doc, _defaults(kind, doc))
    if kind.fold_case and isinstance(out.get(kind.identity), str):
        out[kind.identity] = kind.identity_of(out[kind.identity])
    return out
