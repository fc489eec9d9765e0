"""Plans (``plans`` of a package): limits, entitlements to services, endpoints and methods, and role permissions."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from apimctl.kinds.base import Callers, Compare, Export, Kind, Reference, frozen, join_key
from apimctl.kinds.capabilities import (
    Granting,
    KeyRule,
    KeyRules,
    Limit,
    Shorthands,
    ToldInWords,
)
from apimctl.kinds.email_template_set import EMAIL_TEMPLATE_SET
from apimctl.kinds.endpoint import ENDPOINT, METHOD, METHODS
from apimctl.kinds.findings import Declaration, Declarations, Finding, identity, strings
from apimctl.kinds.nested_writes import Entitlements, NestedWrite, fields_under
from apimctl.kinds.ops import (
    Exported,
    Lookups,
    Ops,
    Read,
    Resolver,
    as_list,
    fingerprint,
    names_of,
)
from apimctl.kinds.protocol import Holdings, Names
from apimctl.kinds.references.paths import Ref, refs_of
from apimctl.kinds.role import ROLE, permissions, role_permissions
from apimctl.kinds.service import SERVICE
from apimctl.kinds.words import listed

SERVICES = "services"
ROLES = "roles"
# what a role a plan names may do with it (its permission's action, SUPPLEMENT §10.7)
ROLE_ACTION = "register_keys"
# the email template set of the plan's notices: by name in manifests, by id in the API
TEMPLATE_SET = "emailTemplateSet"
TEMPLATE_SET_ID = "emailTemplateSetId"
ENDPOINTS = ENDPOINT.manifest_key
METHOD_NAME = "name"  # the identity of an endpoint's methods

# the path of a change of a plan's entitlements (``services[Weather].endpoints[Forecast].methods``):
# the service, the endpoint, and the endpoint's field
ENTITLEMENT_PATH = re.compile(r"^services(?:\[(?P<svc>.+?)\](?:\.endpoints(?:\[(?P<ep>.+)\]"
                          r"(?:\.(?P<leaf>methods|undefinedMethodsAllowed))?)?)?)?$")

ENTITLED_ENDPOINT_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "undefinedMethodsAllowed": True, "methods": [],
})

# What a change of a plan's fields does to its keys (caller impact, ``KeyRules``): its rate
# limit, counted over its period, and its QPS limit, each with a ceiling (0 or none is no
# limit, SUPPLEMENT §11), a flag exempting the keys and one letting a key keep a higher
# ceiling of its own (otherwise the platform clamps it); the number of keys a member may hold;
# its status.
RATE_PERIOD = "rateLimitPeriod"
RATE_LIMIT = Limit("rateLimit", "rate", ceiling="rateLimitCeiling", exempt="rateLimitExempt",
                   override="rateLimitKeyOverrideAllowed", period=RATE_PERIOD, per="day",
                   periods=("second", "minute", "hour", "day", "week", "month"))
QPS_LIMIT = Limit("qpsLimit", "QPS", ceiling="qpsLimitCeiling", exempt="qpsLimitExempt",
                  override="qpsLimitKeyOverrideAllowed")
KEY_RULES: Mapping[str, KeyRule] = frozen({
    RATE_LIMIT.ceiling: KeyRule("ceiling", RATE_LIMIT), QPS_LIMIT.ceiling: KeyRule("ceiling", QPS_LIMIT),
    RATE_LIMIT.exempt: KeyRule("exempt", RATE_LIMIT), QPS_LIMIT.exempt: KeyRule("exempt", QPS_LIMIT),
    RATE_LIMIT.override: KeyRule("override", RATE_LIMIT),
    QPS_LIMIT.override: KeyRule("override", QPS_LIMIT),
    RATE_PERIOD: KeyRule("period", RATE_LIMIT),
    "maxNumKeysAllowed": KeyRule("allowance"),
    "status": KeyRule("stops", value="inactive"),
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


def _entitled_methods(plans: Iterator[tuple[Declaration, Ref, dict[str, Any]]],
                      endpoints: Mapping[tuple[str, str], Mapping[str, Any]]) -> Iterator[Finding]:
    """Methods a plan entitles must be methods of the endpoint, when the endpoint lists them
    (an omitted list is left alone on the live side: its names cannot be checked offline)."""
    for obj, ref, item in plans:
        endpoint = endpoints.get((ref.parent or "", ref.name))
        if endpoint is None or not isinstance(endpoint.get(METHODS), list):
            continue
        methods = {identity(m, METHOD_NAME) for m in endpoint[METHODS]}
        for m, method in strings(item.get(METHODS)):
            if method not in methods:
                yield Finding((*obj.path, *ref.item, METHODS, m),
                              f"unknown method '{method}' of endpoint '{ref.key}'")


def _item(doc: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


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


class PlanOps(Ops, Shorthands, ToldInWords, Granting, KeyRules):
    """A plan's entitlements and role permissions are reconciled one by one. Its entitled
    endpoints have a shorthand in manifests; its entitlements are told in words and are what
    its keys may call; its limits govern its keys (:data:`KEY_RULES`)."""

    writes: Mapping[str, NestedWrite] = frozen({
        SERVICES: Entitlements(fields=fields_under(PLAN_READ_FIELDS, SERVICES), inner=ENDPOINTS,
                               leaf=METHODS, flag="undefinedMethodsAllowed"),
        ROLES: permissions(ROLE_ACTION),
    })

    def expand(self, entry: dict[str, Any], names: Names) -> None:
        """Entitled endpoints written as names become ``{"name": ...}``; a service entitled
        without ``endpoints`` is entitled to every endpoint the manifests declare in it."""
        declared = names.get(ENDPOINT.name, {})
        for entitled in entry.get(SERVICES, []):
            if ENDPOINTS not in entitled:
                entitled[ENDPOINTS] = [{ENDPOINT.identity: e}
                                       for e in declared.get(entitled[SERVICE.identity], [])]
            else:
                entitled[ENDPOINTS] = [{ENDPOINT.identity: e} if isinstance(e, str) else e
                                       for e in entitled[ENDPOINTS]]

    def check(self, declared: Declarations) -> Iterator[Finding]:
        """A plan names its email template set once; the methods each plan entitles, against
        the endpoints' own."""
        entitled = []  # entitlements naming methods
        for obj in declared.of(self.kind.name):
            if TEMPLATE_SET in obj.entry and TEMPLATE_SET_ID in obj.entry:
                yield Finding((*obj.path, TEMPLATE_SET_ID),
                              f"{TEMPLATE_SET} names the plan's {EMAIL_TEMPLATE_SET.label} and "
                              f"{TEMPLATE_SET_ID} gives its id: write one of them")
            for ref in refs_of(self.kind, obj.entry):
                if ref.kind != ENDPOINT.name or ref.path == ref.item:
                    continue
                item = _item(obj.entry, ref.item)
                if isinstance(item, dict) and METHODS in item:
                    entitled.append((obj, ref, item))
        if not entitled:
            return
        endpoints: dict[tuple[str, str], Mapping[str, Any]] = {}
        for obj in declared.of(ENDPOINT.name):
            if obj.parent_key is not None:
                endpoints.setdefault((obj.parent_key, obj.name or ""), obj.entry)
        yield from _entitled_methods(iter(entitled), endpoints)

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

    def grants(self, value: Any, endpoint: str | None, field: str | None) -> set[tuple[str, str]]:
        """A service entitled without endpoints is ``("", "*")``."""
        if value is None:
            return set()
        if field == METHODS:
            return {(str(endpoint), str(m)) for m in value or []}
        if endpoint is not None:
            return {(endpoint, "*")}
        eps = value.get(ENDPOINTS) if isinstance(value, dict) and "name" not in value else value
        if isinstance(eps, dict):
            names = set(eps)
        else:
            names = {str(e.get("name") if isinstance(e, dict) else e) for e in eps or []}
        return {(str(e), "*") for e in names} or {("", "*")}

    def key_rule(self, path: str) -> KeyRule | None:
        return KEY_RULES.get(path)

    def goes_with(self, key: str, area: Holdings) -> list[str]:
        """Its entitlements, its roles' permissions."""
        plan = area.held(self.kind.name, key)
        if plan is None:
            return []
        services = sorted(self.entitled(plan.doc))
        return ([f"its entitlements to {listed(services)}"] if services else []) + \
            role_permissions(self.kind, plan.doc)

    def export(self, entry: Exported) -> Any:
        """Entitlements as :func:`_exported_entitlement` writes them; the email template set
        by name when the area has it (by id otherwise)."""
        doc = super().export(entry)
        if SERVICES in doc:
            doc[SERVICES] = [_exported_entitlement(s) for s in doc[SERVICES]]
        if TEMPLATE_SET in doc:
            doc.pop(TEMPLATE_SET_ID, None)
        return doc

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        doc = self.strip(raw)
        if SERVICES in doc:
            doc[SERVICES] = _entitled(doc[SERVICES], lookups)
        if ROLES in doc:
            doc[ROLES] = names_of(doc[ROLES], lookups, ROLE.name)
        template_set = doc.get(TEMPLATE_SET_ID)
        name = lookups.name(EMAIL_TEMPLATE_SET.name, template_set) if template_set is not None else None
        if name is not None:  # by name as well as by id: compared as the manifest names it
            doc[TEMPLATE_SET] = name
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


