"""The server's defaults (SUPPLEMENT §3, in its catalog) agree with the reconciler's.

The reference server and the reconciler each keep their own table of defaults, on purpose:
the server's independent copy is what lets it catch a reconciler that assumes a wrong
default. This test compares them: for every kind of :data:`apimctl.kinds.KINDS`, every
top-level default (``Kind.defaults``) and every default of a nested singleton or list item
(``Kind.nested``, by dotted path) must equal the server catalog's default of the same field,
or be listed in :data:`DIFFERENT_ON_PURPOSE` with the reason.

Representation: the reconciler's defaults are in manifest shape, the server's in stored
shape. A reference is a name in a manifest and ``{id, name}`` on the server; a domain list
holds host names in a manifest and ``{address}`` objects on the server. :func:`manifest_shape`
turns a server value into manifest shape for those fields (their defaults are ``null`` and
``[]`` on both sides today, so the translation only matters for a future non-empty default).
Keyed lists (methods by name, messages by id, plan entitlements by name) are ``[]`` by default
on both sides; the items' defaults are compared field by field. Kinds and their attributes are
read at test time, so the reconciler may move its modules around freely.
"""

from __future__ import annotations

from typing import Any

import pytest

from apimctl import kinds
from apimctl.server import catalog
from apimctl.server.fields import MANY, REF, Field, Resource

# reconciler kind -> the server resource of its objects
RESOURCES = {
    "domain": "DomainWhitelist",
    "role": "Role",
    "service": "Service",
    "errorSet": "ErrorSet",
    "endpoint": "Endpoint",
    "package": "Package",
    "plan": "Plan",
    "maintenanceEvent": "ScheduledMaintenanceEvent",
    "organization": "Organization",
    "emailTemplateSet": "EmailTemplateSet",
}

# (kind, dotted field path) -> why the server's default differs from the reconciler's
DIFFERENT_ON_PURPOSE = {
    ("endpoint", "systemDomainAuthentication.type"): (
        "the server has no default: `type` is required when the singleton is created "
        "(SUPPLEMENT §2 names it the kind of authentication; the manifest schema requires it "
        "too), so the reconciler always sends one; its `httpBasic` only fills in a live object "
        "read without a type (normalise, export)"
    ),
}

# module constants of apimctl.kinds -> (kind, nested path) they are the defaults of
CONSTANTS = {
    "CORS_DEFAULTS": ("endpoint", "cors"),
    "ENDPOINT_CACHE_DEFAULTS": ("endpoint", "cache"),
    "PROCESSOR_DEFAULTS": ("endpoint", "processor"),
    "SYSTEM_DOMAIN_AUTH_DEFAULTS": ("endpoint", "systemDomainAuthentication"),
    "METHOD_DEFAULTS": ("endpoint", "methods"),
    "RESPONSE_FILTER_DEFAULTS": ("endpoint", "methods.responseFilters"),
    "OAUTH_DEFAULTS": ("service", "securityProfile.oauth"),
    "ENTITLED_ENDPOINT_DEFAULTS": ("plan", "services.endpoints"),
}

NO_FIELD = "<no such field on the server>"


def manifest_shape(f: Field, value: Any) -> Any:
    """A server value of field ``f`` in the reconciler's manifest shape."""
    if f.type == REF:
        return value.get("name") if isinstance(value, dict) else value
    if f.type == MANY and f.nested == "Domain" and isinstance(value, list):
        return [d.get("address") if isinstance(d, dict) else d for d in value]
    return value


def server_resource(kind_name: str, path: str = "") -> Resource:
    """The server resource of a reconciler kind, or of a nested path inside it."""
    res = catalog.resource(RESOURCES[kind_name])
    for segment in [s for s in path.split(".") if s]:
        res = res.nested(res.by_name[segment])
    return res


def server_default(res: Resource, name: str) -> Any:
    f = res.by_name.get(name)
    return NO_FIELD if f is None else manifest_shape(f, f.default_value())


def disagreements(kind_name: str, path: str, defaults: Any) -> list[str]:
    """Every field of ``defaults`` whose server default differs (and is not listed)."""
    res = server_resource(kind_name, path)
    out = []
    for name, expected in defaults.items():
        dotted = f"{path}.{name}" if path else name
        got = server_default(res, name)
        if got != expected and (kind_name, dotted) not in DIFFERENT_ON_PURPOSE:
            out.append(f"{kind_name} {dotted}: reconciler {expected!r}, server ({res.name}) {got!r}")
    return out


def test_every_reconciler_kind_has_a_server_resource() -> None:
    names = [k.name for k in kinds.KINDS]
    assert set(names) <= set(RESOURCES), f"map these kinds to server resources: {set(names) - set(RESOURCES)}"
    for name in names:
        assert kinds.get(name).name == name
        assert RESOURCES[name] in catalog.CATALOG


def test_top_level_defaults_agree() -> None:
    problems = [p for k in kinds.KINDS for p in disagreements(k.name, "", k.defaults)]
    assert problems == [], "\n".join(problems)


def test_nested_defaults_agree() -> None:
    problems = [p for k in kinds.KINDS for path, defaults in k.nested.items()
                for p in disagreements(k.name, path, defaults)]
    assert problems == [], "\n".join(problems)


def test_nullable_nested_objects_default_to_null_on_the_server() -> None:
    for k in kinds.KINDS:
        for path in k.compare.nullable:
            *head, last = path.split(".")
            res = server_resource(k.name, ".".join(head))
            f = res.by_name[last]
            assert f.nullable and f.default_value() is None, (k.name, path)


@pytest.mark.parametrize("constant", sorted(CONSTANTS))
def test_module_constants_agree(constant: str) -> None:
    defaults = getattr(kinds, constant, None)
    if defaults is None:
        pytest.skip(f"apimctl.kinds no longer exports {constant} (the nested defaults are still compared)")
    kind_name, path = CONSTANTS[constant]
    problems = disagreements(kind_name, path, defaults)
    assert problems == [], "\n".join(problems)


def test_differences_on_purpose_still_differ() -> None:
    """A listed difference that no longer exists must leave the list."""
    for (kind_name, dotted), reason in DIFFERENT_ON_PURPOSE.items():
        kind = kinds.get(kind_name)
        path, _, name = dotted.rpartition(".")
        declared = kind.nested[path] if path else kind.defaults
        assert name in declared, (kind_name, dotted)
        got = server_default(server_resource(kind_name, path), name)
        assert got != NO_FIELD and got != declared[name], f"{kind_name} {dotted} agrees now: {reason}"
