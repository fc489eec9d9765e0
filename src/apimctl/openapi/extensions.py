"""The ``x-apimctl-*`` extensions of an OpenAPI document: their JSON Schema and reading them.

Like decK's ``x-kong-*``, two extensions carry what OpenAPI has no word for:

- ``x-apimctl-service`` (document only): fields of the service (``name``, ``errorSets``,
  ``qpsLimitOverall``, ``cache``, ...), in the manifest's own shape;
- ``x-apimctl-endpoint`` (document, path item or operation): fields of the endpoint the
  operations become (``name``, ``cors``, ``errorSet``, ``apiKeyValueLocations``,
  ``connectionTimeoutForSystemDomainResponse``, ``systemDomains``, ...). The document's value
  applies to every endpoint, a path item's to the endpoints of its operations, an
  operation's to the endpoint of that operation; the most specific wins, field by field.

Their schema is the manifest schema's service and endpoint definitions with nothing required
(:func:`extensions_schema`; shipped as ``schemas/openapi-extensions.schema.json``).
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from typing import Any

import jsonschema

from apimctl import kinds
from apimctl.manifests.schema import manifest_schema
from apimctl.openapi.document import OpenApiDocument, Pointer

SERVICE_EXTENSION = "x-apimctl-service"
ENDPOINT_EXTENSION = "x-apimctl-endpoint"
SCHEMA_ID = "https://apimctl.dev/schemas/openapi-extensions.schema.json"


def extensions_schema() -> dict[str, Any]:
    """The JSON Schema of the two extensions, made from the manifest schema."""
    manifest = manifest_schema()
    defs = copy.deepcopy(manifest["$defs"])
    service = dict(defs[kinds.SERVICE.name], required=[])
    service["properties"] = {k: v for k, v in service["properties"].items()
                             if k != kinds.ENDPOINT.manifest_key}
    endpoint = dict(defs[kinds.ENDPOINT.name], required=[])
    defs["serviceExtension"] = service
    defs["endpointExtension"] = endpoint
    defs = {k: defs[k] for k in _reachable(defs, ["serviceExtension", "endpointExtension"])}
    return {
        "$schema": manifest["$schema"], "$id": SCHEMA_ID,
        "title": "apimctl extensions of OpenAPI documents",
        "description": f"{SERVICE_EXTENSION} (on the document) and {ENDPOINT_EXTENSION} (on the "
                       "document, a path item or an operation): manifest fields that OpenAPI "
                       "cannot express, read by `apimctl import openapi` and written by "
                       "`apimctl export --openapi`.",
        "type": "object",
        "properties": {SERVICE_EXTENSION: {"$ref": "#/$defs/serviceExtension"},
                       ENDPOINT_EXTENSION: {"$ref": "#/$defs/endpointExtension"}},
        "$defs": defs,
    }


def _reachable(defs: dict[str, Any], roots: list[str]) -> list[str]:
    """The definitions ``roots`` refer to, directly or not, and the roots, in ``defs`` order."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_refs(defs[name]))
    return [k for k in defs if k in seen]


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [str(node["$ref"]).rsplit("/", 1)[-1]] if isinstance(node.get("$ref"), str) else []
        return found + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def render_schema() -> str:
    """The schema as the shipped file holds it."""
    return json.dumps(extensions_schema(), indent=2, ensure_ascii=False) + "\n"


@functools.cache
def _validator() -> Any:
    schema = extensions_schema()
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def extension(doc: OpenApiDocument, node: Mapping[str, Any], path: Pointer,
              name: str) -> dict[str, Any]:
    """The value of extension ``name`` on ``node`` (at ``path`` in ``doc``), checked against
    the schema; ``{}`` when absent. Raises :class:`OpenApiError` located in the document."""
    value = node.get(name)
    if value is None:
        return {}
    errors = sorted(_validator().iter_errors({name: value}), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        rel = tuple(first.absolute_path)
        raise doc.fail((*path, *rel), f"{name}: {first.message}")
    return dict(value)
