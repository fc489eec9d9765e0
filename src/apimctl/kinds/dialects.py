"""The reconciler's one table of the platform's dialects (spec/SUPPLEMENT.md §10).

The platform exists as its specification describes it (``spec``) and as real deployments
behave (``mashery``). Everything the reconciler does differently for one or the other is a
value of :class:`Dialect` here, and every stage asks this table, never a dialect's name:

- error-code headers the client reads (both are always understood, §6 and §10.1);
- enum vocabularies (§10.2): manifests may use either spelling; both sides of a comparison
  and every write are in the target's (:func:`translate`);
- defaults that differ (§10.5): a new endpoint's ``returnedHeaders``, the ``detailHeader`` of
  an error set's messages (:func:`comparable`, :func:`message_default`, :func:`field_default`);
- plan entitlements (§10.6): read with explicit nested ``fields``, written with an explicit
  endpoint list;
- role permissions (§10.7): item by item, or the whole collection with a required ``action``;
- fields of real deployments apimctl does not manage (§10.8): carried through writes
  untouched and never compared unless the manifest names them (:data:`UNMANAGED`).

This module is pure data and functions on manifest-shaped mappings; it knows nothing of the
reference server (which keeps its own table in ``apimctl.server.dialects``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from apimctl import platform
from apimctl.platform import (
    FORWARDED_HEADERS,
    GRANT_TYPES,
    MASHERY_MESSAGE_DETAILS,
    MASHERY_RETURNED_HEADERS,
    RETURNED_HEADERS,
    Vocabulary,
)

SPEC_NAME = platform.SPEC_NAME
MASHERY_NAME = platform.MASHERY_NAME
AUTO = "auto"
CHOICES: tuple[str, ...] = (SPEC_NAME, MASHERY_NAME, AUTO)

# the error-code headers of both dialects: the client reads either, whatever the target
ERROR_CODE_HEADERS: tuple[str, ...] = ("X-Svc-Error-Code", "X-Mashery-Error-Code")
# headers only a ``mashery`` target sends (auto-detection, §10.1)
MASHERY_HEADER_PREFIX = "x-mashery-"
MASHERY_HOST_SUFFIX = "mashery.com"
# the kind whose live objects tell the dialect by their values: every endpoint of a
# ``mashery`` area returns ``mashery-responder`` unless told not to (auto-detection, §10.1)
TELLING_KIND = "endpoint"
# the kind read by the probe of an area whose replies have not told: one object of it that
# does not exist, a 404 in both dialects
PROBE_KIND = "service"


def _frozen(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


# --- vocabularies (§10.2): per kind, per field path, the values in each dialect, same order --

VOCABULARIES: Mapping[str, Mapping[str, Vocabulary]] = _frozen({
    "endpoint": _frozen({
        "forwardedHeaders": FORWARDED_HEADERS,
        "returnedHeaders": RETURNED_HEADERS,
        "oauthGrantTypes": GRANT_TYPES,
    }),
    "service": _frozen({"securityProfile.oauth.grantTypes": GRANT_TYPES}),
})

# --- fields of real deployments apimctl does not manage (§10.8), per kind, by dotted path ----

UNMANAGED: Mapping[str, tuple[str, ...]] = _frozen({
    "endpoint": ("inboundMsslRequired", "userControlledErrorLocation",
                 "userControlledErrorLocationKey", "rateLimitHeadersEnabled"),
    "service": ("organization", "securityProfile.oauth.masheryTokenApiEnabled",
                "securityProfile.oauth.enableRefreshTokenTtl",
                "securityProfile.oauth.forceOauthRedirectUrl", "securityProfile.oauth.macAlgorithm"),
    "package": ("organization",),
})
# the read projection of endpoints names these too (ignored by a ``spec`` target, §1)
ENDPOINT_EXTRA_READ_FIELDS: tuple[str, ...] = UNMANAGED["endpoint"]



@dataclass(frozen=True)
class Dialect:
    """How one dialect of the management API differs. The defaults are ``spec``."""

    name: str
    # defaults that differ from SUPPLEMENT §3, per kind, per top-level field (manifest shape)
    defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: _frozen({}))
    # an error message's default ``detailHeader`` by message id (absent: "")
    message_details: Mapping[str, str] = field(default_factory=lambda: _frozen({}))
    # role permissions are written as one collection (PUT {"roles": [...]}, DELETE to clear)
    roles_as_collection: bool = False
    # a role permission must carry its action
    role_action_required: bool = False
    # the fields of §10.8 exist (and are read); elsewhere they are dropped from writes
    has_extra_fields: bool = False
    # routes are unique by (HTTP method, public domain, path): endpoints may share a path on a
    # domain when their methods differ (§10.10.1); elsewhere by (public domain, path) (§4)
    routes_by_method: bool = False
    # references written as a bare id (``Reference.id_field``) typed as an integer, by kind
    # name and field (§4: elsewhere a string, as real deployments have it, a UUID)
    integer_ids: frozenset[tuple[str, str]] = frozenset()

    def vocabulary(self, kind: str, path: str) -> tuple[str, ...]:
        return VOCABULARIES.get(kind, {}).get(path, {}).get(self.name, ())

    def detail_header(self, message_id: str) -> str:
        """The default ``detailHeader`` of a catalog message in this dialect (§10.5)."""
        return self.message_details.get(message_id, "")


SPEC = Dialect(SPEC_NAME, integer_ids=frozenset({("plan", "emailTemplateSetId")}))
MASHERY = Dialect(
    MASHERY_NAME,
    defaults=_frozen({"endpoint": _frozen({"returnedHeaders": MASHERY_RETURNED_HEADERS})}),
    message_details=MASHERY_MESSAGE_DETAILS,
    roles_as_collection=True,
    role_action_required=True,
    has_extra_fields=True,
    routes_by_method=True,
)
DIALECTS: Mapping[str, Dialect] = _frozen({d.name: d for d in (SPEC, MASHERY)})
ROLE_ACTIONS: Mapping[str, str] = _frozen({"service": "read", "plan": "register_keys"})


def validated_routes_by_method(settings: Mapping[str, Any]) -> bool:
    """The route rule ``validate`` holds declared endpoints to, offline: unique by HTTP
    method, public domain and path, as every dialect keeps them (§10.10.1); or by public
    domain and path alone (§4), stricter, when the manifests say the target is of the ``spec``
    dialect. A target whose rule is the one held, or a looser one, cannot refuse them."""
    return settings.get("dialect") != SPEC_NAME


def dialect_of(name: str | None) -> Dialect:
    """The dialect called ``name``; ``spec`` for ``None``/empty (plans made before dialects)."""
    if not name:
        return SPEC
    try:
        return DIALECTS[name]
    except KeyError:
        raise ValueError(f"unknown dialect {name!r}; choose one of {', '.join(CHOICES)}") from None


# --- translation ------------------------------------------------------------------------------


_NO_TRANSLATION: Mapping[str, str] = _frozen({})


def _translation(kind: str, path: str, dialect: Dialect) -> Mapping[str, str]:
    """Every spelling of the field's values (in any dialect) -> the dialect's spelling."""
    return _translations(dialect.name).get((kind, path), _NO_TRANSLATION)


@functools.cache
def _translations(dialect: str) -> Mapping[tuple[str, str], Mapping[str, str]]:
    """:func:`_translation` of every field with a vocabulary, into the dialect named
    ``dialect`` (computed once per dialect: the vocabularies are constants)."""
    out: dict[tuple[str, str], Mapping[str, str]] = {}
    for kind, paths in VOCABULARIES.items():
        for path, vocab in paths.items():
            target = vocab.get(dialect, ())
            out[(kind, path)] = {value: target[i] for spellings in vocab.values()
                                 for i, value in enumerate(spellings) if i < len(target)}
    return out


def translate_value(kind: str, path: str, value: Any, dialect: Dialect) -> Any:
    """An enum value (or list of them) of ``kind``'s field ``path`` in the dialect's spelling."""
    table = _translation(kind, path, dialect)
    if not table:
        return value
    if isinstance(value, str):
        return table.get(value, value)
    if isinstance(value, list | tuple):
        return [table.get(v, v) if isinstance(v, str) else v for v in value]
    return value


def _at(doc: Any, parts: list[str]) -> tuple[Any, str] | None:
    if len(parts) == 1:  # a top-level field (most of them)
        return (doc, parts[0]) if isinstance(doc, dict) and parts[0] in doc else None
    for part in parts[:-1]:
        doc = doc.get(part) if isinstance(doc, Mapping) else None
    if isinstance(doc, dict) and parts[-1] in doc:
        return doc, parts[-1]
    return None


@functools.cache
def translated_heads(kind: str) -> frozenset[str]:
    """The top-level fields holding the fields :func:`translate` may change (a document
    with none of them is the same in every dialect)."""
    return frozenset(p.split(".")[0] for p in (*VOCABULARIES.get(kind, {}), *UNMANAGED.get(kind, ())))


def translate(kind: str, doc: dict[str, Any], dialect: Dialect) -> list[str]:
    """Bring ``doc`` (manifest shape, changed in place) into the dialect's vocabulary; without
    the fields of §10.8 when the dialect has none. Returns the paths of the fields dropped."""
    vocabulary, unmanaged = _comparing(kind)
    for path, parts in vocabulary:
        found = _at(doc, parts)
        if found is not None:
            holder, name = found
            holder[name] = translate_value(kind, path, holder[name], dialect)
    dropped: list[str] = []
    if not dialect.has_extra_fields:
        for parts in unmanaged:
            found = _at(doc, parts)
            if found is not None:
                del found[0][found[1]]
                dropped.append(".".join(parts))
    return dropped


# --- comparing --------------------------------------------------------------------------------


def field_default(kind: str, name: str, dialect: Dialect) -> Any:
    """The dialect's own default of a top-level field (``None``: the kind's default applies)."""
    value = dialect.defaults.get(kind, {}).get(name)
    return list(value) if isinstance(value, tuple) else value


def message_default(message_id: str, status: str, dialect: Dialect) -> dict[str, str]:
    """An error message as the dialect creates it (§5, §10.5)."""
    return {"status": status, "detailHeader": dialect.detail_header(message_id), "responseBody": ""}


def _nested_named(doc: Any, parts: list[str]) -> bool:
    for part in parts:
        if not (type(doc) is dict or isinstance(doc, Mapping)) or part not in doc:  # dict: told first
            return False
        doc = doc[part]
    return True


def _drop(doc: Any, parts: list[str]) -> None:
    for part in parts[:-1]:
        doc = doc.get(part) if isinstance(doc, dict) else None
    if isinstance(doc, dict):
        doc.pop(parts[-1], None)


def without_unmanaged(kind: str, normal: dict[str, Any]) -> None:
    """A live normal form without the fields of §10.8 (in place), as :func:`comparable`
    leaves them out when the manifest does not name them. Nested values may be shared by
    other forms: the dicts on the way to a nested field are copied, not changed."""
    for parts in _comparing(kind)[1]:
        if not _nested_named(normal, parts):
            continue
        holder = normal
        for part in parts[:-1]:
            holder[part] = dict(holder[part])
            holder = holder[part]
        del holder[parts[-1]]


def comparable(kind: str, have: dict[str, Any] | None, want: dict[str, Any],
               desired: Mapping[str, Any], dialect: Dialect) -> None:
    """Adjust the normal forms of a comparison (in place) to the target's dialect.

    ``want`` is the normal form of ``desired`` (the manifest's object), ``have`` the live
    one's. Enum values are in the dialect's spelling on both sides; fields the manifest does
    not write compare with the dialect's defaults (an endpoint's ``returnedHeaders``, every
    error message's ``detailHeader``); the fields of §10.8 the manifest does not name are not
    compared."""
    vocabulary, unmanaged = _comparing(kind)
    for path, parts in vocabulary:
        for side in (have, want):
            found = _at(side, parts) if side is not None else None
            if found is not None and isinstance(found[0][found[1]], list) and found[0][found[1]]:
                found[0][found[1]] = sorted({*translate_value(kind, path, found[0][found[1]], dialect)})
    for name, value in dialect.defaults.get(kind, {}).items():
        if name not in desired and name in want:
            want[name] = sorted(value) if isinstance(value, tuple) else value
    if dialect.message_details and kind == "errorSet":
        _message_defaults(want, desired, dialect)
    for parts in unmanaged:
        if len(parts) == 1:  # a top-level field (most of them)
            if parts[0] not in desired:
                want.pop(parts[0], None)
                if have is not None:
                    have.pop(parts[0], None)
        elif not _nested_named(desired, parts):
            _drop(want, parts)
            if have is not None:
                _drop(have, parts)


@functools.cache
def _comparing(kind: str) -> tuple[tuple[tuple[str, list[str]], ...], tuple[list[str], ...]]:
    """The vocabulary paths (with their parts) and the parts of the unmanaged paths of a kind."""
    return (tuple((path, path.split(".")) for path in VOCABULARIES.get(kind, {})),
            tuple(path.split(".") for path in UNMANAGED.get(kind, ())))


def _message_defaults(want: dict[str, Any], desired: Mapping[str, Any], dialect: Dialect) -> None:
    messages = want.get("errorMessages")
    if not isinstance(messages, dict):
        return
    written = {str(m.get("id")): m for m in desired.get("errorMessages") or [] if isinstance(m, Mapping)}
    for mid, message in messages.items():
        if isinstance(message, dict) and "detailHeader" not in written.get(mid, {}):
            message["detailHeader"] = dialect.detail_header(mid)


def mashery_values(kind: str, doc: Mapping[str, Any]) -> bool:
    """Whether a live object (manifest shape) holds values spelled the ``mashery`` way."""
    for name, only in _mashery_only(kind):
        value = doc.get(name)
        if isinstance(value, str):
            if value in only:
                return True
        elif isinstance(value, list) and value and any(v in only for v in value if type(v) is str):
            return True
    return False


@functools.cache
def _mashery_only(kind: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The top-level vocabulary fields of a kind, each with the values only ``mashery`` spells."""
    return tuple((path, frozenset(vocab[MASHERY_NAME]) - frozenset(vocab[SPEC_NAME]))
                 for path, vocab in VOCABULARIES.get(kind, {}).items() if "." not in path)


def exported_messages(fields: dict[str, Any], live: Mapping[str, Any], dialect: Dialect) -> None:
    """Export's ``errorMessages`` of an error set (in place) against the dialect's defaults:
    a ``detailHeader`` at the dialect's default is left out, one blanked where the default is
    not empty is written (``""``); messages left with nothing but their id are dropped."""
    if not dialect.message_details:
        return
    messages = live.get("errorMessages")
    if not isinstance(messages, Mapping):
        return
    by_id = {str(m.get("id")): m for m in fields.get("errorMessages") or [] if isinstance(m, dict)}
    for mid, message in messages.items():
        have = message.get("detailHeader", "") if isinstance(message, Mapping) else ""
        default = dialect.detail_header(mid)
        item = by_id.get(mid)
        if have == default and item is not None:
            item.pop("detailHeader", None)
        elif have != default and have == "":
            if item is None:
                item = by_id[mid] = {"id": mid}
            item["detailHeader"] = ""
    kept = [m for m in by_id.values() if set(m) - {"id"}]
    if kept:
        fields["errorMessages"] = kept
    else:
        fields.pop("errorMessages", None)
