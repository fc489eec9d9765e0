"""Plans (``plans`` of a package): limits, entitlements to services, endpoints and methods, and role permissions."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from apimctl.kinds.base import Kind, Reference, frozen, join_key
from apimctl.kinds.endpoint import ENDPOINT, METHOD, METHODS
from apimctl.kinds.ops import Exported, Lookups, Ops, Read, Resolver, as_list, fingerprint, names_of
from apimctl.kinds.role import ROLE
from apimctl.kinds.service import SERVICE

SERVICES = "services"
ROLES = "roles"
ENDPOINTS = ENDPOINT.manifest_key

# the path of a change of a plan's entitlements (``services[Weather].endpoints[Forecast].methods``):
# the service, the endpoint, and the endpoint's field
ENTITLEMENT_PATH = re.compile(r"^services(?:\[(?P<svc>.+?)\](?:\.endpoints(?:\[(?P<ep>.+)\]"
                          r"(?:\.(?P<leaf>methods|undefinedMethodsAllowed))?)?)?)?$")

ENTITLED_ENDPOINT_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "undefinedMethodsAllowed": True, "methods": [],
})

PLAN_READ_FIELDS: tuple[str, ...] = (
    "id", "name", "created", "updated", "description", "eav", "selfServiceKeyProvisioningEnabled",
    "adminKeyProvisioningEnabled", "notes", "maxNumKeysAllowed", "numKeysBeforeReview",
    "qpsLimitCeiling", "qpsLimitExempt", "qpsLimitKeyOverrideAllowed", "rateLimitCeiling",
    "rateLimitExempt", "rateLimitKeyOverrideAllowed", "rateLimitPeriod",
    "responseFilterOverrideAllowed", "status", "emailTemplateSetId", "roles.id", "roles.name",
    # entitlements named down to the methods: where real deployments run, a plan service's
    # endpoints and a plan endpoint's methods come back only when named (SUPPLEMENT §10.6)
    "services.id", "services.name", "services.endpoints.id", "services.endpoints.name",
    "services.endpoints.undefinedMethodsAllowed", "services.endpoints.methods.id",
    "services.endpoints.methods.name",
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
    return _entitled_by_id(services, _OPS.resolved({SERVICES: services}, refs, None)[SERVICES],
                           refs)


def _entitled_by_id(services: list[dict[str, Any]], resolved: list[dict[str, Any]],
                    refs: Resolver) -> list[dict[str, Any]]:
    """``services`` (manifest shape) as a body: services and endpoints by the ids of
    ``resolved`` (the plan's references resolved), endpoints with their defaults, and the
    methods of those by id."""
    out = []
    for svc, by_id in zip(services, resolved, strict=True):
        skey = join_key(None, svc["name"])
        eps = []
        for ep, ep_by_id in zip(svc.get(ENDPOINTS) or [], by_id.get(ENDPOINTS) or [], strict=True):
            ep = {"name": ep} if isinstance(ep, str) else ep
            ekey = join_key(skey, ep["name"])
            methods = [{"id": refs.id(METHOD, join_key(ekey, m if isinstance(m, str) else m["name"]))}
                       for m in ep.get(METHODS) or []]
            eps.append({"id": ep_by_id["id"], "name": ep["name"],
                        "undefinedMethodsAllowed": ep.get("undefinedMethodsAllowed", True),
                        METHODS: methods})
        out.append({"id": by_id["id"], "name": svc["name"], ENDPOINTS: eps})
    return out


def _exported_entitlement(item: Mapping[str, Any]) -> dict[str, Any]:
    """A plan's entitled service, always with ``endpoints`` (omitted means "all declared"),
    and endpoints entitled with every method as plain names."""
    endpoints = []
    for ep in item.get(ENDPOINTS) or []:
        endpoints.append(ep["name"] if isinstance(ep, Mapping) and len(ep) == 1 else ep)
    return {"name": item["name"], ENDPOINTS: endpoints}


def entitlement_words(plan: str, path: str, before: Any, after: Any) -> str | None:
    """A change of the entitlements of the plan named ``plan`` in words (``Pro loses
    Ordering/Track order``); ``None`` where values read better."""
    match = ENTITLEMENT_PATH.match(path)
    if match is None or match["svc"] is None:
        return None
    service, endpoint, leaf = match["svc"], match["ep"], match["leaf"]
    where = f"{service}/{endpoint}" if endpoint else service
    if leaf == "undefinedMethodsAllowed":
        if after is False:
            return f"{plan} may call only the listed methods of {where}"
        return f"{plan} may call any method of {where}" if after is True else None
    if leaf == "methods":
        was, now = before or [], after or []
        gained, lost = [v for v in now if v not in was], [v for v in was if v not in now]
        parts = [f"loses {where} method{'s' if len(lost) > 1 else ''} {', '.join(map(str, lost))}"] if lost else []
        parts += [f"gains {where} method{'s' if len(gained) > 1 else ''} {', '.join(map(str, gained))}"] if gained else []
        return f"{plan} {'; '.join(parts)}" if parts else None
    if (endpoint is not None or path == f"{SERVICES}[{service}]") and (before is None) != (after is None):
        return f"{plan} {'loses' if after is None else 'gains'} {where}"
    return None


class PlanOps(Ops):
    """A plan's entitlements and role permissions are reconciled one by one."""

    collections: tuple[str, ...] = (SERVICES, ROLES)

    def tells(self, path: str) -> bool:
        """Entitlements are told in words."""
        return path.startswith(SERVICES)

    def change_words(self, name: str, path: str, before: Any, after: Any) -> str | None:
        return entitlement_words(name, path, before, after)

    def entitled(self, doc: Mapping[str, Any]) -> Mapping[str, frozenset[str]]:
        out: dict[str, set[str]] = {}
        for svc in doc.get(SERVICES) or []:
            eps = {str(e.get("name") if isinstance(e, Mapping) else e)
                   for e in svc.get(ENDPOINTS) or []}
            out.setdefault(str(svc.get("name")), set()).update(eps)
        return {k: frozenset(v) for k, v in out.items()}

    def entitlement(self, path: str) -> tuple[str, str | None, str | None] | None:
        match = ENTITLEMENT_PATH.match(path) if path.startswith(SERVICES) else None
        if match is None or match["svc"] is None:
            return None
        return match["svc"], match["ep"], match["leaf"]

    def export(self, entry: Exported) -> Any:
        doc = super().export(entry)
        if SERVICES in doc:
            doc[SERVICES] = [_exported_entitlement(s) for s in doc[SERVICES]]
        return doc

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
            body[SERVICES] = services
        if desired.get(ROLES):
            body[ROLES] = list(desired[ROLES])
        body = self.resolved(body, refs, parent)
        if services is not None:
            body[SERVICES] = _entitled_by_id(services, body[SERVICES], refs)
        return body


_OPS = PlanOps(lambda: PLAN)

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
    # a ceiling of null is no limit, as 0 is (SUPPLEMENT §10.10.3, §11 step 6)
    unset=frozen({"qpsLimitCeiling": (None,), "rateLimitCeiling": (None,)}),
    keyed=frozen({"services": "name", "services.endpoints": "name"}),
    nested=frozen({"services": frozen({"endpoints": []}),
                    "services.endpoints": ENTITLED_ENDPOINT_DEFAULTS}),
    enum_arrays=frozenset({"services.endpoints.methods"}),
    sets=frozenset({"roles"}),
    left_alone=frozenset({"services", "roles"}),
    fields=PLAN_READ_FIELDS,
    export_first=("description",),
    risky=frozenset({"rateLimitCeiling", "rateLimitPeriod", "qpsLimitCeiling", "maxNumKeysAllowed",
                     "numKeysBeforeReview"}),
    risky_suffixes=("Exempt", "OverrideAllowed"),
    ops=_OPS,
)
