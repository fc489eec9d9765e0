"""A service of the manifests described as an OpenAPI 3.1 document (``apimctl export
--openapi``): the reverse of :mod:`apimctl.openapi.mapping`.

Servers are the endpoints' public host names (``https://HOST``), each endpoint is the path
item at its ``requestPathAlias`` with one operation per supported HTTP method, an endpoint's
only method becomes the ``operationId`` of its only operation, an API key read from a
header or the query becomes an ``apiKey`` security scheme, CORS becomes the
``Access-Control-Allow-Origin`` header of the answers, and the messages of the endpoint's
error set become its error responses. Everything else the endpoint holds (and whatever the
document cannot say exactly) goes into ``x-apimctl-endpoint`` on the path item, and the
service's other fields into ``x-apimctl-service``, so importing the document gives the same
service back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from apimctl import kinds
from apimctl.openapi.extensions import ENDPOINT_EXTENSION, SERVICE_EXTENSION
from apimctl.openapi.mapping import METHOD_HEADER, SUPPORTED_VERBS
from apimctl.openapi.sources import DEFAULT_KEY_LOCATIONS, DEFAULT_KEY_NAME, SCHEME_PLACES

OPENAPI_VERSION = "3.1.0"
_STATUS = re.compile(r"^ERR_(\d{3})_")
ERROR_SET_FIELD = kinds.ERROR_SET.name  # an endpoint names its error set in the field of that name
_TEMPLATE = re.compile(r"\{([^}/]+)\}")
_ALWAYS = ("name", "requestPathAlias", "supportedHttpMethods")  # what the document always says
_PAIRED = ("methods", "apiMethodDetectionLocations", "apiMethodDetectionKey")  # with operationIds
_KEY = ("apiKeyValueLocations", "apiKeyValueLocationKey")  # with an apiKey security scheme


def describe_service(service: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``service`` (a manifest entry, defaults left out)."""
    endpoints = list(service.get(kinds.ENDPOINT.manifest_key) or [])
    hosts = list(dict.fromkeys(h for e in endpoints for h in e.get("publicDomains") or []))
    info: dict[str, Any] = {"title": service["name"], "version": str(service.get("version", ""))}
    if service.get("description"):
        info["description"] = service["description"]
    doc: dict[str, Any] = {"openapi": OPENAPI_VERSION, "info": info,
                           "servers": [{"url": f"https://{h}"} for h in hosts]}
    own = {k: v for k, v in service.items()
           if k not in ("name", "description", "version", kinds.ENDPOINT.manifest_key)}
    if own:
        doc[SERVICE_EXTENSION] = own
    error_sets = {str(s.get("name")): s for s in own.get(kinds.ERROR_SET.manifest_key) or []}
    schemes: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    used: set[str] = set()  # operationIds are unique in a document
    for endpoint in endpoints:
        alias = str(endpoint["requestPathAlias"])
        item = paths.setdefault(alias, _path_item(alias))
        _describe_endpoint(item, endpoint, hosts, error_sets, schemes, used)
    doc["paths"] = paths
    if schemes:
        doc["components"] = {"securitySchemes": schemes}
    return doc


def _describe_endpoint(item: dict[str, Any], endpoint: Mapping[str, Any], hosts: list[str],
                       error_sets: Mapping[str, Any], schemes: dict[str, Any],
                       used: set[str]) -> None:
    verbs = [v for v in SUPPORTED_VERBS if v in (endpoint.get("supportedHttpMethods") or ["get"])]
    method_ids = _operation_ids(endpoint, verbs, used)
    security = _security(endpoint, schemes)
    extra = _extension(endpoint, hosts, method_ids is not None, security is not None)
    responses = _responses(endpoint, error_sets)
    shared = str(endpoint["name"]) == str(endpoint["requestPathAlias"]) and not set(item) - {"parameters"}
    for index, verb in enumerate(verbs):
        operation: dict[str, Any] = {"summary": f"{endpoint['name']} ({verb.upper()})"}
        if method_ids is not None:
            operation["operationId"] = method_ids[index]
        if security is not None:
            operation["security"] = security
        operation["responses"] = responses
        if shared:
            if extra:
                item.setdefault(ENDPOINT_EXTENSION, extra)
        else:
            operation[ENDPOINT_EXTENSION] = {"name": endpoint["name"], **extra}
        item[verb] = operation


