"""Endpoints (``endpoints`` of a service), with their nested singletons (CORS, cache, processor, system-domain authentication) and keyed methods with response filters."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from apimctl.kinds.base import Callers, Compare, Export, Kind, Reference, Write, frozen, split_first
from apimctl.kinds.capabilities import Contextual, NestedIds, ObjectDefaults, Routed
from apimctl.kinds.dialects import validated_routes_by_method
from apimctl.kinds.error_set import ERROR_SET
from apimctl.kinds.findings import (
    Declaration,
    Declarations,
    Finding,
    JsonPath,
    duplicates,
    string,
    strings,
)
from apimctl.kinds.nested_writes import KeyedItems, NestedWrite, Singleton
from apimctl.kinds.ops import (
    NESTED_COMPUTED_FIELDS,
    Context,
    Exported,
    Lookups,
    Ops,
    Read,
    Resolver,
    as_list,
    escape_literal,
    fingerprint,
    names_of,
)
from apimctl.kinds.protocol import Holdings
from apimctl.kinds.words import entitlements_in
from apimctl.platform import FORWARDED_HEADERS, GRANT_TYPES, RETURNED_HEADERS, Vocabulary

# the label of an endpoint's methods in lookups and in apply's index of ids
METHOD = "method"
METHODS = "methods"
RESPONSE_FILTERS = "responseFilters"
# the field naming the endpoint's error set (``null``: the service's first one)
ERROR_SET_FIELD = "errorSet"
DOMAIN_FIELDS = ("publicDomains", "systemDomains")
# fields the manifest schema requires even when they hold the default
REQUIRED_FIELDS = ("requestPathAlias", "trafficManagerDomain")
CREDENTIAL_SECRET = "systemDomainCredentialSecret"
BACKEND_AUTH = "systemDomainAuthentication"
# the last part of the variable an export writes in place of each secret
# (``WEATHER_FORECAST_BACKEND_SECRET``: the service's and the endpoint's names come first)
SECRET_VARIABLES: Mapping[str, str] = MappingProxyType({
    CREDENTIAL_SECRET: "BACKEND_SECRET",
    f"{BACKEND_AUTH}.password": "BACKEND_PASSWORD",
})

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

METHOD_DEFAULTS: Mapping[str, Any] = MappingProxyType({"sampleJsonResponse": "", "sampleXmlResponse": ""})

RESPONSE_FILTER_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "notes": "", "jsonFilterFields": "", "xmlFilterFields": "",
})

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
# Spellings of "not set" that real areas return for fields never set, which the platform treats
# as the default (SUPPLEMENT §10.10.3; public clients type these fields as nullable pointers,
# e.g. the Go client of the v3 API, aliakseiyanchuk/mashery-v3-go-client, masherytypes).
ENDPOINT_UNSET: Mapping[str, tuple[Any, ...]] = MappingProxyType({
    "systemDomainCredentialKey": (None, ""),
    CREDENTIAL_SECRET: (None, ""),
    "customRequestAuthenticationAdapter": (None, ""),
    "headersToExcludeFromIncomingCall": (None, [], [""]),
    "cors": (None,),
    "methods.sampleJsonResponse": (None, ""),
    "methods.sampleXmlResponse": (None, ""),
})
# enum fields each dialect spells its own way (SUPPLEMENT §10.2)
VOCABULARIES: Mapping[str, Vocabulary] = MappingProxyType({
    "forwardedHeaders": FORWARDED_HEADERS,
    "returnedHeaders": RETURNED_HEADERS,
    "oauthGrantTypes": GRANT_TYPES,
})
# fields of real deployments apimctl does not manage (SUPPLEMENT §10.8): the read projection
# names them (a ``spec`` target ignores them, §1); compared only when a manifest names them
UNMANAGED: tuple[str, ...] = ("inboundMsslRequired", "userControlledErrorLocation",
                              "userControlledErrorLocationKey", "rateLimitHeadersEnabled")
ENDPOINT_ENUM_ARRAYS = frozenset({
    "apiKeyValueLocations", "apiMethodDetectionLocations", "forwardedHeaders", "returnedHeaders",
    "oauthGrantTypes", "supportedHttpMethods", "cache.contentCacheKeyHeaders",
})


# An endpoint authenticated by OAuth has no API-key locations (SUPPLEMENT §4 forbids them with
# ``requestAuthenticationType: oauth``), so the platform stores ``[]`` rather than the usual
# ``["request-parameters"]``.
OAUTH_AUTHENTICATION = "oauth"
OAUTH_ENDPOINT_DEFAULTS: Mapping[str, Any] = MappingProxyType({"apiKeyValueLocations": []})


def endpoint_defaults(defaults: Mapping[str, Any], doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """The defaults an endpoint ``doc`` is compared with: ``defaults``, with the OAuth ones
    for an OAuth endpoint."""
    if doc.get("requestAuthenticationType") == OAUTH_AUTHENTICATION:
        return {**defaults, **OAUTH_ENDPOINT_DEFAULTS}
    return defaults


ROUTE_FIELDS = ("requestPathAlias", "publicDomains", "supportedHttpMethods")


def endpoint_routes(doc: Mapping[str, Any], by_method: bool) -> set[str]:
    """The routes an endpoint claims, as the platform keeps them unique in an area:
    ``alias|host`` for each public domain (the alias alone without any; SUPPLEMENT §4, the
    ``spec`` dialect), or with ``by_method`` ``method|alias|host`` for each supported method
    too: real areas let endpoints share a path on a domain when their methods differ
    (SUPPLEMENT §10.10.1). Hosts and methods compare case-insensitively."""
    alias = str(doc.get("requestPathAlias") or "")
    # names (manifests) or {address} (the API)
    hosts = [d.strip().lower() if type(d) is str else _host(d)
             for d in as_list(doc.get("publicDomains"))] or [""]
    if not by_method:
        return {f"{alias}|{h}" for h in hosts}
    written = doc.get("supportedHttpMethods")
    methods = as_list(written) if written is not None else ENDPOINT_SCALAR_DEFAULTS["supportedHttpMethods"]
    return {f"{str(m).lower()}|{alias}|{h}" for m in methods or [""] for h in hosts}


def _host(domain: Any) -> str:
    """A public domain that is not a name: ``{address}`` (the API), or any other value."""
    return str(domain.get("address", "") if isinstance(domain, Mapping) else domain).strip().lower()


def route_words(route: str) -> str | None:
    """A route of :func:`endpoint_routes` in words (``GET api.example.com/forecast``);
    ``None`` for an endpoint without public domains, which claims no route."""
    if route.endswith("|"):
        return None
    *method, alias, host = route.split("|")
    return " ".join([*(m.upper() for m in method), f"{host}{alias}" if host else alias])


def _methods(raw: Any) -> list[dict[str, Any]]:
    out = []
    for method in as_list(raw):
        doc = {k: v for k, v in method.items() if k not in NESTED_COMPUTED_FIELDS}
        if RESPONSE_FILTERS in method:
            doc[RESPONSE_FILTERS] = [
                {k: v for k, v in f.items() if k not in NESTED_COMPUTED_FIELDS}
                for f in as_list(method.get(RESPONSE_FILTERS))
            ]
        out.append(doc)
    return out


def default_error_set(sets: Iterable[str]) -> str | None:
    """The error set of an endpoint whose ``errorSet`` is ``null``: the service's first set
    (``sets``: the names of the service's error sets, in API order), ``None`` without any."""
    return next(iter(sets), None)


def _claimed_routes(endpoints: Iterable[Declaration], by_method: bool) -> Iterator[Finding]:
    """Two endpoints claiming one route: by HTTP method, public domain and path, which every
    dialect refuses (SUPPLEMENT §10.10.1); by public domain and path alone (``by_method``
    false) where the target is of the ``spec`` dialect (§4). Endpoints sharing a path with
    other methods are valid input (a ``lint`` rule warns about them)."""
    first: dict[str, JsonPath] = {}  # route -> the first endpoint claiming it
    repeated: dict[str, list[JsonPath]] = {}
    for obj in endpoints:
        endpoint, path = obj.entry, obj.path
        if string(endpoint, ROUTE_FIELDS[0]) is None or type(endpoint.get("publicDomains")) is not list:
            continue
        where = (*path, ROUTE_FIELDS[0])
        # each route on its own: the order they are taken in changes no finding
        for route in endpoint_routes(endpoint, by_method):
            if route[-1] == "|":
                continue  # no public domain: no route to claim
            claimed = first.setdefault(route, where)
            if claimed is not where and claimed[:-1] != path:
                repeated.setdefault(route, [claimed]).append(where)
    return duplicates(repeated, _route_claimed)


def _route_claimed(route: str) -> str:
    *method, alias, host = route.split("|")
    if method:
        return f"{method[0].upper()} {alias} on {host} is claimed by two endpoints"
    return f"requestPathAlias '{alias}' on {host} is used by two endpoints"


def _authentication(path: JsonPath, endpoint: Mapping[str, Any],
                    service: Mapping[str, Any]) -> Iterator[Finding]:
    """API-key versus OAuth rules (SUPPLEMENT §4), the service's OAuth settings included."""
    if endpoint.get("requestAuthenticationType", "apiKey") == OAUTH_AUTHENTICATION:
        if endpoint.get("apiKeyValueLocations"):
            yield Finding((*path, "apiKeyValueLocations"), "not allowed when requestAuthenticationType is oauth")
        yield from _oauth_profile(path, endpoint, service)
    elif endpoint.get("oauthGrantTypes"):
        yield Finding((*path, "oauthGrantTypes"), "only allowed when requestAuthenticationType is oauth")


def _oauth_profile(path: JsonPath, endpoint: Mapping[str, Any],
                   service: Mapping[str, Any]) -> Iterator[Finding]:
    profile = service.get("securityProfile")
    if not isinstance(profile, dict) or "oauth" not in profile:
        return
    oauth = profile["oauth"]
    if oauth is None:
        yield Finding((*path, "requestAuthenticationType"),
                      "oauth needs the service's OAuth settings, but its securityProfile.oauth is null")
        return
    allowed = oauth.get("grantTypes") if isinstance(oauth, dict) else None
    if not isinstance(allowed, list):
        return
    for index, grant in strings(endpoint.get("oauthGrantTypes")):
        if grant not in allowed:
            yield Finding((*path, "oauthGrantTypes", index),
                          f"grant type '{grant}' is not enabled in the service's securityProfile.oauth.grantTypes")


class EndpointOps(Ops, Routed, Contextual, ObjectDefaults, NestedIds):
    """Endpoints name their error set and domains; methods are reconciled one by one and
    system-domain authentication is a sub-resource of its own. They claim routes, name their
    error set in the service's context, are compared with OAuth defaults when authenticated
    by OAuth, and their methods are referenced by id."""

    writes: Mapping[str, NestedWrite] = frozen({
        BACKEND_AUTH: Singleton(),
        METHODS: KeyedItems(defaults=METHOD_DEFAULTS, indexed_as=METHOD, nested=frozen({
            RESPONSE_FILTERS: KeyedItems(defaults=RESPONSE_FILTER_DEFAULTS)})),
    })

    def nested(self, raw: Mapping[str, Any]) -> Iterable[tuple[str, Any, str]]:
        for method in as_list(raw.get(METHODS)):
            if isinstance(method, Mapping) and method.get("id") is not None:
                yield METHOD, method["id"], str(method.get("name"))

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        sets = [s for s in as_list((parent or {}).get(ERROR_SET.manifest_key)) if isinstance(s, Mapping)]
        doc = self.strip(raw)
        for name in DOMAIN_FIELDS:
            if name in doc:
                doc[name] = names_of(doc[name])
        if isinstance(doc.get(ERROR_SET_FIELD), Mapping):
            ref = doc[ERROR_SET_FIELD]  # {id, name}; some renderings carry the id alone
            set_names = {str(s.get("id")): str(s.get("name")) for s in sets}
            doc[ERROR_SET_FIELD] = ref.get("name") or set_names.get(str(ref.get("id")))
        auth = doc.get("systemDomainAuthentication")
        if isinstance(auth, Mapping):
            doc["systemDomainAuthentication"] = {k: v for k, v in auth.items() if k != "password"}
        if METHODS in doc:
            doc[METHODS] = _methods(doc[METHODS])
        if ERROR_SET_FIELD in doc and doc[ERROR_SET_FIELD] is None:
            # null means the service's first error set
            doc[ERROR_SET_FIELD] = default_error_set(str(s.get("name")) for s in sets)
        return Read(doc, *fingerprint(parent if parent is not None else raw))

    def context(self, siblings: Mapping[str, Sequence[str]]) -> Context:
        return Context(default_error_set=default_error_set(siblings.get(ERROR_SET.name) or ()))

    context_fields: frozenset[str] = frozenset({ERROR_SET_FIELD})

    route_fields: tuple[str, ...] = ROUTE_FIELDS

    def routes(self, doc: Mapping[str, Any], by_method: bool) -> set[str]:
        return endpoint_routes(doc, by_method)

    def route_words(self, route: str) -> str | None:
        return route_words(route)

    def temporary_route(self, doc: Mapping[str, Any], tag: str) -> tuple[str, Any, Any]:
        """The alias, with ``tag`` appended."""
        alias = str(doc.get(ROUTE_FIELDS[0]) or "")
        return ROUTE_FIELDS[0], alias, f"{alias}{tag}"

    def cut_off(self, path: str, before: Any, after: Any) -> list[str]:
        """A new alias leaves the old path; a public domain or a method taken away leaves
        its calls."""
        if path == ROUTE_FIELDS[0]:
            return [f"calls to {before} no longer reach it (its path becomes {after})"]
        kept = {str(v) for v in after or []}
        removed = [str(v) for v in before or [] if str(v) not in kept]
        if not removed:
            return []
        if path == ROUTE_FIELDS[1]:
            return [f"calls to {', '.join(removed)} no longer reach it"]
        return [f"{', '.join(m.upper() for m in removed)} calls no longer reach it"]

    def export(self, entry: Exported) -> Any:
        """The fields the schema requires come first (defaults or not); secrets are variable
        references; ``systemDomainAuthentication`` is led by its type."""
        doc = entry.doc
        head = {k: v for k, v in doc.items() if k in (ENDPOINT.identity, "id")}
        required = {n: doc.get(n, escape_literal(entry.live.get(n) or "")) for n in REQUIRED_FIELDS}
        rest = {k: v for k, v in doc.items() if k not in head and k not in required}
        doc = {**head, **required, **rest}
        if CREDENTIAL_SECRET in doc:
            doc[CREDENTIAL_SECRET] = entry.secret(SECRET_VARIABLES[CREDENTIAL_SECRET])
        if isinstance(doc.get(BACKEND_AUTH), dict):
            doc[BACKEND_AUTH] = self._backend_auth(entry, doc[BACKEND_AUTH])
        return doc

    @staticmethod
    def _backend_auth(entry: Exported, fields: Mapping[str, Any]) -> dict[str, Any]:
        raw = entry.live.get(BACKEND_AUTH)
        kind_of_auth = raw.get("type") if isinstance(raw, Mapping) else None
        kind_of_auth = kind_of_auth or SYSTEM_DOMAIN_AUTH_DEFAULTS["type"]
        auth = {"type": kind_of_auth, **fields}
        if kind_of_auth == "httpBasic":
            auth["password"] = entry.secret(SECRET_VARIABLES[f"{BACKEND_AUTH}.password"])
        return auth

    def contextual(self, path: str, value: Any, ctx: Context) -> Any:
        """The error set by name; none means the service's first one (the context's)."""
        if isinstance(value, Mapping):
            value = value.get("name")
        if value in (None, ""):
            return ctx.default_error_set
        return value

    def defaults_for(self, doc: Mapping[str, Any]) -> Mapping[str, Any]:
        return endpoint_defaults(self.kind.defaults, doc)

    def goes_with(self, key: str, area: Holdings) -> list[str]:
        """Its entitlements."""
        service, name = split_first(key)
        return entitlements_in(area.entitling(service or "", name), area)

    def check(self, declared: Declarations) -> Iterator[Finding]:
        """Routes claimed twice (by method too, unless the manifests say the target is of the
        ``spec`` dialect); the authentication rules of each endpoint and its service."""
        endpoints = [e for e in declared.of(self.kind.name) if isinstance(e.parent, Mapping)]
        yield from _claimed_routes(endpoints, validated_routes_by_method(declared.settings))
        for obj in endpoints:
            if isinstance(obj.parent, Mapping):
                yield from _authentication(obj.path, obj.entry, obj.parent)

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]:
        """Hosts as ``{"address": ...}``, the error set by name (and id when it exists: the
        server resolves a new one within the service), methods whole."""
        body = self.own_fields(desired)
        for name in DOMAIN_FIELDS:
            if name in body and body[name] is None:
                body[name] = []
        methods = desired.get(METHODS)
        if methods is not None:
            body[METHODS] = [dict(m) for m in methods]
        return self.resolved(body, refs, parent)


