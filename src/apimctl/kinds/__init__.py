"""The one registry of object kinds the reconciler manages.

Every other stage derives what it needs from the :data:`KINDS` entries here: ``live`` reads
each top-level collection with the ``fields`` projection declared below, ``normalise`` fills
in the defaults and folds the quirks listed here, ``diff`` knows which nested lists are keyed
collections, ``planner`` orders steps by ``parent`` and ``depends_on``, ``apply`` finds the API
paths and body parameter names, ``render`` and ``export`` the manifest keys. Adding a kind means
adding its module here, its entry in :data:`KINDS`, its schema and the server catalog
(see ``docs/architecture.md``).

Kinds, in the order creates run (deletes run in reverse): ``domain``, ``organization`` and
``emailTemplateSet`` (read only: never written), ``role``, ``service``,
``errorSet`` (in a service), ``endpoint`` (in a service), ``package``, ``plan`` (in a package),
``maintenanceEvent``.

Object keys (``--target KIND:NAME``, plan addresses, ``settings.ignore``) are the identity
value for top-level kinds and ``parent/name`` for nested ones: ``service:Weather``,
``endpoint:Weather/Forecast``, ``plan:Weather Partners/Gold``, ``domain:example.com``. Inside a
name, ``/`` is written ``\\/`` and ``\\`` is written ``\\\\`` (:func:`escape_name`), so
``endpoint:a\\/b/Same`` (service ``a/b``) and ``endpoint:a/b\\/Same`` (service ``a``) differ.

Modelling: nested singletons (``cors``, ``cache``, ``processor``, ``systemDomainAuthentication``,
a service's ``cache`` and ``securityProfile``) and nested lists without an identity of their own
at the API level of this tool (error messages keyed by ``id``, methods and their response filters
keyed by ``name``, plan entitlements, role permissions, maintenance-event endpoints) are *fields*
of their owner: they produce field-level changes such as ``cors.maxAge`` or
``errorMessages[ERR_403_DEVELOPER_OVER_QPS].status``. Endpoints, error sets and plans are child
kinds with steps of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from apimctl import platform
from apimctl.kinds.base import (
    Callers,
    Compare,
    Export,
    Kind,
    Reference,
    Write,
    escape_name,
    join_key,
    split_first,
    unescape_name,
)
from apimctl.kinds.domain import DOMAIN
from apimctl.kinds.email_template_set import EMAIL_TEMPLATE_SET
from apimctl.kinds.endpoint import (
    CORS_DEFAULTS,
    ENDPOINT,
    ENDPOINT_CACHE_DEFAULTS,
    METHOD_DEFAULTS,
    PROCESSOR_DEFAULTS,
    RESPONSE_FILTER_DEFAULTS,
    SYSTEM_DOMAIN_AUTH_DEFAULTS,
)
from apimctl.kinds.error_set import ERROR_MESSAGE_FIELDS, ERROR_SET
from apimctl.kinds.maintenance_event import MAINTENANCE_EVENT
from apimctl.kinds.ops import NESTED_COMPUTED_FIELDS
from apimctl.kinds.organization import ORGANIZATION
from apimctl.kinds.package import PACKAGE
from apimctl.kinds.plan import ENTITLED_ENDPOINT_DEFAULTS, PLAN
from apimctl.kinds.role import ROLE
from apimctl.kinds.roles import ROLES, Roles
from apimctl.kinds.service import OAUTH_DEFAULTS, SERVICE

# the error message catalog (SUPPLEMENT §5)
ERROR_CATALOG = platform.ERROR_CATALOG

# the roles one kind alone holds (the lease's kind, the probe, the kind keys are issued for...)
# are :data:`ROLES`, in :mod:`apimctl.kinds.roles`
KINDS: tuple[Kind, ...] = (
    DOMAIN, ORGANIZATION, EMAIL_TEMPLATE_SET, ROLE, SERVICE, ERROR_SET, ENDPOINT, PACKAGE, PLAN,
    MAINTENANCE_EVENT,
)
BY_NAME: Mapping[str, Kind] = MappingProxyType({k.name: k for k in KINDS})
TOP_LEVEL: tuple[Kind, ...] = tuple(k for k in KINDS if k.top_level)
ORDER: Mapping[str, int] = MappingProxyType({k.name: i for i, k in enumerate(KINDS)})
_CHILDREN: Mapping[str, tuple[Kind, ...]] = MappingProxyType(
    {k.name: tuple(BY_NAME[c] for c in k.children) for k in KINDS})

C = TypeVar("C")
# (kind name, capability) -> the kind's operations as having it, or None: asked per object by
# some stages, answered once per kind
_CAPABLE: dict[tuple[str, type], Any] = {}
_UNKNOWN: Any = object()
_HAVING: dict[type, tuple[Kind, ...]] = {}

# Fields every pinnable kind's manifest entry may carry that are not object fields.
META_FIELDS: frozenset[str] = frozenset({"id", "previousNames"})


def get(name: str) -> Kind:
    """The kind called ``name``; ``KeyError`` lists the known kinds."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown kind {name!r}; known: {', '.join(BY_NAME)}") from None