PLAN: Kind = Kind(
    name="plan", manifest_key="plans", label="plan", path="/packages/{package}/plans", body="plan",
    parent="package",
    depends_on=("service", "endpoint", "role"),
    references=(Reference("services[].name", "service"),
                Reference("services[].endpoints[].name", "endpoint", within="services[].name",
                          unknown="unknown {label} '{key}'; declare it under the "
                                  "{parent_label}'s {manifest_key}"),
                Reference("roles[]", "role"),
                Reference(TEMPLATE_SET, EMAIL_TEMPLATE_SET.name, id_field=TEMPLATE_SET_ID)),
    defaults=frozen({
        "description": "", "eav": {}, "adminKeyProvisioningEnabled": False, "notes": "",
        "maxNumKeysAllowed": 5, "numKeysBeforeReview": 1, "qpsLimitCeiling": 0,
        "qpsLimitExempt": False, "qpsLimitKeyOverrideAllowed": False, "rateLimitCeiling": 0,
        "rateLimitExempt": False, "rateLimitKeyOverrideAllowed": False, "rateLimitPeriod": "day",
        "responseFilterOverrideAllowed": False, "emailTemplateSetId": None,
    }),
    keyed=frozen({"services": "name", "services.endpoints": "name"}),
    nested=frozen({"services": frozen({"endpoints": []}),
                    "services.endpoints": ENTITLED_ENDPOINT_DEFAULTS}),
    fields=PLAN_READ_FIELDS,
    compare=Compare(
        computed=frozenset({"id", "created", "updated", "status", "selfServiceKeyProvisioningEnabled"}),
        opaque=frozenset({"eav"}),
        # a ceiling of null is no limit, as 0 is (SUPPLEMENT §10.10.3, §11 step 6)
        unset=frozen({"qpsLimitCeiling": (None,), "rateLimitCeiling": (None,)}),
        enum_arrays=frozenset({"services.endpoints.methods"}),
        sets=frozenset({"roles"}),
        # the email template set is compared only as a manifest names it: by name or by id
        left_alone=frozenset({"services", "roles", TEMPLATE_SET, TEMPLATE_SET_ID}),
    ),
    export=Export(export_first=("description",)),
    callers=Callers(
        risky=frozenset({"rateLimitCeiling", "rateLimitPeriod", "qpsLimitCeiling",
                         "maxNumKeysAllowed", "numKeysBeforeReview"}),
        risky_suffixes=("Exempt", "OverrideAllowed"),
        role_permits="key",
    ),
    operations=PlanOps,
)