def _path_item(alias: str) -> dict[str, Any]:
    """An empty path item, declaring the parameters its path template names."""
    names = _TEMPLATE.findall(alias)
    if not names:
        return {}
    return {"parameters": [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
                           for n in dict.fromkeys(names)]}


def _operation_ids(endpoint: Mapping[str, Any], verbs: list[str], used: set[str]) -> list[str] | None:
    """The method's name as the operationId when the endpoint has one HTTP method and one
    method (live methods come back in name order, so with more the pairing is unknown),
    method detection is the import's (the header) and no other endpoint used the name;
    ``None`` otherwise (the methods then go into the extension)."""
    methods = endpoint.get("methods") or []
    detected = (endpoint.get("apiMethodDetectionLocations") == ["request-header"]
                and endpoint.get("apiMethodDetectionKey") == METHOD_HEADER)
    plain = all(set(m) == {"name"} for m in methods)
    names = [str(m.get("name")) for m in methods]
    if len(methods) != 1 or len(verbs) != 1 or not detected or not plain or used & set(names):
        return None
    used.update(names)
    return names


def _security(endpoint: Mapping[str, Any], schemes: dict[str, Any]) -> list[dict[str, Any]] | None:
    locations = endpoint.get("apiKeyValueLocations", DEFAULT_KEY_LOCATIONS)
    key = str(endpoint.get("apiKeyValueLocationKey", DEFAULT_KEY_NAME))
    place = SCHEME_PLACES.get(locations[0]) if len(locations) == 1 else None
    if place is None or endpoint.get("requestAuthenticationType", "apiKey") != "apiKey":
        return None
    name = f"{place}_{re.sub(r'[^A-Za-z0-9_.-]', '_', key)}"
    schemes[name] = {"type": "apiKey", "in": place, "name": key}
    return [{name: []}]


def _extension(endpoint: Mapping[str, Any], hosts: list[str], paired: bool,
               secured: bool) -> dict[str, Any]:
    native = {*_ALWAYS, *(_PAIRED if paired else ()), *(_KEY if secured else ())}
    out = {k: v for k, v in endpoint.items() if k not in native}
    if out.get("publicDomains") == hosts:
        del out["publicDomains"]
    domains = endpoint.get("publicDomains") or []
    if domains and out.get("trafficManagerDomain") == domains[0]:
        del out["trafficManagerDomain"]
    return out


def _error_messages(endpoint: Mapping[str, Any], error_sets: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The overridden messages of the endpoint's error set (its service's first when it names
    none), each with its set's ``type`` under ``_type``."""
    named = endpoint.get(ERROR_SET_FIELD)
    chosen = (error_sets.get(str(named)) if named else None) or next(iter(error_sets.values()), None)
    if not chosen:
        return []
    return [{**m, "_type": chosen.get("type")} for m in chosen.get("errorMessages") or []]


def _responses(endpoint: Mapping[str, Any], error_sets: Mapping[str, Any]) -> dict[str, Any]:
    ok: dict[str, Any] = {"description": "The back end's answer."}
    cors = endpoint.get("cors")
    if cors is not None:
        origins = "*" if cors.get("allDomainsEnabled", True) else ", ".join(cors.get("domainsAllowed") or [])
        ok["headers"] = {"Access-Control-Allow-Origin": {
            "description": f"CORS: {origins or 'no origin'} allowed", "schema": {"type": "string"}}}
    responses: dict[str, Any] = {"200": ok}
    for message in _error_messages(endpoint, error_sets):
        ident = str(message.get("id", ""))
        found = _STATUS.match(ident)
        if found is None:
            continue
        code, text = kinds.ERROR_CATALOG.get(ident, (int(found.group(1)), ident))
        answer = responses.setdefault(str(code), {"description": str(message.get("status") or text)})
        if message.get("responseBody"):
            media = str(message.get("_type") or kinds.ERROR_SET.defaults["type"])
            answer.setdefault("content", {media: {"examples": {}}})
            answer["content"][media]["examples"][ident] = {"value": message["responseBody"]}
    return responses
