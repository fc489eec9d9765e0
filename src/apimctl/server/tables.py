"""The specification's field tables, as data.

Every resource of the management API is described once here: its fields with type, the
Create / Update rules (``Req``, ``Opt``, ``Ign``, ``ReqCtx``), the Fetch rule (``Imp`` /
``Exp``), enum values, the defaults of SUPPLEMENT §3, write-only fields, nested resource
types, the id style and the timestamp style. :mod:`apimctl.server.catalog` pairs each table
with its rules; nothing else reads :data:`TABLES`.

Deliberate extensions of the specification's tables (documented for clients):

- Service ``cache`` (``{cacheTtl}``), ``securityProfile`` (``{oauth: {...} | null}``) and
  ``roles`` (``[{id, name, action}]``) are Exp fields of the Service, so that one list call
  with ``fields`` reads a whole area.
- Endpoint ``errorSet`` (``{id, name}`` or null), Method ``responseFilters``.
- The endpoints of a scheduled maintenance event are ``{id, name, serviceId}``.
- Member ``passwdNew`` and SystemDomainAuthentication ``password`` are write-only.
- Application and PackageKey ``isPackaged`` (Exp, computed): the specification names it as a
  ``search`` property; an application is packaged when it holds package keys, a package key
  always is.
"""

from __future__ import annotations

from apimctl.platform import FORWARDED_HEADERS, GRANT_TYPES, RETURNED_HEADERS, SPEC_NAME
from apimctl.server.fields import (
    ANY,
    BOOLEAN,
    DATETIME,
    ENUM,
    ENUM_LIST,
    INT_ENUM,
    INTEGER,
    MANY,
    OBJECT,
    ONE,
    REF,
    STRING,
    STRING_LIST,
    Field,
    Resource,
    exp,
    imp,
    std,
)

LOCATIONS = ("request-parameters", "request-path", "request-body", "request-header", "custom")
TIMEOUTS_REQUEST = (2, 5, 10, 20, 30, 45, 60)
TIMEOUTS_RESPONSE = (2, 5, 10, 20, 30, 45, 60, 120, 300, 600, 900, 1200)
PERIODS = ("minute", "hour", "day", "week", "month")

CROSSDOMAIN_POLICY = (
    '<?xml version="1.0"?>\n<!DOCTYPE cross-domain-policy SYSTEM '
    '"http://www.adobe.com/xml/dtds/cross-domain-policy.dtd">\n'
    "<cross-domain-policy>\n</cross-domain-policy>"
)