def children_of(kind: Kind) -> tuple[Kind, ...]:
    """The child kinds nested in ``kind`` (endpoints and error sets of a service, ...)."""
    if BY_NAME.get(kind.name) is kind:
        return _CHILDREN[kind.name]  # asked for each object read: made once per kind
    return tuple(BY_NAME[c] for c in kind.children)


def capability(kind: Kind, protocol: type[C]) -> C | None:
    """``kind``'s operations, when they have the capability ``protocol`` (of
    :mod:`apimctl.kinds.capabilities`, ``Routed``...); ``None`` otherwise. Answered once per
    kind of the registry."""
    if BY_NAME.get(kind.name) is not kind:  # an entry outside the registry: asked directly
        return kind.ops if isinstance(kind.ops, protocol) else None
    key = (kind.name, protocol)
    found: C | None = _CAPABLE.get(key, _UNKNOWN)
    if found is _UNKNOWN:
        found = _CAPABLE[key] = kind.ops if isinstance(kind.ops, protocol) else None
    return found


def having(protocol: type) -> tuple[Kind, ...]:
    """The kinds whose operations have the capability ``protocol``, in the order of
    :data:`KINDS`."""
    found = _HAVING.get(protocol)
    if found is None:
        found = _HAVING[protocol] = tuple(k for k in KINDS if isinstance(k.ops, protocol))
    return found


def by_manifest_key(key: str) -> Kind | None:
    """The top-level kind whose manifest key is ``key`` (``services`` -> service)."""
    return next((k for k in TOP_LEVEL if k.manifest_key == key), None)


def split_key(kind: Kind, key: str) -> tuple[str | None, str]:
    """``("Weather", "Forecast")`` for ``endpoint`` key ``Weather/Forecast``: the parent's key
    (still escaped) and the object's own name (unescaped).

    The first unescaped ``/`` separates the parent; a ``/`` inside a name is written ``\\/``
    and a ``\\`` as ``\\\\`` (``endpoint`` key ``a\\/b/c\\/d``: service ``a/b``, endpoint ``c/d``).
    """
    if kind.parent is None:
        return None, unescape_name(key)
    parent, name = split_first(key)
    if parent is None:
        raise ValueError(f"{kind.name} key {key!r} must be PARENT/NAME")
    return parent, unescape_name(name)


__all__ = [
    "BY_NAME",
    "CORS_DEFAULTS",
    "DOMAIN",
    "EMAIL_TEMPLATE_SET",
    "ENDPOINT",
    "ENDPOINT_CACHE_DEFAULTS",
    "ENTITLED_ENDPOINT_DEFAULTS",
    "ERROR_CATALOG",
    "ERROR_MESSAGE_FIELDS",
    "ERROR_SET",
    "KINDS",
    "MAINTENANCE_EVENT",
    "META_FIELDS",
    "METHOD_DEFAULTS",
    "NESTED_COMPUTED_FIELDS",
    "OAUTH_DEFAULTS",
    "ORDER",
    "ORGANIZATION",
    "PACKAGE",
    "PLAN",
    "PROCESSOR_DEFAULTS",
    "RESPONSE_FILTER_DEFAULTS",
    "ROLE",
    "ROLES",
    "SERVICE",
    "SYSTEM_DOMAIN_AUTH_DEFAULTS",
    "TOP_LEVEL",
    "Callers",
    "Compare",
    "Export",
    "Kind",
    "Reference",
    "Roles",
    "Write",
    "by_manifest_key",
    "capability",
    "children_of",
    "escape_name",
    "get",
    "having",
    "join_key",
    "split_first",
    "split_key",
    "unescape_name",
]