ENDPOINT: Kind = Kind(
    name="endpoint", manifest_key="endpoints", label="endpoint",
    item_labels=frozen({"methods": "method", "methods.responseFilters": "response filter"}),
    path="/services/{service}/endpoints",
    body="endpoint", parent="service",
    depends_on=("domain", "errorSet"),
    references=(Reference("errorSet", "errorSet", scope="parent", required=False),
                Reference("publicDomains[]", "domain", scope="host"),
                Reference("systemDomains[]", "domain", scope="host")),
    defaults=frozen(ENDPOINT_SCALAR_DEFAULTS),
    nested=frozen({"cors": CORS_DEFAULTS, "cache": ENDPOINT_CACHE_DEFAULTS,
                    "processor": PROCESSOR_DEFAULTS,
                    "systemDomainAuthentication": SYSTEM_DOMAIN_AUTH_DEFAULTS,
                    "methods": METHOD_DEFAULTS, "methods.responseFilters": RESPONSE_FILTER_DEFAULTS}),
    keyed=frozen({"methods": "name", "methods.responseFilters": "name"}),
    compare=Compare(
        computed=frozenset({"id", "created", "updated", "scheduledMaintenanceEvent"}),
        secret=frozenset({"systemDomainCredentialSecret", "systemDomainAuthentication.password"}),
        write_only=frozenset({"systemDomainAuthentication.password"}),
        enum_arrays=ENDPOINT_ENUM_ARRAYS,
        sets=frozenset({"publicDomains", "systemDomains"}),
        nullable=frozenset({"systemDomainAuthentication"}),
        unset=ENDPOINT_UNSET,
        opaque=frozenset({"processor.preInputs", "processor.postInputs"}),
        left_alone=frozenset({"methods", "methods.responseFilters"}),
        vocabularies=VOCABULARIES,
        unmanaged=UNMANAGED,
    ),
    # the rest of the read projection comes from the tables (``read_fields``); the fields of
    # real deployments (SUPPLEMENT §10.8) are compared only when a manifest names them
    read_also=("created", "updated", *UNMANAGED),
    write=Write(batch_updates=True, covered_by_parent=True, referenced_items=(METHODS,)),
    export=Export(
        export_first=("requestPathAlias", "trafficManagerDomain", *DOMAIN_FIELDS, ERROR_SET_FIELD)),
    callers=Callers(called=True, host_fields=(*DOMAIN_FIELDS, "trafficManagerDomain")),
    operations=EndpointOps,
)