_TABLES: list[Resource] = [
    Resource("Domain", (imp("address", create="Req"),), id_style="none", ts_style=None),
    Resource("Cors", (
        imp("allDomainsEnabled", BOOLEAN, default=True),
        imp("subDomainMatchingAllowed", BOOLEAN),
        imp("maxAge", INTEGER, default=0),
        imp("cookiesAllowed", BOOLEAN),
        imp("domainsAllowed", STRING_LIST),
        imp("headersAllowed", STRING_LIST),
        imp("headersExposed", STRING_LIST),
    ), id_style="none", ts_style=None),
    Resource("EndpointCache", (
        imp("clientSurrogateControlEnabled", BOOLEAN),
        imp("contentCacheKeyHeaders", ENUM_LIST,
            values=("accept", "accept-charset", "accept-encoding", "accept-language")),
        imp("cacheTtlOverride", INTEGER, default=0),
        imp("includeApiKeyInContentCacheKey", BOOLEAN),
        imp("respondFromStaleCacheEnabled", BOOLEAN),
        imp("responseCacheControlEnabled", BOOLEAN),
        imp("varyHeaderEnabled", BOOLEAN),
    ), id_style="none", ts_style=None),
    Resource("Processor", (
        imp("adapter"),
        imp("preProcessEnabled", BOOLEAN),
        imp("postProcessEnabled", BOOLEAN),
        imp("preInputs", OBJECT),
        imp("postInputs", OBJECT),
    ), id_style="none", ts_style=None),
    Resource("SystemDomainAuthentication", (
        imp("type", ENUM, create="Req", values=("httpBasic", "clientSslCert")),
        imp("username"),
        imp("certificate"),
        imp("password", write_only=True),
    ), id_style="none", ts_style=None),
    Resource("ResponseFilter", (
        *std(),
        imp("name", create="Req"),
        imp("notes"),
        exp("xmlFilterFields", ANY, default=""),
        exp("jsonFilterFields", ANY, default=""),
    )),
    Resource("Method", (
        *std(),
        imp("name", create="Req"),
        exp("sampleJsonResponse"),
        exp("sampleXmlResponse"),
        exp("responseFilters", MANY, nested="ResponseFilter"),
    )),
    Resource("ScheduledMaintenanceEvent", (
        imp("id", create="Ign", update="Ign"),
        imp("created", DATETIME, create="Ign", update="Ign"),
        imp("updated", DATETIME, create="Ign", update="Ign"),
        imp("name", create="Req"),
        imp("startDateTime", DATETIME, create="Req"),
        imp("endDateTime", DATETIME, create="Req"),
        imp("endpoints", MANY, nested="ScheduledMaintenanceEventEndpoint", replace=True),
    )),
    Resource("Endpoint", (
        *std(),
        imp("name", create="Req"),
        exp("trafficManagerDomain", create="Req"),
        exp("requestPathAlias", create="Req"),
        exp("allowMissingApiKey", BOOLEAN),
        exp("apiKeyValueLocationKey", default="api_key"),
        exp("apiKeyValueLocations", ENUM_LIST, values=LOCATIONS, default=["request-parameters"]),
        exp("apiMethodDetectionKey"),
        exp("apiMethodDetectionLocations", ENUM_LIST, values=LOCATIONS, default=["request-path"]),
        exp("cache", ONE, nested="EndpointCache", autobuild=True),
        exp("cors", ONE, nested="Cors", autobuild=True),
        exp("connectionTimeoutForSystemDomainRequest", INT_ENUM, values=TIMEOUTS_REQUEST, default=2),
        exp("connectionTimeoutForSystemDomainResponse", INT_ENUM, values=TIMEOUTS_RESPONSE, default=5),
        exp("cookiesDuringHttpRedirectsEnabled", BOOLEAN),
        exp("customRequestAuthenticationAdapter", default=None, nullable=True),
        exp("dropApiKeyFromIncomingCall", BOOLEAN),
        exp("forceGzipOfBackendCall", BOOLEAN),
        exp("gzipPassthroughSupportEnabled", BOOLEAN),
        exp("headersToExcludeFromIncomingCall", STRING_LIST),
        exp("highSecurity", BOOLEAN),
        exp("hostPassthroughIncludedInBackendCallHeader", BOOLEAN),
        exp("inboundSslRequired", BOOLEAN),
        exp("jsonpCallbackParameter"),
        exp("jsonpCallbackParameterValue"),
        exp("scheduledMaintenanceEvent", ONE, nested="ScheduledMaintenanceEvent",
            computed="endpoint_event", nullable=True),
        exp("forwardedHeaders", ENUM_LIST, values=FORWARDED_HEADERS[SPEC_NAME]),
        exp("returnedHeaders", ENUM_LIST, values=RETURNED_HEADERS[SPEC_NAME]),
        exp("methods", MANY, nested="Method"),
        exp("numberOfHttpRedirectsToFollow", INTEGER, default=0),
        exp("outboundRequestTargetPath"),
        exp("outboundRequestTargetQueryParameters"),
        exp("outboundTransportProtocol", ENUM, values=("use-inbound", "http", "https"), default="https"),
        exp("processor", ONE, nested="Processor", autobuild=True),
        exp("publicDomains", MANY, nested="Domain"),
        exp("requestAuthenticationType", default="apiKey"),
        exp("requestProtocol", ENUM, values=("rest", "soap", "xml-rpc", "json-rpc", "other"), default="rest"),
        exp("oauthGrantTypes", ENUM_LIST, values=GRANT_TYPES[SPEC_NAME]),
        exp("supportedHttpMethods", ENUM_LIST,
            values=("get", "post", "put", "delete", "head", "options", "patch"), default=["get"]),
        exp("systemDomainAuthentication", ONE, nested="SystemDomainAuthentication", nullable=True),
        exp("systemDomains", MANY, nested="Domain"),
        exp("useSystemDomainCredentials", BOOLEAN),
        exp("systemDomainCredentialKey"),
        exp("systemDomainCredentialSecret"),
        exp("errorSet", REF, nested="ErrorSetRef", nullable=True),
    ), id_style="short"),
    Resource("ErrorSetRef", (imp("id"), imp("name")), id_style="ref", ts_style=None),
    Resource("ErrorMessage", (
        imp("id", create="Req", update="ReqCtx"),
        imp("code", INTEGER, create="Ign", update="Ign"),
        imp("status"),
        imp("detailHeader"),
        imp("responseBody"),
    ), id_style="catalog", ts_style=None),
    Resource("ErrorSet", (
        imp("id", create="Ign", update="ReqCtx"),
        imp("name", default="Default"),
        imp("type", default="application/json"),
        imp("jsonp", BOOLEAN),
        imp("jsonpType"),
        exp("errorMessages", MANY, nested="ErrorMessage"),
    ), ts_style=None),
    Resource("ServiceCache", (imp("cacheTtl", INTEGER, default=0),), id_style="none", ts_style=None),
    Resource("OAuth", (
        imp("accessTokenTtlEnabled", BOOLEAN),
        imp("accessTokenTtl", INTEGER, default=0),
        imp("authorizationCodeTtl", INTEGER, default=0),
        imp("refreshTokenEnabled", BOOLEAN),
        imp("refreshTokenTtl", INTEGER, default=0),
        imp("accessTokenType", ENUM, values=("bearer", "mac"), default="bearer"),
        imp("allowMultipleToken", BOOLEAN),
        imp("secureTokensEnabled", BOOLEAN),
        imp("forwardedHeaders", ENUM_LIST, values=("access-token", "client-id", "scope", "user-context")),
        imp("grantTypes", ENUM_LIST, values=GRANT_TYPES[SPEC_NAME]),
        imp("tokenBasedRateLimitsEnabled", BOOLEAN),
        imp("qpsLimitCeiling", INTEGER, default=0),
        imp("rateLimitCeiling", INTEGER, default=0),
        imp("forceSslRedirectUrlEnabled", BOOLEAN),
    ), id_style="none", ts_style=None),
    Resource("SecurityProfile", (
        imp("oauth", ONE, nested="OAuth", nullable=True),
    ), id_style="none", ts_style=None),
    Resource("ServiceRole", (
        imp("id", create="Req", update="ReqCtx"),
        imp("name", create="Ign", update="Ign"),
        imp("action", ENUM, values=("read",), default="read"),
    ), id_style="ref", ts_style=None),
    Resource("PlanRole", (
        imp("id", create="Req", update="ReqCtx"),
        imp("name", create="Ign", update="Ign"),
        imp("action", ENUM, values=("register_keys",), default="register_keys"),
    ), id_style="ref", ts_style=None),
    Resource("MemberRole", (
        imp("id", create="Req", update="ReqCtx"),
        imp("name", create="Ign", update="Ign"),
    ), id_style="ref", ts_style=None),
    Resource("Service", (
        *std(),
        imp("name", create="Req"),
        imp("version"),
        exp("description"),
        exp("editorHandle", create="Ign", update="Ign", nullable=True, default=None),
        exp("revisionNumber", INTEGER, create="Ign", update="Ign", default=1),
        exp("robotsPolicy", create="Ign", update="Ign"),
        exp("crossdomainPolicy", create="Ign", update="Ign", default=CROSSDOMAIN_POLICY),
        exp("qpsLimitOverall", INTEGER, default=0),
        exp("rfc3986Encode", BOOLEAN),
        exp("errorSets", MANY, nested="ErrorSet"),
        exp("endpoints", MANY, nested="Endpoint"),
        exp("cache", ONE, nested="ServiceCache", autobuild=True),
        exp("securityProfile", ONE, nested="SecurityProfile", autobuild=True),
        exp("roles", MANY, nested="ServiceRole"),
    ), id_style="short"),
    Resource("PlanMethod", (
        imp("id", create="Req", update="ReqCtx"),
        imp("name", create="Ign", update="Ign"),
    ), id_style="ref", ts_style=None),
    Resource("PlanEndpoint", (
        imp("id", create="Req", update="ReqCtx"),
        imp("name", create="Ign", update="Ign"),
        # entitling an endpoint without naming methods lets every method through
        imp("undefinedMethodsAllowed", BOOLEAN, default=True),
        imp("methods", MANY, nested="PlanMethod"),
    ), id_style="ref", ts_style=None),
    Resource("PlanService", (
        imp("id", create="Req", update="ReqCtx"),
        imp("name", create="Ign", update="Ign"),
        imp("endpoints", MANY, nested="PlanEndpoint"),
    ), id_style="ref", ts_style=None),
    Resource("Plan", (
        *std(),
        imp("name", create="Req"),
        imp("description"),
        exp("eav", OBJECT),
        imp("selfServiceKeyProvisioningEnabled", BOOLEAN, create="Ign", update="Ign"),
        imp("adminKeyProvisioningEnabled", BOOLEAN),
        exp("notes"),
        imp("maxNumKeysAllowed", INTEGER, default=5),
        imp("numKeysBeforeReview", INTEGER, default=1),
        imp("qpsLimitCeiling", INTEGER, default=0),
        imp("qpsLimitExempt", BOOLEAN),
        imp("qpsLimitKeyOverrideAllowed", BOOLEAN),
        imp("rateLimitCeiling", INTEGER, default=0),
        imp("rateLimitExempt", BOOLEAN),
        imp("rateLimitKeyOverrideAllowed", BOOLEAN),
        imp("rateLimitPeriod", ENUM, values=("minute", "hour", "day", "month"), default="day"),
        imp("responseFilterOverrideAllowed", BOOLEAN),
        imp("status", ENUM, create="Ign", update="Ign", values=("active", "inactive"), default="active"),
        exp("emailTemplateSetId", INTEGER, nullable=True, default=None),
        exp("services", MANY, nested="PlanService"),
        exp("roles", MANY, nested="PlanRole"),
    ), or_filters=True),
    Resource("Package", (
        *std(),
        imp("name", create="Req"),
        imp("description"),
        imp("notifyDeveloperPeriod", ENUM, values=PERIODS, default="hour"),
        exp("notifyDeveloperNearQuota", BOOLEAN),
        exp("notifyDeveloperOverQuota", BOOLEAN),
        exp("notifyDeveloperOverThrottle", BOOLEAN),
        imp("notifyAdminPeriod", ENUM, values=PERIODS, default="hour"),
        exp("notifyAdminNearQuota", BOOLEAN),
        exp("notifyAdminOverQuota", BOOLEAN),
        exp("notifyAdminOverThrottle", BOOLEAN),
        imp("notifyAdminEmails"),
        imp("nearQuotaThreshold", INTEGER, default=80),
        exp("eav", OBJECT),
        imp("keyAdapter"),
        imp("keyLength", INTEGER, default=24),
        imp("sharedSecretLength", INTEGER, default=10),
        exp("plans", MANY, nested="Plan"),
    ), or_filters=True),
    Resource("Organization", (
        *std(id_create="Req"),
        imp("name"),
        imp("description"),
        imp("parent", nullable=True, default=None),
        imp("isActive", BOOLEAN, default=True),
        exp("suborganizations", ANY, default=[]),
    )),
    Resource("Role", (
        *std(),
        imp("name", create="Req"),
        imp("description"),
        imp("isPredefined", BOOLEAN, create="Ign", update="Ign"),
        imp("isOrgrole", BOOLEAN, create="Ign", update="Ign"),
        imp("isAssignable", BOOLEAN, create="Ign", update="Ign", default=True),
        exp("group", REF, nested="Organization", nullable=True, default=None),
        exp("organization", REF, nested="Organization", nullable=True, default=None),
    )),
    Resource("DomainWhitelist", (
        imp("id", create="Ign", update="ReqCtx"),
        imp("created", DATETIME, create="Ign", update="Ign"),
        imp("updated", DATETIME, create="Ign", update="Ign"),
        imp("domain", create="Req", update="Req"),
        imp("status", ENUM, create="Ign", update="Ign", values=("active", "waiting"), default="waiting"),
    )),
    Resource("Limit", (imp("source"), imp("ceiling", INTEGER), imp("period")), id_style="none", ts_style=None),
    Resource("PackageRef", (imp("id", create="Req"), imp("name", create="Ign")), id_style="ref", ts_style=None),
    Resource("PackageKey", (
        *std(),
        imp("apikey", update="Ign"),
        imp("secret"),
        imp("rateLimitCeiling", INTEGER, nullable=True, default=None),
        imp("rateLimitExempt", BOOLEAN),
        imp("qpsLimitCeiling", INTEGER, nullable=True, default=None),
        imp("qpsLimitExempt", BOOLEAN),
        imp("status", default="active"),
        exp("limits", MANY, create="Ign", update="Ign", nested="Limit", computed="key_limits"),
        imp("package", REF, nested="PackageRef", computed="key_package"),
        imp("plan", REF, nested="PackageRef", computed="key_plan"),
        exp("isPackaged", BOOLEAN, create="Ign", update="Ign", computed="key_packaged"),
    ), ts_style="z", internal=("_applicationId", "_packageId", "_planId")),
    Resource("Application", (
        *std(),
        imp("name", create="Req"),
        imp("username", create="Req"),
        *(imp(n) for n in ("description", "type", "adsSystem", "usageModel", "tags", "notes",
                           "howDidYouHear", "preferredProtocol", "preferredOutput", "externalId",
                           "uri", "oauthRedirectUri")),
        imp("commercial", BOOLEAN),
        imp("ads", BOOLEAN),
        exp("packageKeys", MANY, create="Opt", update="Ign", nested="PackageKey",
            computed="application_keys"),
        exp("isPackaged", BOOLEAN, create="Ign", update="Ign", computed="application_packaged"),
    ), ts_style="z", internal=("_memberId",), bare_update=True, exact_fetch_filter=True),
    Resource("Member", (
        *std(),
        imp("username", create="Req"),
        imp("email", create="Req"),
        imp("displayName", create="Req"),
        imp("externalId", create="Req"),
        imp("passwdNew", create="Req", update="Ign", write_only=True),
        *(imp(n) for n in ("uri", "blog", "im", "imsvc", "phone", "company", "address1",
                           "address2", "locality", "region", "postalCode", "countryCode",
                           "firstName", "lastName")),
        imp("areaStatus", default="active"),
        exp("applications", MANY, create="Opt", update="Ign", nested="Application",
            computed="member_applications"),
        exp("packageKeys", MANY, create="Ign", update="Ign", nested="PackageKey",
            computed="member_keys"),
        exp("roles", MANY, nested="MemberRole"),
    ), ts_style="z"),
    Resource("EmailTemplate", (
        *std(),
        imp("from", create="Req"),
        imp("subject"),
        imp("body"),
        imp("type"),
    )),
    Resource("EmailTemplateSet", (
        *std(),
        imp("name", create="Req"),
        exp("emailTemplates", MANY, nested="EmailTemplate"),
    )),
    Resource("Hostname", (imp("address"),), id_style="none", ts_style=None),
]


def event_endpoint(endpoint: Resource) -> Resource:
    """The endpoints of a maintenance event: the Endpoint field set, read from the live
    endpoint (a view), plus ``stringsToTrimFromApiKey`` (stored with the link) and the
    ``serviceId`` of the endpoint (an extension, so that clients find the endpoint).
    The catalog derives it again from a dialect's Endpoint."""
    fields = [Field("id", STRING, "Req", "Ign", "Imp")]
    fields += [Field(f.name, f.type, "Ign", "Ign", f.fetch, f.values, f.default, f.write_only, f.nested,
                     f.nullable, f.computed) for f in endpoint.fields
               if f.name not in ("id", "scheduledMaintenanceEvent")]
    fields += [exp("stringsToTrimFromApiKey"), imp("serviceId", create="Ign", update="Ign")]
    return Resource("ScheduledMaintenanceEventEndpoint", tuple(fields), id_style="ref", ts_style=None,
                    view="event_endpoint")


_TABLES.append(event_endpoint(next(r for r in _TABLES if r.name == "Endpoint")))
TABLES: tuple[Resource, ...] = tuple(_TABLES)

