"""What an OpenAPI document says about addresses and keys: public host names and the base
path from ``servers`` (OpenAPI 3) or ``host``/``basePath`` (Swagger 2.0), and the API key's
location from the ``apiKey`` security scheme an operation (or the document) requires.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from apimctl.openapi.document import OpenApiDocument

# The platform's defaults (spec/SUPPLEMENT.md section 3): a key found there is not written.
DEFAULT_KEY_LOCATIONS, DEFAULT_KEY_NAME = ["request-parameters"], "api_key"
KEY_LOCATIONS = {"header": "request-header", "query": "request-parameters"}
SCHEME_PLACES = {v: k for k, v in KEY_LOCATIONS.items()}
_VARIABLE = re.compile(r"\{([^}]*)\}")


@dataclass(frozen=True)
class Servers:
    """The public host names (in order, without ports) and the base path of the first server."""

    hosts: tuple[str, ...]
    base_path: str


def servers(doc: OpenApiDocument) -> Servers:
    """The hosts and base path the document's servers name."""
    if doc.version == "2.0":
        host = str(doc.data.get("host") or "")
        return Servers(tuple(h for h in [_host(host)] if h), _clean(doc.data.get("basePath")))
    hosts: list[str] = []
    base = ""
    for index, server in enumerate(doc.data.get("servers") or []):
        url = _substitute(str(server.get("url", "")), server.get("variables") or {})
        parts = urlsplit(url if "//" in url else "//" + url if not url.startswith("/") else url)
        if index == 0:
            base = _clean(parts.path)
        host = _host(parts.netloc)
        if host and host not in hosts:
            hosts.append(host)
    return Servers(tuple(hosts), base)


def key_location(doc: OpenApiDocument, operation: Mapping[str, Any]) -> dict[str, Any]:
    """``apiKeyValueLocations``/``apiKeyValueLocationKey`` from the first ``apiKey`` scheme
    the operation (or else the document) requires in a header or the query; ``{}`` for
    none, or for the platform's default (the ``api_key`` query parameter)."""
    required = operation.get("security", doc.data.get("security")) or []
    schemes = _schemes(doc)
    for requirement in required:
        for name in requirement or {}:
            scheme = schemes.get(name) or {}
            where = KEY_LOCATIONS.get(str(scheme.get("in")))
            if scheme.get("type") == "apiKey" and where is not None:
                locations, key = [where], str(scheme.get("name"))
                if locations == DEFAULT_KEY_LOCATIONS and key == DEFAULT_KEY_NAME:
                    return {}
                return {"apiKeyValueLocations": locations, "apiKeyValueLocationKey": key}
    return {}


def _schemes(doc: OpenApiDocument) -> dict[str, Any]:
    if doc.version == "2.0":
        return dict(doc.data.get("securityDefinitions") or {})
    return dict((doc.data.get("components") or {}).get("securitySchemes") or {})


def _substitute(url: str, variables: Mapping[str, Any]) -> str:
    def value(found: re.Match[str]) -> str:
        return str((variables.get(found.group(1)) or {}).get("default", ""))
    return _VARIABLE.sub(value, url)


def _host(netloc: str) -> str:
    host = netloc.rsplit("@", 1)[-1]
    return host.split(":", 1)[0].strip().lower() if host else ""


def _clean(path: Any) -> str:
    text = str(path or "").rstrip("/")
    return "" if not text else text if text.startswith("/") else "/" + text


def joined(base: str, path: str) -> str:
    """``base`` and ``path`` as one request path (``/v1`` + ``/pets`` = ``/v1/pets``)."""
    return (base + path) if path != "/" or not base else base


def static_prefix(paths: Sequence[str]) -> str:
    """The path itself when all are the same; else their longest common prefix of whole
    segments, stopping before the first templated one (``{id}``); ``/`` when none."""
    if len(set(paths)) == 1:
        return paths[0]
    split = [p.strip("/").split("/") for p in paths]
    common: list[str] = []
    for parts in zip(*split, strict=False):
        if len(set(parts)) != 1 or parts[0].startswith("{"):
            break
        common.append(parts[0])
    return "/" + "/".join(common)
