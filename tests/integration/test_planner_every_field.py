"""Every field of every kind: a configuration created by hand through the API, in the API's
own shapes, plans to zero changes against the same manifest (with bare and one-element-array
responses); then each field changed out of band shows as exactly that one change.

Both dialects of the reference server (the ``dialect`` fixture): the manifest is written in
the specification's words (``svc-*``, hyphenated grant types) and plans to zero against a
``mashery`` area built by hand in its own words, or applied by apimctl; messages the
manifest lists without ``detailHeader`` compare with the dialect's default (SUPPLEMENT §10.5);
the fields only real deployments have (§10.8) are carried through writes untouched and
compared only when the manifest names them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from apimctl.api.client import ApiClient
from apimctl.applying.run import ApplyOptions, apply_plan
from apimctl.manifests import load_manifests
from apimctl.manifests.model import Manifest
from apimctl.planning import make_plan
from apimctl.plans.model import Plan
from apimctl.server import ServerConfig, create_app
from apimctl.state.live import read_raw

from .dialect_support import (
    MASHERY,
    SPEC,
    many,
    message_default,
    one,
    role_change,
    role_writes,
    spoken,
)

BASE = "http://area/v3/rest"
TOKEN = "every-field"
ENV = {"TILES_SECRET": "s3cr3t-value", "TILES_PASSWORD": "pa55-value"}
MANIFEST = """\
domains:
  - example.com
  - {domain: example.net}
roles:
  - Partners
  - {name: Internal, description: Staff only}
services:
  - name: Maps
    description: Map tiles
    version: "3.1"
    qpsLimitOverall: 50
    rfc3986Encode: true
    cache: {cacheTtl: 300}
    roles: [Partners, Internal]
    errorSets:
      - name: JSON errors
        type: application/json
        jsonp: true
        jsonpType: application/javascript
        errorMessages:
          - {id: ERR_403_DEVELOPER_OVER_QPS, status: Too Many Requests, detailHeader: X-Slow, responseBody: '{"error":"slow down"}'}
          - {id: ERR_502_BAD_GATEWAY, responseBody: upstream}
          - {id: ERR_403_DEVELOPER_OVER_RATE, status: Over the limit}
      - name: XML errors
        type: application/xml
    endpoints:
      - name: Tiles
        requestPathAlias: /v1/tiles
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com, www.example.com]
        systemDomains: [backend.example.net]
        errorSet: XML errors
        allowMissingApiKey: true
        apiKeyValueLocationKey: key
        apiKeyValueLocations: [request-header, request-parameters]
        apiMethodDetectionKey: "2"
        apiMethodDetectionLocations: [request-path, request-header]
        connectionTimeoutForSystemDomainRequest: 10
        connectionTimeoutForSystemDomainResponse: 120
        cookiesDuringHttpRedirectsEnabled: true
        customRequestAuthenticationAdapter: com.example.Auth
        dropApiKeyFromIncomingCall: true
        forceGzipOfBackendCall: true
        gzipPassthroughSupportEnabled: true
        headersToExcludeFromIncomingCall: [X-Debug, X-Trace]
        highSecurity: true
        hostPassthroughIncludedInBackendCallHeader: true
        inboundSslRequired: true
        jsonpCallbackParameter: callback
        jsonpCallbackParameterValue: cb
        forwardedHeaders: [svc-host, svc-message-id, svc-service-id]
        returnedHeaders: [svc-responder, svc-message-id]
        numberOfHttpRedirectsToFollow: 3
        outboundRequestTargetPath: /tiles
        outboundRequestTargetQueryParameters: "a=1&b=2"
        outboundTransportProtocol: use-inbound
        requestAuthenticationType: apiKeyAndSecret_SHA256
        requestProtocol: json-rpc
        supportedHttpMethods: [get, post, put, delete, head, options, patch]
        useSystemDomainCredentials: true
        systemDomainCredentialKey: backend-key
        systemDomainCredentialSecret: ${TILES_SECRET}
        cors:
          allDomainsEnabled: false
          subDomainMatchingAllowed: true
          maxAge: 60
          cookiesAllowed: true
          domainsAllowed: ["https://app.example.com", "https://b.example.com"]
          headersAllowed: [X-A, X-B]
          headersExposed: [X-C]
        cache:
          clientSurrogateControlEnabled: true
          contentCacheKeyHeaders: [accept, accept-language]
          cacheTtlOverride: 30
          includeApiKeyInContentCacheKey: true
          respondFromStaleCacheEnabled: true
          responseCacheControlEnabled: true
          varyHeaderEnabled: true
        processor:
          adapter: com.example.Proc
          preProcessEnabled: true
          postProcessEnabled: true
          preInputs: {a: "1", b: two}
          postInputs: {c: "3"}
        systemDomainAuthentication:
          type: httpBasic
          username: svc
          password: ${TILES_PASSWORD}
        methods:
          - name: getTile
            sampleJsonResponse: '{"tile":1}'
            sampleXmlResponse: '<tile/>'
            responseFilters:
              - {name: public, notes: hide internals, jsonFilterFields: "a,b", xmlFilterFields: "/x"}
              - {name: minimal}
          - name: putTile
      - name: Plain
        requestPathAlias: /v1/plain
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
  - name: Auth
    securityProfile:
      oauth:
        accessTokenTtlEnabled: true
        accessTokenTtl: 3600
        authorizationCodeTtl: 300
        refreshTokenEnabled: true
        refreshTokenTtl: 86400
        accessTokenType: mac
        allowMultipleToken: true
        secureTokensEnabled: true
        forwardedHeaders: [access-token, client-id, scope, user-context]
        grantTypes: [authorization-code, client-credentials]
        tokenBasedRateLimitsEnabled: true
        qpsLimitCeiling: 5
        rateLimitCeiling: 1000
        forceSslRedirectUrlEnabled: true
    endpoints:
      - name: Token
        requestPathAlias: /oauth/token
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [auth.example.net]
        requestAuthenticationType: oauth
        apiKeyValueLocations: []
        oauthGrantTypes: [client-credentials, authorization-code]
        systemDomainAuthentication:
          type: clientSslCert
          certificate: "-----BEGIN CERTIFICATE-----abc"
