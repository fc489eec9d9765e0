"""An area built through the management API, its traffic listener in-process, a stub back end
and a virtual clock, for the traffic manager's tests (SUPPLEMENT §11), in either dialect.

:func:`build` creates, per dialect, a management app on a fresh database, the traffic app
beside it (clock :class:`Clock`, back-end transport :class:`Backend`), and the area of
:data:`ENDPOINTS`: one service with an endpoint per behaviour under test, a service with an
overall QPS limit, a package with plans Gold (QPS 3, 5 calls a minute, one method of
``methods``), Flex (key overrides allowed) and Free (exempt), members, applications and keys.
"""

from __future__ import annotations

import gzip
import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from apimctl.server import ServerConfig, create_app
from apimctl.server.traffic import create_traffic_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

TOKEN, AREA, OPERATOR = "traffic-token", "traffic", "traffic-operator"
HOST = "api.example.com"
BACKEND = "backend.example.net"
DEAD = "dead.example.net"
T0 = 1_900_000_000.0  # 2030-03-17T17:46:40Z, a Sunday


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


@dataclass
class Backend:
    """The stub back end: echoes what it received as JSON; ``/slow`` times out, ``/hop/N``
    redirects N times, ``/gzip`` answers gzip; the host ``dead.example.net`` refuses."""

    seen: list[httpx.Request] = field(default_factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        if request.url.host == DEAD:
            raise httpx.ConnectError("connection refused", request=request)
        path = request.url.path
        if path.startswith("/slow"):
            raise httpx.ReadTimeout("no answer", request=request)
        if path.startswith("/hop/"):
            left = int(path.rsplit("/", 1)[1])
            if left > 0:
                return httpx.Response(302, headers={"Location": f"/hop/{left - 1}", "Set-Cookie": "s=1; Path=/"})
        if path.startswith("/gzip"):
            return httpx.Response(200, headers={"Content-Encoding": "gzip", "Content-Type": "text/plain"},
                                  content=gzip.compress(b"zipped"))
        echo = {"method": request.method, "url": str(request.url), "path": path,
                "query": request.url.query.decode(), "headers": dict(request.headers),
                "body": request.content.decode("latin-1")}
        return httpx.Response(200, json=echo, headers={"X-Backend": "stub"})

    @property
    def last(self) -> httpx.Request:
        return self.seen[-1]


def _names(dialect: str, *values: str) -> list[str]:
    prefix = "svc" if dialect == "spec" else "mashery"
    return [f"{prefix}-{v}" for v in values]


def endpoints(dialect: str) -> list[dict[str, Any]]:
    common = {"publicDomains": [{"address": HOST}], "systemDomains": [{"address": BACKEND}],
              "trafficManagerDomain": HOST, "outboundTransportProtocol": "http"}
    cors = {"allDomainsEnabled": False, "subDomainMatchingAllowed": True, "maxAge": 60, "cookiesAllowed": True,
            "domainsAllowed": ["https://app.example.com"], "headersAllowed": ["X-Api-Key"],
            "headersExposed": ["X-Backend"]}
    eps: list[dict[str, Any]] = [
        {"name": "Forecast", "requestPathAlias": "/v2/forecast", "supportedHttpMethods": ["get", "post"],
         "cors": cors, "forwardedHeaders": _names(dialect, "host", "message-id", "service-id"),
         "returnedHeaders": _names(dialect, "message-id", "responder"),
         "outboundRequestTargetPath": "/internal/forecast", "outboundRequestTargetQueryParameters": "src=tm",
         "headersToExcludeFromIncomingCall": ["X-Secret"], "errorSet": {"name": "JSON errors"}},
        {"name": "Header Key", "requestPathAlias": "/v2/hdr", "supportedHttpMethods": ["get"],
         "apiKeyValueLocations": ["request-header"], "apiKeyValueLocationKey": "X-Api-Key",
         "dropApiKeyFromIncomingCall": True},
        {"name": "Path Key", "requestPathAlias": "/v2/path", "supportedHttpMethods": ["get"],
         "apiKeyValueLocations": ["request-path"], "apiKeyValueLocationKey": "3",
         "dropApiKeyFromIncomingCall": True},
        {"name": "Body Key", "requestPathAlias": "/v2/body", "supportedHttpMethods": ["post"],
         "apiKeyValueLocations": ["request-body"], "apiKeyValueLocationKey": "key",
         "useSystemDomainCredentials": True, "systemDomainCredentialKey": "backend-key"},
        {"name": "Secure", "requestPathAlias": "/v2/secure", "supportedHttpMethods": ["get"],
         "inboundSslRequired": True},
        {"name": "Open", "requestPathAlias": "/v2/open", "supportedHttpMethods": ["get"],
         "allowMissingApiKey": True},
        {"name": "Methods", "requestPathAlias": "/v2/methods", "supportedHttpMethods": ["get"],
         "apiMethodDetectionLocations": ["request-parameters"], "apiMethodDetectionKey": "method",
         "methods": [{"name": "daily"}, {"name": "hourly"}]},
        {"name": "Slow", "requestPathAlias": "/v2/slow", "supportedHttpMethods": ["get"],
         "outboundRequestTargetPath": "/slow"},
        {"name": "Hops", "requestPathAlias": "/v2/hops", "supportedHttpMethods": ["get"],
         "outboundRequestTargetPath": "/hop", "numberOfHttpRedirectsToFollow": 2,
         "cookiesDuringHttpRedirectsEnabled": True},
        {"name": "Zip", "requestPathAlias": "/v2/zip", "supportedHttpMethods": ["get"],
         "outboundRequestTargetPath": "/gzip", "gzipPassthroughSupportEnabled": True},
        {"name": "Maintained", "requestPathAlias": "/v2/maintained", "supportedHttpMethods": ["get"]},
        {"name": "Jsonp", "requestPathAlias": "/v2/jsonp", "supportedHttpMethods": ["get"],
         "jsonpCallbackParameter": "callback", "errorSet": {"name": "JSONP errors"}},
        {"name": "OAuth", "requestPathAlias": "/v2/oauth", "supportedHttpMethods": ["get"],
         "requestAuthenticationType": "oauth"},
        {"name": "Limited Headers", "requestPathAlias": "/v2/counted", "supportedHttpMethods": ["get"],
         **({"rateLimitHeadersEnabled": True} if dialect == "mashery" else {})},
    ]
    dead = {"name": "Dead", "requestPathAlias": "/v2/dead", "supportedHttpMethods": ["get"],
            "systemDomains": [{"address": DEAD}]}
    return [{**common, **ep} for ep in [*eps, dead]]


ERROR_SETS = [
    {"name": "JSON errors", "type": "application/json", "errorMessages": [
        {"id": "ERR_403_DEVELOPER_OVER_QPS", "status": "Too Many Requests",
         "detailHeader": "Slow down", "responseBody": '{"error":"slow down"}'},
        {"id": "ERR_403_NOT_AUTHORIZED", "status": "Unauthorized",
         "detailHeader": "No key", "responseBody": '{"error":"key please"}'}]},
    {"name": "JSONP errors", "type": "application/json", "jsonp": True, "jsonpType": "cb"},
]


def _one(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code < 300, response.text
    body = response.json()
    return body[0] if isinstance(body, list) else body  # type: ignore[no-any-return]


@dataclass
class Area:
    dialect: str
    management: TestClient
    traffic: TestClient
    backend: Backend
    clock: Clock
    service: dict[str, Any]
    keys: dict[str, str]
    error_header: str

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.traffic.request(method, f"http://{HOST}{path}", **kwargs)

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.management.request(method, f"/v3/rest{path}", headers={"Authorization": f"Bearer {TOKEN}"},
                                       **kwargs)

    def endpoint(self, name: str) -> dict[str, Any]:
        return next(e for e in self.service["endpoints"] if e["name"] == name)


def _plans(service: dict[str, Any], limited: dict[str, Any]) -> list[dict[str, Any]]:
    eps = [{"id": e["id"]} for e in service["endpoints"] if e["name"] != "Methods"]
    methods_ep = next(e for e in service["endpoints"] if e["name"] == "Methods")
    daily = next(m for m in methods_ep["methods"] if m["name"] == "daily")
    gold_services = [{"id": service["id"], "endpoints": [*eps, {"id": methods_ep["id"], "methods": [{"id": daily["id"]}]}]},
                     {"id": limited["id"], "endpoints": [{"id": e["id"]} for e in limited["endpoints"]]}]
    return [
        {"name": "Gold", "qpsLimitCeiling": 3, "rateLimitCeiling": 5, "rateLimitPeriod": "minute",
         "services": gold_services},
        {"name": "Flex", "qpsLimitCeiling": 1, "qpsLimitKeyOverrideAllowed": True, "rateLimitCeiling": 0,
         "services": [{"id": service["id"], "endpoints": eps}]},
        {"name": "Free", "qpsLimitCeiling": 1, "qpsLimitExempt": True, "rateLimitCeiling": 1,
         "rateLimitExempt": True, "services": [{"id": service["id"], "endpoints": eps}]},
    ]


def _populate(api: Any, dialect: str) -> tuple[dict[str, Any], dict[str, str]]:
    for domain in ("example.com", "example.net"):
        _one(api("POST", "/domains", json={"domain": domain}))
    service = _one(api("POST", "/services", json={"name": "Weather", "errorSets": ERROR_SETS}))
    sets = {s["name"]: s["id"] for s in _one(api("GET", f"/services/{service['id']}", params={"fields": "errorSets"}))["errorSets"]}
    for ep in endpoints(dialect):
        if "errorSet" in ep:
            ep = {**ep, "errorSet": {"id": sets[ep["errorSet"]["name"]]}}
        _one(api("POST", f"/services/{service['id']}/endpoints", json=ep))
    service = _one(api("GET", f"/services/{service['id']}", params={"fields": "id,name,endpoints.id,endpoints.name,endpoints.methods.id,endpoints.methods.name"}))
    limited = _one(api("POST", "/services", json={"name": "Limited", "qpsLimitOverall": 2, "endpoints": [
        {"name": "Busy", "requestPathAlias": "/v2/busy", "supportedHttpMethods": ["get"],
         "publicDomains": [{"address": HOST}], "systemDomains": [{"address": BACKEND}],
         "trafficManagerDomain": HOST, "outboundTransportProtocol": "http"}]}))
    limited = _one(api("GET", f"/services/{limited['id']}", params={"fields": "id,endpoints"}))
    package = _one(api("POST", "/packages", json={"name": "Partners", "plans": _plans(service, limited)}))
    package = _one(api("GET", f"/packages/{package['id']}", params={"fields": "id,plans"}))
    plans = {p["name"]: p["id"] for p in package["plans"]}
    member = _one(api("POST", "/members", json={"username": "ann", "email": "ann@example.com", "displayName": "Ann",
                                               "externalId": "ann", "passwdNew": "pw-ann-123456"}))
    app = _one(api("POST", f"/members/{member['id']}/applications", json={"name": "Ann app", "username": "ann"}))
    keys: dict[str, str] = {}
    specs = {"gold": ("Gold", {}), "gold2": ("Gold", {}), "gold3": ("Gold", {}), "flex": ("Flex", {"qpsLimitCeiling": 4}),
             "free": ("Free", {}), "waiting": ("Gold", {"status": "waiting"}), "noapikey": ("Gold", {})}
    for name, (plan, extra) in specs.items():
        value = name if name == "noapikey" else f"{name}-key-0123456789"
        _one(api("POST", f"/applications/{app['id']}/packageKeys", json={
            "apikey": value, "package": {"id": package["id"]}, "plan": {"id": plans[plan]}, **extra}))
        keys[name] = value
    maintained = next(e for e in service["endpoints"] if e["name"] == "Maintained")
    _one(api("POST", "/scheduledMaintenanceEvents", json={
        "name": "Upgrade", "startDateTime": "2030-03-18T02:00:00Z", "endDateTime": "2030-03-18T04:00:00Z",
        "endpoints": [{"id": maintained["id"]}]}))
    return service, keys


@contextmanager
def build(tmp: Path, dialect: str) -> Iterator[Area]:
    config = ServerConfig(db_path=str(tmp / f"{dialect}.db"), tokens={TOKEN: AREA}, auto_approve_domains=True,
                          operator_token=OPERATOR, dialect=dialect)
    management_app = create_app(config)
    clock, backend = Clock(), Backend()
    traffic_app = create_traffic_app(management_app, clock=clock, transport=httpx.MockTransport(backend.handle))
    with TestClient(management_app) as management, TestClient(traffic_app) as traffic:
        def api(method: str, path: str, **kwargs: Any) -> httpx.Response:
            return management.request(method, f"/v3/rest{path}", headers={"Authorization": f"Bearer {TOKEN}"}, **kwargs)

        service, keys = _populate(api, dialect)
        header = "X-Svc-Error-Code" if dialect == "spec" else "X-Mashery-Error-Code"
        yield Area(dialect, management, traffic, backend, clock, service, keys, header)
    management_app.state.server.close()


def echo(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, (response.status_code, response.headers, response.text)
    return json.loads(response.text)  # type: ignore[no-any-return]
