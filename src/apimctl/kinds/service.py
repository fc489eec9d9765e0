"""Services (``services``): the top of the services tree, with their cache, OAuth security profile and role permissions; error sets and endpoints are child kinds."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from apimctl.kinds.base import Callers, Compare, Export, Kind, Reference, frozen
from apimctl.kinds.endpoint import ENDPOINT
from apimctl.kinds.error_set import ERROR_SET
from apimctl.kinds.nested_writes import NestedWrite, Singleton
from apimctl.kinds.ops import Lookups, Ops, Read, Resolver, fingerprint, names_of
from apimctl.kinds.protocol import Holdings
from apimctl.kinds.role import ROLE, permissions, role_permissions
from apimctl.kinds.words import counted, entitlements_in
from apimctl.platform import GRANT_TYPES

ROLES = "roles"
# what a role a service names may do with it (its permission's action, SUPPLEMENT §10.7)
ROLE_ACTION = "read"
# fields of real deployments apimctl does not manage (SUPPLEMENT §10.8): compared only when a
# manifest names them
UNMANAGED: tuple[str, ...] = (
    "organization", "securityProfile.oauth.masheryTokenApiEnabled",
    "securityProfile.oauth.enableRefreshTokenTtl", "securityProfile.oauth.forceOauthRedirectUrl",
    "securityProfile.oauth.macAlgorithm")

OAUTH_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "accessTokenTtlEnabled": False, "accessTokenTtl": 0, "authorizationCodeTtl": 0,
    "refreshTokenEnabled": False, "refreshTokenTtl": 0, "accessTokenType": "bearer",
    "allowMultipleToken": False, "secureTokensEnabled": False, "forwardedHeaders": [],
    "grantTypes": [], "tokenBasedRateLimitsEnabled": False, "qpsLimitCeiling": 0,
    "rateLimitCeiling": 0, "forceSslRedirectUrlEnabled": False,
})


class ServiceOps(Ops):
    """A service's role permissions are reconciled one by one; its OAuth profile is a
    sub-resource of its own; its error sets and endpoints are objects of their own."""

    writes: Mapping[str, NestedWrite] = frozen({
        "securityProfile": Singleton(), ROLES: permissions(ROLE_ACTION)})

    def child_keys(self) -> tuple[str, ...]:
        return (ERROR_SET.manifest_key, ENDPOINT.manifest_key)

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        doc = self.strip(raw)
        if ROLES in doc:
            doc[ROLES] = names_of(doc[ROLES], lookups, ROLE.name)
        return Read(doc, *fingerprint(raw))

    def goes_with(self, key: str, area: Holdings) -> list[str]:
        """Its endpoints and error sets (counted), its entitlements, its roles' permissions."""
        return [counted(len(area.children(ENDPOINT.name, key)), ENDPOINT.label),
                counted(len(area.children(ERROR_SET.name, key)), ERROR_SET.label),
                *entitlements_in(area.entitling(key), area),
                *role_permissions(self.kind, area.doc(self.kind.name, key))]

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]:
        """Role permissions go with a create, by role id (the action is the default)."""
        body = self.own_fields(desired)
        if desired.get(ROLES):
            body[ROLES] = list(desired[ROLES])
        return self.resolved(body, refs, parent)


SERVICE: Kind = Kind(
    name="service", manifest_key="services", label="service", path="/services", body="service",
    depends_on=("role",),
    references=(Reference("roles[]", "role"),),
    defaults=frozen({"description": "", "version": "", "qpsLimitOverall": 0,
                      "rfc3986Encode": False}),
    nested=frozen({"cache": frozen({"cacheTtl": 0}),
                    "securityProfile": frozen({"oauth": None}),
                    "securityProfile.oauth": OAUTH_DEFAULTS}),
    compare=Compare(
        computed=frozenset({"id", "created", "updated", "revisionNumber", "editorHandle",
                            "robotsPolicy", "crossdomainPolicy"}),
        nullable=frozenset({"securityProfile.oauth"}),
        # read as null where never set (SUPPLEMENT §10.10.3; nullable in public clients)
        unset=frozen({"qpsLimitOverall": (None,)}),
        enum_arrays=frozenset({"securityProfile.oauth.forwardedHeaders",
                               "securityProfile.oauth.grantTypes"}),
        sets=frozenset({"roles"}),
        left_alone=frozenset({"roles"}),
        # enum values each dialect spells its own way (SUPPLEMENT §10.2)
        vocabularies=frozen({"securityProfile.oauth.grantTypes": GRANT_TYPES}),
        unmanaged=UNMANAGED,
    ),
    children=("errorSet", "endpoint"),
    read_also=(
        "created", "updated", "revisionNumber", "roles.id", "roles.name",
        *UNMANAGED,
        *(f"{ERROR_SET.manifest_key}.{f}" for f in ERROR_SET.fields),
        *(f"{ENDPOINT.manifest_key}.{f}" for f in ENDPOINT.fields),
    ),
    export=Export(manifest_rank=0, export_first=("description", "version")),
    callers=Callers(
        risky=frozenset({"qpsLimitOverall", "securityProfile.oauth.qpsLimitCeiling",
                         "securityProfile.oauth.rateLimitCeiling"}),
        called=True,
        shared_qps="qpsLimitOverall",
        role_permits="read",
    ),
    operations=ServiceOps,
)