packages:
  - name: Partners
    description: Partner access
    notifyDeveloperPeriod: day
    notifyDeveloperNearQuota: true
    notifyDeveloperOverQuota: true
    notifyDeveloperOverThrottle: true
    notifyAdminPeriod: week
    notifyAdminNearQuota: true
    notifyAdminOverQuota: true
    notifyAdminOverThrottle: true
    notifyAdminEmails: ops@example.com
    nearQuotaThreshold: 90
    eav: {team: maps, tier: "1"}
    keyAdapter: com.example.Keys
    keyLength: 32
    sharedSecretLength: 16
    plans:
      - name: Gold
        description: Top tier
        eav: {sku: G1}
        adminKeyProvisioningEnabled: true
        notes: negotiated
        maxNumKeysAllowed: 10
        numKeysBeforeReview: 3
        qpsLimitCeiling: 20
        qpsLimitExempt: true
        qpsLimitKeyOverrideAllowed: true
        rateLimitCeiling: 100000
        rateLimitExempt: true
        rateLimitKeyOverrideAllowed: true
        rateLimitPeriod: month
        responseFilterOverrideAllowed: true
        roles: [Partners]
        services:
          - name: Maps
            endpoints:
              - {name: Tiles, undefinedMethodsAllowed: false, methods: [getTile]}
              - Plain
          - name: Auth
            endpoints: [Token]
      - name: Free
        services: [{name: Maps, endpoints: [Plain]}]
scheduledMaintenanceEvents:
  - name: Upgrade
    startDateTime: "2026-12-01T02:00:00Z"
    endDateTime: "2026-12-01T04:30:00.000+0000"
    endpoints: [{service: Maps, endpoint: Tiles}, {service: Auth, endpoint: Token}]
