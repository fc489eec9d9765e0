"""Plans (``plans`` of a package): limits, entitlements to services, endpoints and methods, and role permissions."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from apimctl.kinds.base import (
    Kind,
    Lookups,
    Ops,
    Read,
    Reference,
    Resolver,
    SubResource,
    as_list,
    fingerprint,
    frozen,
    names_of,
)
from apimctl.kinds.endpoint import ENDPOINT, METHOD
from apimctl.kinds.role import ROLE, permissions
from apimctl.kinds.service import SERVICE

SERVICES = "services"
ROLES = "roles"

ENTITLED_ENDPOINT_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "undefinedMethodsAllowed": True, "methods": [],
})

PLAN_READ_FIELDS: tuple[str, ...] = (
    "id", "name", "created", "updated", "description", "eav", "selfServiceKeyProvisioningEnabled",
    "adminKeyProvisioningEnabled", "notes", "maxNumKeysAllowed", "numKeysBeforeReview",
    "qpsLimitCeiling", "qpsLimitExempt", "qpsLimitKeyOverrideAllowed", "rateLimitCeiling",
    "rateLimitExempt", "rateLimitKeyOverrideAllowed", "rateLimitPeriod",
    "responseFilterOverrideAllowed", "status", "emailTemplateSetId", "services", "roles",
)


def _entitled(raw: Any, lookups: Lookups) -> list[dict[str, Any]]:
    """Entitlements by name: services, their endpoints and the methods of those."""
    out = []
    for svc in as_list(raw):
        name = lookups.name(SERVICE.name, svc.get("id")) or svc.get("name")
        endpoints = []
        for ep in as_list(svc.get("endpoints")):
            found = lookups.key(ENDPOINT.name, ep.get("id"))
            endpoints.append({"name": found[-1] if found is not None else ep.get("name"),
                              "undefinedMethodsAllowed": ep.get("undefinedMethodsAllowed", True),
                              "methods": names_of(ep.get("methods"), lookups, METHOD)})
        out.append({"name": name, "endpoints": endpoints})
    return out


def entitlements(services: list[dict[str, Any]], refs: Resolver) -> list[dict[str, Any]]:
    """Entitlements by id: services, their endpoints and the methods of those."""
    out = []
    for svc in services:
        sname = svc["name"]
        eps = []
        for ep in svc.get("endpoints") or []:
            ep = {"name": ep} if isinstance(ep, str) else ep
            ekey = f"{sname}/{ep['name']}"
            methods = [{"id": refs.id(METHOD, f"{ekey}/{m if isinstance(m, str) else m['name']}")}
                       for m in ep.get("methods") or []]
            eps.append({"id": refs.id(ENDPOINT.name, ekey), "name": ep["name"],
                        "undefinedMethodsAllowed": ep.get("undefinedMethodsAllowed", True),
                        "methods": methods})
        out.append({"id": refs.id(SERVICE.name, sname), "name": sname, "endpoints": eps})
    return out


class PlanOps(Ops):
    """A plan's entitlements and role permissions are reconciled one by one."""

    collections: tuple[str, ...] = (SERVICES, ROLES)

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        doc = self.strip(raw)
        if SERVICES in doc:
            doc[SERVICES] = _entitled(doc[SERVICES], lookups)
        if ROLES in doc:
            doc[ROLES] = names_of(doc[ROLES], lookups, ROLE.name)
        return Read(doc, fingerprint(raw)[0])

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]:
        body = self.own_fields(desired)
        services = desired.get(SERVICES)
        if services is not None:
            body[SERVICES] = entitlements(services, refs)
        if desired.get(ROLES):
            body[ROLES] = permissions(desired[ROLES], refs)
        return body


PLAN: Kind = Kind(
    name="plan", manifest_key="plans", label="plan", path="/packages/{package}/plans", body="plan",
    parent="package",
    depends_on=("service", "endpoint", "role"),
    references=(Reference("services[].name", "service"),
                Reference("services[].endpoints[].name", "endpoint", within="services[].name",
                          unknown="unknown {label} '{key}'; declare it under the "
                                  "{parent_label}'s {manifest_key}"),
                Reference("roles[]", "role")),
    computed=frozenset({"id", "created", "updated", "status", "selfServiceKeyProvisioningEnabled"}),
    defaults=frozen({
        "description": "", "eav": {}, "adminKeyProvisioningEnabled": False, "notes": "",
        "maxNumKeysAllowed": 5, "numKeysBeforeReview": 1, "qpsLimitCeiling": 0,
        "qpsLimitExempt": False, "qpsLimitKeyOverrideAllowed": False, "rateLimitCeiling": 0,
        "rateLimitExempt": False, "rateLimitKeyOverrideAllowed": False, "rateLimitPeriod": "day",
        "responseFilterOverrideAllowed": False, "emailTemplateSetId": None,
    }),
    opaque=frozenset({"eav"}),
    keyed=frozen({"services": "name", "services.endpoints": "name"}),
    nested=frozen({"services": frozen({"endpoints": []}),
                    "services.endpoints": ENTITLED_ENDPOINT_DEFAULTS}),
    enum_arrays=frozenset({"services.endpoints.methods"}),
    sets=frozenset({"roles"}),
    left_alone=frozenset({"services", "roles"}),
    fields=PLAN_READ_FIELDS,
    sub_resources=frozen({
        "services": SubResource("services", None, "POST {id} entitles a service; DELETE removes"),
        "endpoints": SubResource("services/{service}/endpoints", None, "POST {id} / DELETE"),
        "methods": SubResource("services/{service}/endpoints/{endpoint}/methods", None,
                               "POST {id} / DELETE; only when undefinedMethodsAllowed is false"),
        "roles": SubResource("roles", "role", "role permissions {id: role id, action: register_keys}"),
    }),
    ops=PlanOps(lambda: PLAN),
)
