"""The one registry of object kinds the reconciler manages.

Every other stage derives what it needs from the :data:`KINDS` entries here: ``live`` reads
each top-level collection with the ``fields`` projection declared below, ``normalise`` fills
in the defaults and folds the quirks listed here, ``diff`` knows which nested lists are keyed
collections, ``planner`` orders steps by ``parent`` and ``depends_on``, ``apply`` finds the API
paths and body parameter names, ``render`` and ``export`` the manifest keys. Adding a kind means
adding one entry here (and its schema).

Kinds, in the order creates run (deletes run in reverse): ``domain``, ``role``, ``service``,
``errorSet`` (in a service), ``endpoint`` (in a service), ``package``, ``plan`` (in a package),
``maintenanceEvent``.

Object keys (``--target KIND:NAME``, plan addresses, ``settings.ignore``) are the identity
value for top-level kinds and ``parent/name`` for nested ones: ``service:Weather``,
``endpoint:Weather/Forecast``, ``plan:Weather Partners/Gold``, ``domain:example.com``.

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
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from apimctl import platform

# --- the error message catalog (SUPPLEMENT §5) -------------------------------------------------

ERROR_CATALOG = platform.ERROR_CATALOG

# --- defaults of nested singletons (SUPPLEMENT §3) ---------------------------------------------

CORS_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "allDomainsEnabled": True, "subDomainMatchingAllowed": False, "maxAge": 0,
    "cookiesAllowed": False, "domainsAllowed": [], "headersAllowed": [], "headersExposed": [],
})
ENDPOINT_CACHE_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "clientSurrogateControlEnabled": False, "contentCacheKeyHeaders": [], "cacheTtlOverride": 0,
    "includeApiKeyInContentCacheKey": False, "respondFromStaleCacheEnabled": False,
    "responseCacheControlEnabled": False, "varyHeaderEnabled": False,
})
PROCESSOR_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "adapter": "", "preProcessEnabled": False, "postProcessEnabled": False,
    "preInputs": {}, "postInputs": {},
})
SYSTEM_DOMAIN_AUTH_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "type": "httpBasic", "username": "", "certificate": "",
})
OAUTH_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "accessTokenTtlEnabled": False, "accessTokenTtl": 0, "authorizationCodeTtl": 0,
    "refreshTokenEnabled": False, "refreshTokenTtl": 0, "accessTokenType": "bearer",
    "allowMultipleToken": False, "secureTokensEnabled": False, "forwardedHeaders": [],
    "grantTypes": [], "tokenBasedRateLimitsEnabled": False, "qpsLimitCeiling": 0,
    "rateLimitCeiling": 0, "forceSslRedirectUrlEnabled": False,
})
METHOD_DEFAULTS: Mapping[str, Any] = MappingProxyType({"sampleJsonResponse": "", "sampleXmlResponse": ""})
RESPONSE_FILTER_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "notes": "", "jsonFilterFields": "", "xmlFilterFields": "",
})
ERROR_MESSAGE_FIELDS: tuple[str, ...] = ("status", "detailHeader", "responseBody")
ENTITLED_ENDPOINT_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "undefinedMethodsAllowed": True, "methods": [],
})


def _frozen(mapping: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(mapping)


@dataclass(frozen=True)
class Reference:
    """A field of one kind that names an object of another kind.

    ``field`` is the manifest field (dotted; ``[]`` marks a list of references); ``scope`` says
    how the name is resolved: ``"parent"`` within the same parent (an endpoint's error set),
    ``"global"`` by the referenced kind's key.
    """

    field: str
    kind: str
    scope: str = "global"


@dataclass(frozen=True)
class SubResource:
    """An API sub-collection apply writes to (paths relative to the object's own path)."""

    path: str
    body: str | None = None
    note: str = ""


@dataclass(frozen=True)
class Kind:
    """Everything the pipeline needs to know about one kind of object.

    Field paths below are dotted *schema* paths within the object in manifest shape, without
    collection keys (``methods.responseFilters``, ``securityProfile.oauth.grantTypes``).

    - ``manifest_key``: top-level manifest key, or the key inside the parent for child kinds.
    - ``path``: API collection path; ``{service}``/``{package}`` stand for the parent's id.
    - ``body``: the body parameter name of writes (spec "Common rules" 4).
    - ``identity``: the natural-key field; ``parent``: the kind this one lives in.
    - ``depends_on``: kinds whose creates/updates must run first; ``references``: the fields
      carrying those references by name.
    - ``computed``: server-computed fields, never diffed; ``write_only``: never read back.
    - ``secret``: fields compared by hash and shown as ``(sensitive)``.
    - ``enum_arrays`` and ``sets``: lists compared as sets (a single string is a one-element set).
    - ``datetimes``: compared as instants. ``defaults``: SUPPLEMENT §3 for top-level fields.
    - ``nested``: defaults of nested objects (singletons and items of keyed lists) by path;
      ``nullable``: nested objects whose absence is ``null`` rather than the defaults.
    - ``keyed``: nested lists compared as maps, with the item field that keys them.
    - ``opaque``: free-form objects compared whole (``eav``).
    - ``left_alone``: nested collections left alone when the manifest omits the key.
    - ``children``: child kinds; ``fields``: the read projection (children included).
    - ``page_index``: list paging counts pages rather than items.
    - ``pinnable``: the manifest may carry ``id``/``previousNames``; ``deletable``: the API can
      delete it (domains cannot be deleted).
    - ``sub_resources``: the sub-collections apply writes to, relative to the object's path.
    - ``fold_case``: the identity is case-insensitive (domains: ``Example.COM`` is
      ``example.com``), for matching and comparing.
    """

    name: str
    manifest_key: str
    path: str
    body: str
    identity: str = "name"
    parent: str | None = None
    depends_on: tuple[str, ...] = ()
    references: tuple[Reference, ...] = ()
    computed: frozenset[str] = frozenset()
    secret: frozenset[str] = frozenset()
    write_only: frozenset[str] = frozenset()
    enum_arrays: frozenset[str] = frozenset()
    sets: frozenset[str] = frozenset()
    datetimes: frozenset[str] = frozenset()
    defaults: Mapping[str, Any] = field(default_factory=lambda: _frozen({}))
    nested: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: _frozen({}))
    nullable: frozenset[str] = frozenset()
    keyed: Mapping[str, str] = field(default_factory=lambda: _frozen({}))
    opaque: frozenset[str] = frozenset()
    left_alone: frozenset[str] = frozenset()
    children: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    list_params: tuple[tuple[str, str], ...] = ()
    page_index: bool = False
    pinnable: bool = True
    deletable: bool = True
    sub_resources: Mapping[str, SubResource] = field(default_factory=lambda: _frozen({}))
    fold_case: bool = False

    def identity_of(self, name: str) -> str:
        """The form of an identity value that matching compares (folded when case-insensitive)."""
        return name.casefold() if self.fold_case else name

    @property
    def top_level(self) -> bool:
        """Top-level kinds are listed once per area and may be pruned."""
        return self.parent is None

    @property
    def prune_key(self) -> str | None:
        """The key of this kind under ``settings.prune`` (``None``: never pruned directly)."""
        return self.manifest_key if self.top_level else None

    def collection_path(self, **ids: str) -> str:
        """The API collection path with the parent ids filled in."""
        return self.path.format(**ids)

    def item_path(self, obj_id: str, **ids: str) -> str:
        return f"{self.collection_path(**ids)}/{obj_id}"

    def fields_param(self) -> str:
        """The ``fields`` projection reading the kind (and its nested kinds) in one list call."""
        return ",".join(self.fields)

    def key_of(self, name: str, parent_key: str | None = None) -> str:
        """The object's key: its identity, prefixed with the parent's key for nested kinds."""
        return f"{parent_key}/{name}" if parent_key is not None else name


# --- the endpoint field table ----------------------------------------------------------------

ENDPOINT_SCALAR_DEFAULTS: dict[str, Any] = {
    "requestPathAlias": "", "trafficManagerDomain": "",
    "allowMissingApiKey": False, "apiKeyValueLocationKey": "api_key",
    "apiKeyValueLocations": ["request-parameters"], "apiMethodDetectionKey": "",
    "apiMethodDetectionLocations": ["request-path"],
    "connectionTimeoutForSystemDomainRequest": 2, "connectionTimeoutForSystemDomainResponse": 5,
    "cookiesDuringHttpRedirectsEnabled": False, "customRequestAuthenticationAdapter": None,
    "dropApiKeyFromIncomingCall": False, "forceGzipOfBackendCall": False,
    "gzipPassthroughSupportEnabled": False, "headersToExcludeFromIncomingCall": [],
    "highSecurity": False, "hostPassthroughIncludedInBackendCallHeader": False,
    "inboundSslRequired": False, "jsonpCallbackParameter": "", "jsonpCallbackParameterValue": "",
    "forwardedHeaders": [], "returnedHeaders": [], "numberOfHttpRedirectsToFollow": 0,
    "outboundRequestTargetPath": "", "outboundRequestTargetQueryParameters": "",
    "outboundTransportProtocol": "https", "publicDomains": [], "systemDomains": [],
    "requestAuthenticationType": "apiKey", "requestProtocol": "rest", "oauthGrantTypes": [],
    "supportedHttpMethods": ["get"], "useSystemDomainCredentials": False,
    "systemDomainCredentialKey": "", "systemDomainCredentialSecret": "",
    "errorSet": None, "systemDomainAuthentication": None,
}
ENDPOINT_ENUM_ARRAYS = frozenset({
    "apiKeyValueLocations", "apiMethodDetectionLocations", "forwardedHeaders", "returnedHeaders",
    "oauthGrantTypes", "supportedHttpMethods", "cache.contentCacheKeyHeaders",
})
ENDPOINT_READ_FIELDS: tuple[str, ...] = (
    "id", "name", "created", "updated",
    *(f for f in ENDPOINT_SCALAR_DEFAULTS if f != "systemDomainAuthentication"),
    "cors", "cache", "processor", "systemDomainAuthentication",
    "methods.*",
)
ERROR_SET_READ_FIELDS: tuple[str, ...] = (
    "id", "name", "type", "jsonp", "jsonpType", "errorMessages",
)

DOMAIN = Kind(
    name="domain", manifest_key="domains", path="/domains", body="domainWhitelist",
    identity="domain", computed=frozenset({"id", "created", "updated", "status"}),
    fields=("id", "domain", "status", "created"), pinnable=False, deletable=False,
    fold_case=True,
)

ROLE = Kind(
    name="role", manifest_key="roles", path="/roles", body="role",
    computed=frozenset({"id", "created", "updated", "isPredefined", "isOrgrole", "isAssignable"}),
    defaults=_frozen({"description": "", "organization": None}),
    references=(),
    fields=("id", "name", "created", "updated", "description", "organization"),
    page_index=True,
)

SERVICE = Kind(
    name="service", manifest_key="services", path="/services", body="service",
    depends_on=("role",),
    references=(Reference("roles[]", "role"),),
    computed=frozenset({"id", "created", "updated", "revisionNumber", "editorHandle",
                        "robotsPolicy", "crossdomainPolicy"}),
    defaults=_frozen({"description": "", "version": "", "qpsLimitOverall": 0,
                      "rfc3986Encode": False}),
    nested=_frozen({"cache": _frozen({"cacheTtl": 0}),
                    "securityProfile": _frozen({"oauth": None}),
                    "securityProfile.oauth": OAUTH_DEFAULTS}),
    nullable=frozenset({"securityProfile.oauth"}),
    enum_arrays=frozenset({"securityProfile.oauth.forwardedHeaders",
                           "securityProfile.oauth.grantTypes"}),
    sets=frozenset({"roles"}),
    left_alone=frozenset({"roles"}),
    children=("errorSet", "endpoint"),
    fields=(
        "id", "name", "created", "updated", "revisionNumber", "description", "version",
        "qpsLimitOverall", "rfc3986Encode", "cache", "securityProfile", "roles",
        *(f"errorSets.{f}" for f in ERROR_SET_READ_FIELDS),
        *(f"endpoints.{f}" for f in ENDPOINT_READ_FIELDS),
    ),
    sub_resources=_frozen({
        "cache": SubResource("cache", "cache", "singleton; POST sets, PUT changes, DELETE resets"),
        "oauth": SubResource("securityProfile/oauth", "oauth",
                             "securityProfile.oauth; DELETE sets it to null"),
        "roles": SubResource("roles", "role", "role permissions {id: role id, action: read}"),
    }),
)

ERROR_SET = Kind(
    name="errorSet", manifest_key="errorSets", path="/services/{service}/errorSets",
    body="errorSet", parent="service", pinnable=True,
    computed=frozenset({"id", "created", "updated"}),
    defaults=_frozen({"type": "application/json", "jsonp": False, "jsonpType": "", "errorMessages": []}),
    keyed=_frozen({"errorMessages": "id"}),
    nested=_frozen({"errorMessages": _frozen({"status": "", "detailHeader": "", "responseBody": ""})}),
    fields=ERROR_SET_READ_FIELDS,
    sub_resources=_frozen({
        "errorMessages": SubResource("errorMessages", "errorMessage",
                                     "PUT errorMessages/{id} upserts one message"),
    }),
)

ENDPOINT = Kind(
    name="endpoint", manifest_key="endpoints", path="/services/{service}/endpoints",
    body="endpoint", parent="service",
    depends_on=("domain", "errorSet"),
    references=(Reference("errorSet", "errorSet", scope="parent"),
                Reference("publicDomains[]", "domain"), Reference("systemDomains[]", "domain")),
    computed=frozenset({"id", "created", "updated", "scheduledMaintenanceEvent"}),
    secret=frozenset({"systemDomainCredentialSecret", "systemDomainAuthentication.password"}),
    write_only=frozenset({"systemDomainAuthentication.password"}),
    enum_arrays=ENDPOINT_ENUM_ARRAYS,
    sets=frozenset({"publicDomains", "systemDomains"}),
    defaults=_frozen(ENDPOINT_SCALAR_DEFAULTS),
    nested=_frozen({"cors": CORS_DEFAULTS, "cache": ENDPOINT_CACHE_DEFAULTS,
                    "processor": PROCESSOR_DEFAULTS,
                    "systemDomainAuthentication": SYSTEM_DOMAIN_AUTH_DEFAULTS,
                    "methods": METHOD_DEFAULTS, "methods.responseFilters": RESPONSE_FILTER_DEFAULTS}),
    nullable=frozenset({"systemDomainAuthentication"}),
    keyed=_frozen({"methods": "name", "methods.responseFilters": "name"}),
    opaque=frozenset({"processor.preInputs", "processor.postInputs"}),
    left_alone=frozenset({"methods", "methods.responseFilters"}),
    fields=ENDPOINT_READ_FIELDS,
    sub_resources=_frozen({
        "cors": SubResource("cors", "cors", "singleton; PUT changes the fields sent"),
        "cache": SubResource("cache", "cache", "singleton; PUT changes the fields sent"),
        "systemDomainAuthentication": SubResource(
            "systemDomainAuthentication", "systemDomainAuthentication",
            "singleton; POST creates, PUT changes, DELETE removes (null)"),
        "methods": SubResource("methods", "method", "keyed by name"),
        "responseFilters": SubResource("methods/{method}/responseFilters", "responseFilter",
                                       "keyed by name within a method"),
    }),
)

PACKAGE = Kind(
    name="package", manifest_key="packages", path="/packages", body="package",
    computed=frozenset({"id", "created", "updated"}),
    defaults=_frozen({
        "description": "", "notifyDeveloperPeriod": "hour", "notifyDeveloperNearQuota": False,
        "notifyDeveloperOverQuota": False, "notifyDeveloperOverThrottle": False,
        "notifyAdminPeriod": "hour", "notifyAdminNearQuota": False, "notifyAdminOverQuota": False,
        "notifyAdminOverThrottle": False, "notifyAdminEmails": "", "nearQuotaThreshold": 80,
        "eav": {}, "keyAdapter": "", "keyLength": 24, "sharedSecretLength": 10,
    }),
    opaque=frozenset({"eav"}),
    children=("plan",),
    fields=(
        "id", "name", "created", "updated", "description", "notifyDeveloperPeriod",
        "notifyDeveloperNearQuota", "notifyDeveloperOverQuota", "notifyDeveloperOverThrottle",
        "notifyAdminPeriod", "notifyAdminNearQuota", "notifyAdminOverQuota",
        "notifyAdminOverThrottle", "notifyAdminEmails", "nearQuotaThreshold", "eav",
        "keyAdapter", "keyLength", "sharedSecretLength",
        "plans.id", "plans.name", "plans.created", "plans.updated", "plans.description",
        "plans.eav", "plans.selfServiceKeyProvisioningEnabled",
        "plans.adminKeyProvisioningEnabled", "plans.notes", "plans.maxNumKeysAllowed",
        "plans.numKeysBeforeReview", "plans.qpsLimitCeiling", "plans.qpsLimitExempt",
        "plans.qpsLimitKeyOverrideAllowed", "plans.rateLimitCeiling", "plans.rateLimitExempt",
        "plans.rateLimitKeyOverrideAllowed", "plans.rateLimitPeriod",
        "plans.responseFilterOverrideAllowed", "plans.status", "plans.emailTemplateSetId",
        "plans.services", "plans.roles",
    ),
)

PLAN = Kind(
    name="plan", manifest_key="plans", path="/packages/{package}/plans", body="plan",
    parent="package",
    depends_on=("service", "endpoint", "role"),
    references=(Reference("services[].name", "service"),
                Reference("services[].endpoints[].name", "endpoint"),
                Reference("roles[]", "role")),
    computed=frozenset({"id", "created", "updated", "status", "selfServiceKeyProvisioningEnabled"}),
    defaults=_frozen({
        "description": "", "eav": {}, "adminKeyProvisioningEnabled": False, "notes": "",
        "maxNumKeysAllowed": 5, "numKeysBeforeReview": 1, "qpsLimitCeiling": 0,
        "qpsLimitExempt": False, "qpsLimitKeyOverrideAllowed": False, "rateLimitCeiling": 0,
        "rateLimitExempt": False, "rateLimitKeyOverrideAllowed": False, "rateLimitPeriod": "day",
        "responseFilterOverrideAllowed": False, "emailTemplateSetId": None,
    }),
    opaque=frozenset({"eav"}),
    keyed=_frozen({"services": "name", "services.endpoints": "name"}),
    nested=_frozen({"services": _frozen({"endpoints": []}),
                    "services.endpoints": ENTITLED_ENDPOINT_DEFAULTS}),
    enum_arrays=frozenset({"services.endpoints.methods"}),
    sets=frozenset({"roles"}),
    left_alone=frozenset({"services", "roles"}),
    fields=tuple(f.removeprefix("plans.") for f in PACKAGE.fields if f.startswith("plans.")),
    sub_resources=_frozen({
        "services": SubResource("services", None, "POST {id} entitles a service; DELETE removes"),
        "endpoints": SubResource("services/{service}/endpoints", None, "POST {id} / DELETE"),
        "methods": SubResource("services/{service}/endpoints/{endpoint}/methods", None,
                               "POST {id} / DELETE; only when undefinedMethodsAllowed is false"),
        "roles": SubResource("roles", "role", "role permissions {id: role id, action: register_keys}"),
    }),
)

MAINTENANCE_EVENT = Kind(
    name="maintenanceEvent", manifest_key="scheduledMaintenanceEvents",
    path="/scheduledMaintenanceEvents", body="scheduledMaintenanceEvent",
    depends_on=("endpoint",),
    references=(Reference("endpoints[]", "endpoint"),),
    computed=frozenset({"id", "created", "updated"}),
    datetimes=frozenset({"startDateTime", "endDateTime"}),
    sets=frozenset({"endpoints"}),
    left_alone=frozenset({"endpoints"}),
    fields=("id", "name", "created", "updated", "startDateTime", "endDateTime",
            "endpoints.id", "endpoints.name"),
    sub_resources=_frozen({
        "endpoints": SubResource("endpoints", None, "POST {id: endpoint id} / DELETE"),
    }),
)

KINDS: tuple[Kind, ...] = (
    DOMAIN, ROLE, SERVICE, ERROR_SET, ENDPOINT, PACKAGE, PLAN, MAINTENANCE_EVENT,
)
BY_NAME: Mapping[str, Kind] = MappingProxyType({k.name: k for k in KINDS})
TOP_LEVEL: tuple[Kind, ...] = tuple(k for k in KINDS if k.top_level)
ORDER: Mapping[str, int] = MappingProxyType({k.name: i for i, k in enumerate(KINDS)})

# Fields every pinnable kind's manifest entry may carry that are not object fields.
META_FIELDS: frozenset[str] = frozenset({"id", "previousNames"})
# Fields of nested items (methods, response filters, messages) that the server computes.
NESTED_COMPUTED_FIELDS: frozenset[str] = frozenset({"id", "created", "updated", "code"})


def get(name: str) -> Kind:
    """The kind called ``name``; ``KeyError`` lists the known kinds."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown kind {name!r}; known: {', '.join(BY_NAME)}") from None


def children_of(kind: Kind) -> tuple[Kind, ...]:
    """The child kinds nested in ``kind`` (endpoints and error sets of a service, ...)."""
    return tuple(BY_NAME[c] for c in kind.children)


def by_manifest_key(key: str) -> Kind | None:
    """The top-level kind whose manifest key is ``key`` (``services`` -> service)."""
    return next((k for k in TOP_LEVEL if k.manifest_key == key), None)


def split_key(kind: Kind, key: str) -> tuple[str | None, str]:
    """``("Weather", "Forecast")`` for ``endpoint`` key ``Weather/Forecast``.

    Only the first ``/`` separates the parent: service and package names may not contain
    one in keys, while endpoint and plan names may.
    """
    if kind.parent is None:
        return None, key
    parent, sep, name = key.partition("/")
    if not sep:
        raise ValueError(f"{kind.name} key {key!r} must be PARENT/NAME")
    return parent, name