"""

Call = tuple[str, str, Any]  # method, path, body


class Api:
    """Raw API calls as a person would make them by hand (bare bodies, API field shapes, the
    ``dialect``'s words and ways of writing role permissions)."""

    def __init__(self, client: httpx.AsyncClient, dialect: str = SPEC) -> None:
        self.client = client
        self.dialect = dialect

    async def send(self, method: str, path: str, body: Any = None) -> Any:
        reply = await self.client.request(method, path, json=body)
        assert reply.status_code < 300, (method, path, reply.status_code, reply.text)
        if not reply.content:
            return None
        data = reply.json()
        return data[0] if isinstance(data, list) and len(data) == 1 else data

    async def post(self, path: str, body: Any) -> Any:
        return await self.send("POST", path, body)

    async def put(self, path: str, body: Any) -> Any:
        return await self.send("PUT", path, body)

    async def grant(self, path: str, roles: list[dict[str, Any]], action: str) -> None:
        """Role permissions at ``path`` (none before), written the dialect's way (§10.7)."""
        for method, at, body in role_writes(self.dialect, path, [r["id"] for r in roles], action):
            await self.send(method, at, body)


TILES: dict[str, Any] = {
    "name": "Tiles", "requestPathAlias": "/v1/tiles", "trafficManagerDomain": "api.example.com",
    "publicDomains": [{"address": "www.example.com"}, {"address": "api.example.com"}],
    "systemDomains": [{"address": "backend.example.net"}],
    "allowMissingApiKey": True, "apiKeyValueLocationKey": "key",
    "apiKeyValueLocations": ["request-parameters", "request-header"], "apiMethodDetectionKey": "2",
    "apiMethodDetectionLocations": ["request-header", "request-path"],
    "connectionTimeoutForSystemDomainRequest": 10, "connectionTimeoutForSystemDomainResponse": 120,
    "cookiesDuringHttpRedirectsEnabled": True, "customRequestAuthenticationAdapter": "com.example.Auth",
    "dropApiKeyFromIncomingCall": True, "forceGzipOfBackendCall": True,
    "gzipPassthroughSupportEnabled": True, "headersToExcludeFromIncomingCall": ["X-Debug", "X-Trace"],
    "highSecurity": True, "hostPassthroughIncludedInBackendCallHeader": True,
    "inboundSslRequired": True, "jsonpCallbackParameter": "callback",
    "jsonpCallbackParameterValue": "cb",
    "forwardedHeaders": ["svc-service-id", "svc-host", "svc-message-id"],
    "returnedHeaders": ["svc-message-id", "svc-responder"], "numberOfHttpRedirectsToFollow": 3,
    "outboundRequestTargetPath": "/tiles", "outboundRequestTargetQueryParameters": "a=1&b=2",
    "outboundTransportProtocol": "use-inbound", "requestAuthenticationType": "apiKeyAndSecret_SHA256",
    "requestProtocol": "json-rpc",
    "supportedHttpMethods": ["patch", "get", "post", "put", "delete", "head", "options"],
    "useSystemDomainCredentials": True, "systemDomainCredentialKey": "backend-key",
    "systemDomainCredentialSecret": "s3cr3t-value",
}
CORS = {"allDomainsEnabled": False, "subDomainMatchingAllowed": True, "maxAge": 60,
        "cookiesAllowed": True, "domainsAllowed": ["https://app.example.com", "https://b.example.com"],
        "headersAllowed": ["X-A", "X-B"], "headersExposed": ["X-C"]}
CACHE = {"clientSurrogateControlEnabled": True, "contentCacheKeyHeaders": ["accept-language", "accept"],
         "cacheTtlOverride": 30, "includeApiKeyInContentCacheKey": True,
         "respondFromStaleCacheEnabled": True, "responseCacheControlEnabled": True,
         "varyHeaderEnabled": True}
PROCESSOR = {"adapter": "com.example.Proc", "preProcessEnabled": True, "postProcessEnabled": True,
             "preInputs": {"b": "two", "a": "1"}, "postInputs": {"c": "3"}}
OAUTH = {"accessTokenTtlEnabled": True, "accessTokenTtl": 3600, "authorizationCodeTtl": 300,
         "refreshTokenEnabled": True, "refreshTokenTtl": 86400, "accessTokenType": "mac",
         "allowMultipleToken": True, "secureTokensEnabled": True,
         "forwardedHeaders": ["user-context", "access-token", "client-id", "scope"],
         "grantTypes": ["client-credentials", "authorization-code"],
         "tokenBasedRateLimitsEnabled": True, "qpsLimitCeiling": 5, "rateLimitCeiling": 1000,
         "forceSslRedirectUrlEnabled": True}
PACKAGE = {"name": "Partners", "description": "Partner access", "notifyDeveloperPeriod": "day",
           "notifyDeveloperNearQuota": True, "notifyDeveloperOverQuota": True,
           "notifyDeveloperOverThrottle": True, "notifyAdminPeriod": "week",
           "notifyAdminNearQuota": True, "notifyAdminOverQuota": True, "notifyAdminOverThrottle": True,
           "notifyAdminEmails": "ops@example.com", "nearQuotaThreshold": 90,
           "eav": {"tier": "1", "team": "maps"}, "keyAdapter": "com.example.Keys", "keyLength": 32,
           "sharedSecretLength": 16}
GOLD = {"name": "Gold", "description": "Top tier", "eav": {"sku": "G1"},
        "adminKeyProvisioningEnabled": True, "notes": "negotiated", "maxNumKeysAllowed": 10,
        "numKeysBeforeReview": 3, "qpsLimitCeiling": 20, "qpsLimitExempt": True,
        "qpsLimitKeyOverrideAllowed": True, "rateLimitCeiling": 100000, "rateLimitExempt": True,
        "rateLimitKeyOverrideAllowed": True, "rateLimitPeriod": "month",
        "responseFilterOverrideAllowed": True}


async def by_hand(api: Api) -> None:
    """The manifest's configuration, one API call at a time, in the dialect's words."""
    await api.post("/domains", {"domain": "example.com"})
    await api.post("/domains", {"domain": "example.net"})
    partners = await api.post("/roles", {"name": "Partners"})
    internal = await api.post("/roles", {"name": "Internal", "description": "Staff only"})
    maps = await api.post("/services", {"name": "Maps", "description": "Map tiles", "version": "3.1",
                                        "qpsLimitOverall": 50, "rfc3986Encode": True})
    svc = f"/services/{maps['id']}"
    await api.post(f"{svc}/cache", {"cacheTtl": 300})
    await api.grant(f"{svc}/roles", [partners, internal], "read")
    default_sets = await api.send("GET", f"{svc}/errorSets")
    json_set = await api.post(f"{svc}/errorSets", {"name": "JSON errors", "type": "application/json",
                                                   "jsonp": True, "jsonpType": "application/javascript"})
    messages = f"{svc}/errorSets/{json_set['id']}/errorMessages"
    await api.put(f"{messages}/ERR_403_DEVELOPER_OVER_QPS",
                  {"id": "ERR_403_DEVELOPER_OVER_QPS", "status": "Too Many Requests",
                   "detailHeader": "X-Slow", "responseBody": '{"error":"slow down"}'})
    await api.put(f"{messages}/ERR_502_BAD_GATEWAY", {"id": "ERR_502_BAD_GATEWAY", "responseBody": "upstream"})
    await api.put(f"{messages}/ERR_403_DEVELOPER_OVER_RATE",
                  {"id": "ERR_403_DEVELOPER_OVER_RATE", "status": "Over the limit"})
    xml_set = await api.post(f"{svc}/errorSets", {"name": "XML errors", "type": "application/xml"})
    for old in default_sets if isinstance(default_sets, list) else [default_sets]:
        await api.send("DELETE", f"{svc}/errorSets/{old['id']}")
    tiles = await api.post(f"{svc}/endpoints", {**spoken(api.dialect, TILES), "errorSet": {"id": xml_set["id"]}})
    ep = f"{svc}/endpoints/{tiles['id']}"
    await api.post(f"{ep}/cors", CORS)
    await api.post(f"{ep}/cache", CACHE)
    await api.put(ep, {"id": tiles["id"], "processor": PROCESSOR})
    await api.post(f"{ep}/systemDomainAuthentication",
                   {"type": "httpBasic", "username": "svc", "password": "pa55-value"})
    get_tile = await api.post(f"{ep}/methods", {"name": "getTile", "sampleJsonResponse": '{"tile":1}',
                                                "sampleXmlResponse": "<tile/>"})
    await api.post(f"{ep}/methods", {"name": "putTile"})
    filters = f"{ep}/methods/{get_tile['id']}/responseFilters"
    await api.post(filters, {"name": "public", "notes": "hide internals", "jsonFilterFields": "a,b",
                             "xmlFilterFields": "/x"})
    await api.post(filters, {"name": "minimal"})
    plain = await api.post(f"{svc}/endpoints", {
        "name": "Plain", "requestPathAlias": "/v1/plain", "trafficManagerDomain": "api.example.com",
        "publicDomains": [{"address": "api.example.com"}],
        "systemDomains": [{"address": "backend.example.net"}]})
    auth = await api.post("/services", {"name": "Auth"})
    await api.post(f"/services/{auth['id']}/securityProfile/oauth", spoken(api.dialect, OAUTH))
    token = await api.post(f"/services/{auth['id']}/endpoints", {
        "name": "Token", "requestPathAlias": "/oauth/token", "trafficManagerDomain": "api.example.com",
        "publicDomains": [{"address": "api.example.com"}], "systemDomains": [{"address": "auth.example.net"}],
        "requestAuthenticationType": "oauth", "apiKeyValueLocations": [],
        "oauthGrantTypes": spoken(api.dialect, ["authorization-code", "client-credentials"])})
    await api.post(f"/services/{auth['id']}/endpoints/{token['id']}/systemDomainAuthentication",
                   {"type": "clientSslCert", "certificate": "-----BEGIN CERTIFICATE-----abc"})
    package = await api.post("/packages", PACKAGE)
    gold = await api.post(f"/packages/{package['id']}/plans", GOLD)
    plan = f"/packages/{package['id']}/plans/{gold['id']}"
    await api.grant(f"{plan}/roles", [partners], "register_keys")
    # no endpoints listed: none entitled yet (a ``mashery`` area would entitle them all, §10.6)
    await api.post(f"{plan}/services", {"id": maps["id"], "endpoints": []})
    await api.post(f"{plan}/services/{maps['id']}/endpoints", {"id": tiles["id"], "undefinedMethodsAllowed": False})
    await api.post(f"{plan}/services/{maps['id']}/endpoints",
                   {"id": plain["id"], "undefinedMethodsAllowed": True})
    await api.post(f"{plan}/services/{maps['id']}/endpoints/{tiles['id']}/methods", {"id": get_tile["id"]})
    await api.post(f"{plan}/services", {"id": auth["id"], "endpoints": []})
    await api.post(f"{plan}/services/{auth['id']}/endpoints",
                   {"id": token["id"], "undefinedMethodsAllowed": True})
    await api.post(f"/packages/{package['id']}/plans", {"name": "Free", "services": [
        {"id": maps["id"], "endpoints": [{"id": plain["id"], "undefinedMethodsAllowed": True}]}]})
    event = await api.post("/scheduledMaintenanceEvents", {
        "name": "Upgrade", "startDateTime": "2026-12-01T02:00:00.000+0000",
        "endDateTime": "2026-12-01T04:30:00Z", "endpoints": [{"id": token["id"]}]})
    await api.post(f"/scheduledMaintenanceEvents/{event['id']}/endpoints", {"id": tiles["id"]})


# change, revert, expected address, expected path (``None``: the plan must not change)
Mutation = tuple[Call, Call, str, str | None]


def _flip(path: str, body_of: Callable[[Any], Any], values: dict[str, tuple[Any, Any]],
          addr: str, prefix: str = "", method: str = "PUT") -> list[Mutation]:
    return [((method, path, body_of({name: new})), (method, path, body_of({name: old})), addr,
             prefix + name) for name, (new, old) in values.items()]


def mutations(raw: dict[str, list[dict[str, Any]]], dialect: str) -> list[Mutation]:
    """One out-of-band change per field (and its revert), with the change the plan must show,
    written in the dialect's words and ways."""
    services = {s["name"]: s for s in raw["service"]}
    maps, auth = services["Maps"], services["Auth"]
    sid, aid = maps["id"], auth["id"]
    tiles = next(e for e in maps["endpoints"] if e["name"] == "Tiles")
    eid = tiles["id"]
    ep = f"/services/{sid}/endpoints/{eid}"
    sets = {s["name"]: s["id"] for s in maps["errorSets"]}
    package = raw["package"][0]
    gold = next(p for p in package["plans"] if p["name"] == "Gold")
    plan = f"/packages/{package['id']}/plans/{gold['id']}"
    roles = {r["name"]: r["id"] for r in raw["role"]}
    get_tile = next(m for m in tiles["methods"] if m["name"] == "getTile")
    method = f"{ep}/methods/{get_tile['id']}"
    public = next(f for f in get_tile["responseFilters"] if f["name"] == "public")
    event = f"/scheduledMaintenanceEvents/{raw['maintenanceEvent'][0]['id']}"
    tiles_body = spoken(dialect, TILES)
    endpoint_fields = {
        name: (spoken(dialect, alt), tiles_body[name]) for name, alt in {
            "requestPathAlias": "/v1/other", "trafficManagerDomain": "x.example.com",
            "allowMissingApiKey": False, "apiKeyValueLocationKey": "k2",
            "apiKeyValueLocations": ["request-header"], "apiMethodDetectionKey": "3",
            "apiMethodDetectionLocations": ["request-path"],
            "connectionTimeoutForSystemDomainRequest": 20,
            "connectionTimeoutForSystemDomainResponse": 60, "cookiesDuringHttpRedirectsEnabled": False,
            "customRequestAuthenticationAdapter": "other", "dropApiKeyFromIncomingCall": False,
            "forceGzipOfBackendCall": False, "gzipPassthroughSupportEnabled": False,
            "headersToExcludeFromIncomingCall": ["X-Debug"], "highSecurity": False,
            "hostPassthroughIncludedInBackendCallHeader": False, "inboundSslRequired": False,
            "jsonpCallbackParameter": "cb2", "jsonpCallbackParameterValue": "x",
            "forwardedHeaders": ["svc-host"], "returnedHeaders": [],
            "numberOfHttpRedirectsToFollow": 1, "outboundRequestTargetPath": "/t",
            "outboundRequestTargetQueryParameters": "", "outboundTransportProtocol": "http",
            "requestAuthenticationType": "apiKey", "requestProtocol": "soap",
            "supportedHttpMethods": ["get"], "useSystemDomainCredentials": False,
            "systemDomainCredentialKey": "k", "systemDomainCredentialSecret": "changed",
            "publicDomains": [{"address": "api.example.com"}],
            "systemDomains": [{"address": "other.example.net"}],
        }.items()}
    endpoint_fields["errorSet"] = ({"id": sets["JSON errors"]}, {"id": sets["XML errors"]})
    with_id = lambda body: {"id": eid, **body}  # noqa: E731
    same = lambda body: body  # noqa: E731
    out = _flip(ep, with_id, endpoint_fields, "endpoint:Maps/Tiles")
    out += _flip(f"{ep}/cors", same, {k: (_other(v), v) for k, v in CORS.items()},
                 "endpoint:Maps/Tiles", "cors.")
    out += _flip(f"{ep}/cache", same, {k: (_other(v), v) for k, v in CACHE.items()},
                 "endpoint:Maps/Tiles", "cache.")
    out += [(("PUT", ep, {"id": eid, "processor": {**PROCESSOR, k: _other(v)}}),
             ("PUT", ep, {"id": eid, "processor": PROCESSOR}), "endpoint:Maps/Tiles", f"processor.{k}")
            for k, v in PROCESSOR.items()]
    out += _flip(f"{ep}/systemDomainAuthentication", same, {"certificate": ("pem", "")},
                 "endpoint:Maps/Tiles", "systemDomainAuthentication.")
    out += _flip(method, same, {"sampleJsonResponse": ("{}", '{"tile":1}'), "sampleXmlResponse": ("", "<tile/>")},
                 "endpoint:Maps/Tiles", "methods[getTile].")
    out += _flip(f"{method}/responseFilters/{public['id']}", same,
                 {"notes": ("n", "hide internals"), "jsonFilterFields": ("a", "a,b"),
                  "xmlFilterFields": ("", "/x")}, "endpoint:Maps/Tiles",
                 "methods[getTile].responseFilters[public].")
    out += _flip(f"/services/{sid}", lambda b: {"id": sid, **b},
                 {"description": ("d", "Map tiles"), "version": ("4", "3.1"),
                  "qpsLimitOverall": (1, 50), "rfc3986Encode": (False, True)}, "service:Maps")
    out += _flip(f"/services/{sid}/cache", same, {"cacheTtl": (1, 300)}, "service:Maps", "cache.")
    out.append((*role_change(dialect, f"/services/{sid}/roles", [roles["Partners"], roles["Internal"]],
                             roles["Internal"], "read"), "service:Maps", "roles"))
    out += _flip(f"/services/{aid}/securityProfile/oauth", same,
                 {k: (spoken(dialect, _other(v)), spoken(dialect, v)) for k, v in OAUTH.items()},
                 "service:Auth", "securityProfile.oauth.")
    out += _flip(f"/services/{sid}/errorSets/{sets['JSON errors']}", same,
                 {"type": ("text/plain", "application/json"), "jsonp": (False, True),
                  "jsonpType": ("", "application/javascript")}, "errorSet:Maps/JSON errors")
    for msg, name, new, old in (("ERR_403_DEVELOPER_OVER_QPS", "status", "x", "Too Many Requests"),
                                ("ERR_400_BAD_REQUEST", "responseBody", "x", ""),
                                # listed without detailHeader, and not listed: the dialect's default
                                ("ERR_403_DEVELOPER_OVER_RATE", "detailHeader", "x",
                                 message_default(dialect, "ERR_403_DEVELOPER_OVER_RATE")),
                                ("ERR_403_NOT_AUTHORIZED", "detailHeader", "x",
                                 message_default(dialect, "ERR_403_NOT_AUTHORIZED"))):
        path = f"/services/{sid}/errorSets/{sets['JSON errors']}/errorMessages/{msg}"
        out.append((("PUT", path, {"id": msg, name: new}), ("PUT", path, {"id": msg, name: old}),
                    "errorSet:Maps/JSON errors", f"errorMessages[{msg}].{name}"))
    out += _flip(f"/packages/{package['id']}", lambda b: {"id": package["id"], **b},
                 {k: (_other(v), v) for k, v in PACKAGE.items() if k != "name"}, "package:Partners")
    out += _flip(plan, lambda b: {"id": gold["id"], **b},
                 {k: (_other(v), v) for k, v in GOLD.items() if k != "name"}, "plan:Partners/Gold")
    out.append((*role_change(dialect, f"{plan}/roles", [roles["Partners"]], roles["Partners"], "register_keys"),
                "plan:Partners/Gold", "roles"))
    entitled = f"{plan}/services/{sid}/endpoints/{eid}/methods"
    out.append((("DELETE", f"{entitled}/{get_tile['id']}", None), ("POST", entitled, {"id": get_tile["id"]}),
                "plan:Partners/Gold", "services[Maps].endpoints[Tiles].methods"))
    out += _flip(event, same, {"startDateTime": ("2026-12-01T01:00:00Z", "2026-12-01T02:00:00.000+0000")},
                 "maintenanceEvent:Upgrade")
    out.append((("DELETE", f"{event}/endpoints/{eid}", None), ("POST", f"{event}/endpoints", {"id": eid}),
                "maintenanceEvent:Upgrade", "endpoints"))
    if dialect == MASHERY:  # §10.8: fields the manifest does not name are never compared
        extra = _flip(ep, with_id, {k: (v, EXTRA_ENDPOINT[k]) for k, v in EXTRA_ENDPOINT_SET.items()},
                      "endpoint:Maps/Tiles")
        extra += _flip(f"/services/{aid}/securityProfile/oauth", same,
                       {k: (v, EXTRA_OAUTH[k]) for k, v in EXTRA_OAUTH_SET.items()}, "service:Auth",
                       "securityProfile.oauth.")
        extra += _flip(f"/services/{sid}", lambda b: {"id": sid, **b}, {"organization": (PARTNERS_ORG, None)},
                       "service:Maps")
        extra += _flip(f"/packages/{package['id']}", lambda b: {"id": package["id"], **b},
                       {"organization": (PARTNERS_ORG, None)}, "package:Partners")
        out += [(change, revert, addr, None) for change, revert, addr, _ in extra]
    return out


# §10.8: the fields of real deployments, at their defaults and changed
EXTRA_ENDPOINT = {"inboundMsslRequired": False, "userControlledErrorLocation": "",
                  "userControlledErrorLocationKey": "", "rateLimitHeadersEnabled": False}
EXTRA_ENDPOINT_SET = {"inboundMsslRequired": True, "userControlledErrorLocation": "parameter",
                      "userControlledErrorLocationKey": "format", "rateLimitHeadersEnabled": True}
EXTRA_OAUTH = {"masheryTokenApiEnabled": False, "enableRefreshTokenTtl": False,
               "forceOauthRedirectUrl": False, "macAlgorithm": None}
EXTRA_OAUTH_SET = {"masheryTokenApiEnabled": True, "enableRefreshTokenTtl": True,
                   "forceOauthRedirectUrl": True, "macAlgorithm": "hmac-sha-256"}
# an organization every area is seeded with (apimctl.server.seed)
PARTNERS_ORG = {"id": "00000000-0000-4000-8000-000000000002", "name": "Partners"}


_ALTERNATIVES: dict[Any, Any] = {
    "day": "hour", "week": "day", "month": "day", "mac": "bearer", "com.example.Proc": "x",
}


def _other(value: Any) -> Any:
    """A valid value different from ``value``."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1 if value < 80 else value - 1
    if isinstance(value, str):
        return _ALTERNATIVES.get(value, value + "-x" if value else "x")
    if isinstance(value, list):
        return value[:1] if len(value) > 1 else []
    if isinstance(value, dict):
        return {}
    raise TypeError(value)


def _manifest(tmp_path: Path, text: str = MANIFEST) -> Manifest:
    path = tmp_path / "every.yaml"
    path.write_text(text, encoding="utf-8")
    return load_manifests([str(path)], env=ENV)


def _area(tmp_path: Path, object_responses: bool, dialect: str) -> httpx.ASGITransport:
    config = ServerConfig(db_path=str(tmp_path / "area.db"), tokens={TOKEN: "area"},
                          auto_approve_domains=True, object_responses=object_responses, dialect=dialect)
    return httpx.ASGITransport(app=create_app(config))


async def _plan(transport: httpx.AsyncBaseTransport, manifest: Manifest) -> Plan:
    async with ApiClient(BASE, token=TOKEN, qps=None, transport=transport) as client:
        return await make_plan(client, manifest)


async def _changes(transport: httpx.AsyncBaseTransport, manifest: Manifest) -> list[tuple[str, str]]:
    plan = await _plan(transport, manifest)
    return [(s.address, c.path) for s in plan.steps for c in s.changes]


async def _apply(transport: httpx.AsyncBaseTransport, manifest: Manifest) -> Plan:
    async with ApiClient(BASE, token=TOKEN, qps=None, transport=transport) as client:
        plan = await make_plan(client, manifest)
        result = await apply_plan(client, plan, ApplyOptions(env=ENV))
    assert result.ok, result.to_json()
    return plan


def _run(transport: httpx.ASGITransport, body: Callable[[Api], Awaitable[Any]], dialect: str = SPEC) -> Any:
    async def go() -> Any:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(transport=transport, base_url=BASE, headers=headers) as http:
            return await body(Api(http, dialect))
    return asyncio.run(go())


def _raw(transport: httpx.ASGITransport) -> dict[str, list[dict[str, Any]]]:
    async def go() -> dict[str, list[dict[str, Any]]]:
        async with ApiClient(BASE, token=TOKEN, qps=None, transport=transport) as client:
            return await read_raw(client)
    return asyncio.run(go())


async def set_extra_fields(api: Api) -> None:
    """§10.8: every field of real deployments away from its default, as an operator would."""
    services = {s["name"]: s["id"] for s in many(await api.send("GET", "/services"))}
    maps, auth = services["Maps"], services["Auth"]
    tiles = next(e for e in many(await api.send("GET", f"/services/{maps}/endpoints")) if e["name"] == "Tiles")
    await api.put(f"/services/{maps}/endpoints/{tiles['id']}", {"id": tiles["id"], **EXTRA_ENDPOINT_SET})
    await api.put(f"/services/{auth}/securityProfile/oauth", EXTRA_OAUTH_SET)
    await api.put(f"/services/{maps}", {"id": maps, "organization": PARTNERS_ORG})
    (package,) = many(await api.send("GET", "/packages"))
    await api.put(f"/packages/{package['id']}", {"id": package["id"], "organization": PARTNERS_ORG})


async def extra_fields(api: Api) -> dict[str, Any]:
    """The §10.8 fields the area holds (read directly, not through apimctl)."""
    services = {s["name"]: s for s in many(await api.send("GET", "/services?fields=id,name,organization"))}
    maps, auth = services["Maps"], services["Auth"]
    endpoints = many(await api.send("GET", f"/services/{maps['id']}/endpoints?fields=name,{','.join(EXTRA_ENDPOINT)}"))
    tiles = next(e for e in endpoints if e["name"] == "Tiles")
    oauth = one(await api.send("GET", f"/services/{auth['id']}/securityProfile/oauth"))
    (package,) = many(await api.send("GET", "/packages?fields=id,organization"))
    return {"Tiles": {k: tiles[k] for k in EXTRA_ENDPOINT}, "oauth": {k: oauth[k] for k in EXTRA_OAUTH},
            "Maps.organization": maps["organization"], "Auth.organization": auth["organization"],
            "package.organization": package["organization"]}


@pytest.mark.parametrize("object_responses", [False, True], ids=["array-responses", "object-responses"])
def test_hand_applied_every_field_plans_to_zero(tmp_path: Path, object_responses: bool, dialect: str) -> None:
    if dialect == MASHERY and object_responses:
        pytest.skip("the mashery dialect answers single objects bare either way")
    transport = _area(tmp_path, object_responses, dialect)
    manifest = _manifest(tmp_path)
    _run(transport, by_hand, dialect)
    if dialect == MASHERY:
        _run(transport, set_extra_fields, dialect)
    assert asyncio.run(_changes(transport, manifest)) == []


def test_applied_every_field_plans_to_zero_in_the_dialects_words(tmp_path: Path, dialect: str) -> None:
    """The manifest (the specification's words) applied by apimctl to an empty area: the
    area holds the dialect's words and defaults, and the next plan is empty."""
    transport = _area(tmp_path, False, dialect)
    manifest = _manifest(tmp_path)
    asyncio.run(_apply(transport, manifest))
    assert asyncio.run(_changes(transport, manifest)) == []
    raw = _raw(transport)
    services = {s["name"]: s for s in raw["service"]}
    tiles = next(e for e in services["Maps"]["endpoints"] if e["name"] == "Tiles")
    assert sorted(tiles["forwardedHeaders"]) == spoken(dialect, ["svc-host", "svc-message-id", "svc-service-id"])
    assert sorted(tiles["returnedHeaders"]) == spoken(dialect, ["svc-message-id", "svc-responder"])
    oauth = services["Auth"]["securityProfile"]["oauth"]
    assert sorted(oauth["grantTypes"]) == spoken(dialect, ["authorization-code", "client-credentials"])
    token = services["Auth"]["endpoints"][0]
    assert sorted(token["oauthGrantTypes"]) == spoken(dialect, ["authorization-code", "client-credentials"])
    plain = next(e for e in services["Maps"]["endpoints"] if e["name"] == "Plain")
    assert plain["returnedHeaders"] == (["mashery-responder"] if dialect == MASHERY else [])  # not written
    json_set = next(s for s in services["Maps"]["errorSets"] if s["name"] == "JSON errors")
    details = {m["id"]: m["detailHeader"] for m in json_set["errorMessages"]}
    for mid in ("ERR_403_DEVELOPER_OVER_RATE", "ERR_403_NOT_AUTHORIZED", "ERR_502_BAD_GATEWAY"):
        assert details[mid] == message_default(dialect, mid), mid  # unwritten: the platform's default
    assert details["ERR_403_DEVELOPER_OVER_QPS"] == "X-Slow"


CHANGED = {  # manifest text -> changed text: one write to each object holding §10.8 fields
    "requestPathAlias: /v1/tiles\n": "requestPathAlias: /v1/tiles-2\n",
    "accessTokenTtl: 3600": "accessTokenTtl: 7200",
    "description: Map tiles": "description: Maps",
    "description: Partner access": "description: Partners only",
}


def test_extra_fields_are_carried_through_and_compared_only_when_named(tmp_path: Path) -> None:
    """§10.8 in a ``mashery`` area: the fields a manifest does not name survive apimctl's
    writes to their objects untouched; named, they are compared and written like any other."""
    transport = _area(tmp_path, False, MASHERY)
    _run(transport, by_hand, MASHERY)
    _run(transport, set_extra_fields, MASHERY)
    before = _run(transport, extra_fields, MASHERY)
    assert before == {"Tiles": EXTRA_ENDPOINT_SET, "oauth": EXTRA_OAUTH_SET, "Maps.organization": PARTNERS_ORG,
                      "Auth.organization": None, "package.organization": PARTNERS_ORG}

    text = MANIFEST
    for old, new in CHANGED.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    changed = _manifest(tmp_path, text)
    plan = asyncio.run(_apply(transport, changed))
    assert sorted((s.address, c.path) for s in plan.steps for c in s.changes) == [
        ("endpoint:Maps/Tiles", "requestPathAlias"), ("package:Partners", "description"),
        ("service:Auth", "securityProfile.oauth.accessTokenTtl"), ("service:Maps", "description")]
    assert _run(transport, extra_fields, MASHERY) == before
    assert asyncio.run(_changes(transport, changed)) == []

    named = _manifest(tmp_path, text.replace("        errorSet: XML errors\n",
                                             "        errorSet: XML errors\n        inboundMsslRequired: false\n", 1)
                      .replace("        accessTokenTtl: 7200\n",
                               "        accessTokenTtl: 7200\n        macAlgorithm: hmac-sha-1\n", 1))
    assert sorted(asyncio.run(_changes(transport, named))) == [
        ("endpoint:Maps/Tiles", "inboundMsslRequired"), ("service:Auth", "securityProfile.oauth.macAlgorithm")]
    asyncio.run(_apply(transport, named))
    after = _run(transport, extra_fields, MASHERY)
    assert after["Tiles"] == {**EXTRA_ENDPOINT_SET, "inboundMsslRequired": False}
    assert after["oauth"] == {**EXTRA_OAUTH_SET, "macAlgorithm": "hmac-sha-1"}
    assert asyncio.run(_changes(transport, named)) == []


@pytest.mark.slow
def test_each_field_changed_out_of_band_is_exactly_one_change(tmp_path: Path, dialect: str) -> None:
    transport = _area(tmp_path, False, dialect)
    manifest = _manifest(tmp_path)
    _run(transport, by_hand, dialect)
    todo = mutations(_raw(transport), dialect)
    assert len(todo) > 100

    async def each(api: Api) -> list[Any]:  # one event loop for all (the server's threads are kept)
        wrong = []
        for (method, path, body), (r_method, r_path, r_body), addr, field_path in todo:
            await api.send(method, path, body)
            got = await _changes(transport, manifest)
            want = [] if field_path is None else [(addr, field_path)]
            if field_path is not None and field_path.startswith("systemDomainAuthentication."):
                # the write-only password is written along whenever its object is
                want.append((addr, "systemDomainAuthentication.password"))
            if got != want:
                wrong.append((addr, field_path, got))
            await api.send(r_method, r_path, r_body)
        return wrong

    assert _run(transport, each, dialect) == []
    assert asyncio.run(_changes(transport, manifest)) == []
