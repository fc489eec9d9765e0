"""Endpoints (``endpoints`` of a service), with their nested singletons (CORS, cache, processor, system-domain authentication) and keyed methods with response filters."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from apimctl.kinds.base import Kind, Reference, SubResource, frozen

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
    defaults=frozen(ENDPOINT_SCALAR_DEFAULTS),
    nested=frozen({"cors": CORS_DEFAULTS, "cache": ENDPOINT_CACHE_DEFAULTS,
                    "processor": PROCESSOR_DEFAULTS,
                    "systemDomainAuthentication": SYSTEM_DOMAIN_AUTH_DEFAULTS,
                    "methods": METHOD_DEFAULTS, "methods.responseFilters": RESPONSE_FILTER_DEFAULTS}),
    nullable=frozenset({"systemDomainAuthentication"}),
    keyed=frozen({"methods": "name", "methods.responseFilters": "name"}),
    opaque=frozenset({"processor.preInputs", "processor.postInputs"}),
    left_alone=frozenset({"methods", "methods.responseFilters"}),
    fields=ENDPOINT_READ_FIELDS,
    sub_resources=frozen({
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
