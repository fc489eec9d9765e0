"""Plans (``plans`` of a package): limits, entitlements to services, endpoints and methods, and role permissions."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from apimctl.kinds.base import Kind, Reference, SubResource, frozen

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

PLAN = Kind(
    name="plan", manifest_key="plans", path="/packages/{package}/plans", body="plan",
    parent="package",
    depends_on=("service", "endpoint", "role"),
    references=(Reference("services[].name", "service"),
                Reference("services[].endpoints[].name", "endpoint"),
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
)
