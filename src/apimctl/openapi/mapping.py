"""An OpenAPI document turned into one service of the manifests (``apimctl import openapi``).

:func:`import_service` reads the validated document (:mod:`apimctl.openapi.document`) and
groups its operations into endpoints: one per path (the default), per static path prefix, or
per first tag. Each endpoint gets its ``requestPathAlias`` from the base path of the first
server and the group's path, its public domains from the servers' hosts, the HTTP methods of
its operations as ``supportedHttpMethods``, one method per ``operationId`` (with method
detection in the ``X-Operation-Id`` header unless the extensions say otherwise), the key
location from the ``apiKey`` security scheme, and every other field from the
``x-apimctl-endpoint`` extensions and the command's options
(:mod:`apimctl.openapi.extensions`). The service is then written as an export of the area it
is applied to writes it (:mod:`apimctl.openapi.canonical`): endpoints and methods by name,
fields equal to the platform's defaults left out.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Literal

import jsonschema

from apimctl import kinds
from apimctl.errors import Problem
from apimctl.kinds.ops import escape_literal
from apimctl.manifests.model import format_path
from apimctl.manifests.schema import manifest_schema
from apimctl.openapi.canonical import exported_form
from apimctl.openapi.document import (
    HTTP_VERBS,
    OpenApiDocument,
    OpenApiError,
    Pointer,
    ReadOptions,
    load_document,
)
from apimctl.openapi.extensions import ENDPOINT_EXTENSION, SERVICE_EXTENSION, extension
from apimctl.openapi.reading import SHOWN
from apimctl.openapi.sources import joined, key_location, servers, static_prefix

Grouping = Literal["path", "prefix", "tag"]
GROUPINGS: tuple[Grouping, ...] = ("path", "prefix", "tag")
SUPPORTED_VERBS = tuple(v for v in HTTP_VERBS if v != "trace")
METHOD_HEADER = "X-Operation-Id"
UNTAGGED = "default"


@dataclass(frozen=True)
class ImportOptions:
    """What the command line adds to the document: the service's name, the grouping, the
    public host names and base path (instead of the servers'), endpoint fields given as
    options (applied to every endpoint, over the document's own ``x-apimctl-endpoint``), and
    how the document is read (the hosts its ``$ref`` may fetch from; ``lenient``)."""

    service: str | None = None
    group: Grouping = "path"
    public_domains: tuple[str, ...] = ()
    path_prefix: str | None = None
    endpoint: Mapping[str, Any] = field(default_factory=dict)
    read: ReadOptions = field(default_factory=ReadOptions)


@dataclass
class Imported:
    """The service made from the document, its source, and what the import left out."""

    service: dict[str, Any]
    source: OpenApiDocument
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Operation:
    path: str
    verb: str
    pointer: Pointer
    operation_id: str | None
    tags: list[str]
    fields: dict[str, Any]
    key: dict[str, Any]


def import_openapi(file: str, options: ImportOptions | None = None,
                   stdin: IO[bytes] | None = None) -> Imported:
    """Read the document in ``file`` (``-``: ``stdin``) and make its service (see the module
    docstring)."""
    options = options or ImportOptions()
    return import_service(load_document(file, options.read, stdin), options)


def import_service(doc: OpenApiDocument, options: ImportOptions) -> Imported:
    """The service of ``doc`` as ``options`` ask."""
    warnings = _ignored(doc)
    operations = _operations(doc, options, warnings)
    if not operations:
        raise doc.fail(("paths",), "the document has no operations to make endpoints of")
    found = servers(doc)
    hosts = list(options.public_domains or found.hosts)
    base = found.base_path if options.path_prefix is None else options.path_prefix.rstrip("/")
    groups: dict[str, list[_Operation]] = {}
    for op in operations:
        groups.setdefault(_group_key(op, options.group), []).append(op)
    endpoints = [_endpoint(doc, name, ops, hosts, base, options.group) for name, ops in groups.items()]
    _check_unique(doc, endpoints, groups)
    service = _service(doc, options, endpoints)
    _check_schema(doc, service)
    return Imported(exported_form(service), doc, warnings)


def _ignored(doc: OpenApiDocument) -> list[str]:
    """What a lenient read left unchecked, one line each (the first ``SHOWN``)."""
    lines = [f"{p} (ignored with --lenient: the import does not read it)" for p in doc.ignored[:SHOWN]]
    if len(doc.ignored) > SHOWN:
        lines.append(f"… and {len(doc.ignored) - SHOWN} more problems ignored with --lenient")
    return lines


def _operations(doc: OpenApiDocument, options: ImportOptions, warnings: list[str]) -> list[_Operation]:
    top = {**extension(doc, doc.data, (), ENDPOINT_EXTENSION), **options.endpoint}
    out: list[_Operation] = []
    for path, item in doc.path_items():
        where: Pointer = ("paths", path)
        if "#" in path:
            _unreachable(doc, path, item, options, warnings)
            continue
        shared = {**top, **extension(doc, item, where, ENDPOINT_EXTENSION)}
        for verb in HTTP_VERBS:
            operation = item.get(verb)
            if not isinstance(operation, Mapping):
                continue
            if verb not in SUPPORTED_VERBS:
                warnings.append(f"{verb.upper()} {path}: the platform has no {verb} endpoints; left out")
                continue
            own = extension(doc, operation, (*where, verb), ENDPOINT_EXTENSION)
            out.append(_Operation(path, verb, (*where, verb), operation.get("operationId"),
                                  [str(t) for t in operation.get("tags") or []],
                                  {**shared, **own}, key_location(doc, operation)))
    return out


def _unreachable(doc: OpenApiDocument, path: str, item: Mapping[str, Any], options: ImportOptions,
                 warnings: list[str]) -> None:
    """A path with a fragment (``/#X-Amz-Target=...``): a client never sends the fragment, so
    no call reaches such an alias; refused, or its operations left out with ``lenient``."""
    reason = (f"path {path!r} carries a fragment ({path[path.index('#'):]!r}): a client never "
              "sends it, so no call could reach this endpoint")
    if not options.read.lenient:
        raise doc.fail(("paths", path), f"{reason}; --lenient leaves its operations out")
    verbs = [verb.upper() for verb in HTTP_VERBS if isinstance(item.get(verb), Mapping)]
    line, col = doc.where(("paths", path))
    warnings.append(f"{doc.file}:{line}:{col}: {reason}; left out ({', '.join(verbs) or 'no operations'})")


def _group_key(op: _Operation, group: Grouping) -> str:
    named = op.fields.get("name")
    if named:
        return str(named)
    if group == "tag":
        return op.tags[0] if op.tags else UNTAGGED
    if group == "prefix":
        return _static(op.path)
    return op.path


def _static(path: str) -> str:
    """The part of ``path`` before its first templated segment (``/pets/{id}``: ``/pets``)."""
    static = itertools.takewhile(lambda part: not part.startswith("{"), path.strip("/").split("/"))
    return "/" + "/".join(static)


def _endpoint(doc: OpenApiDocument, name: str, ops: list[_Operation], hosts: list[str],
              base: str, group: Grouping) -> dict[str, Any]:
    fields = _shared_fields(doc, ops)
    paths = list(dict.fromkeys(op.path for op in ops))
    if group == "prefix":  # the static parts too: the alias stops before the first template
        paths += [_static(path) for path in paths]
    endpoint: dict[str, Any] = {"name": name,
                                "requestPathAlias": joined(base, static_prefix(paths))}
    domains = fields.get("publicDomains", hosts)
    manager = fields.get("trafficManagerDomain") or (domains[0] if domains else None)
    if manager is None:
        raise doc.fail(ops[0].pointer, f"endpoint {name!r}: no public host name: the document's "
                       "servers name none; give --public-domain")
    endpoint["trafficManagerDomain"] = manager
    endpoint["publicDomains"] = list(domains)
    endpoint["supportedHttpMethods"] = [v for v in SUPPORTED_VERBS if any(op.verb == v for op in ops)]
    endpoint.update(next((op.key for op in ops if op.key), {}))
    methods = [{"name": str(op.operation_id)} for op in ops if op.operation_id]
    if methods:
        endpoint["apiMethodDetectionLocations"] = ["request-header"]
        endpoint["apiMethodDetectionKey"] = METHOD_HEADER
    endpoint.update({k: copy.deepcopy(v) for k, v in fields.items() if k != "name"})
    if methods and "methods" not in fields:
        endpoint["methods"] = list({m["name"]: m for m in methods}.values())
    return endpoint


def _shared_fields(doc: OpenApiDocument, ops: list[_Operation]) -> dict[str, Any]:
    """The endpoint fields of the group's operations; two operations that set one field to
    different values are an error (they become one endpoint)."""
    merged: dict[str, Any] = {}
    origin: dict[str, _Operation] = {}
    for op in ops:
        for key, value in op.fields.items():
            if key in merged and merged[key] != value:
                other = origin[key]
                raise doc.fail((*op.pointer, ENDPOINT_EXTENSION, key),
                               f"{key}: {op.verb.upper()} {op.path} and {other.verb.upper()} "
                               f"{other.path} become one endpoint but set different values")
            merged[key], origin[key] = value, op
    return merged


def _check_unique(doc: OpenApiDocument, endpoints: list[dict[str, Any]],
                  groups: Mapping[str, list[_Operation]]) -> None:
    """Path + public domain must be unique in the spec dialect (SUPPLEMENT 10.10.1 allows
    shared paths only in the mashery dialect): refuse what only one dialect accepts."""
    seen: dict[tuple[str, str], str] = {}
    for endpoint in endpoints:
        for domain in endpoint["publicDomains"]:
            key = (endpoint["requestPathAlias"], domain)
            if key in seen:
                op = groups[endpoint["name"]][0] if endpoint["name"] in groups else None
                raise doc.fail(op.pointer if op else ("paths",),
                               f"endpoints {seen[key]!r} and {endpoint['name']!r} would share "
                               f"path {key[0]} on {domain}; choose another grouping "
                               "(--group path) or name the endpoints in x-apimctl-endpoint")
            seen[key] = endpoint["name"]


def _check_schema(doc: OpenApiDocument, service: dict[str, Any]) -> None:
    """Refuse a service the manifest schema refuses (an option's value, say a host name with a
    port), before it is written anywhere."""
    schema = manifest_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    key = kinds.SERVICE.manifest_key
    errors = sorted(validator.iter_errors({key: [service]}), key=lambda e: list(e.absolute_path))
    if errors:
        where = format_path(tuple(errors[0].absolute_path))
        raise OpenApiError([Problem(doc.file, 0, 0, "", f"the imported service would not be valid: "
                                                         f"{where}: {errors[0].message}")])


def _service(doc: OpenApiDocument, options: ImportOptions,
             endpoints: list[dict[str, Any]]) -> dict[str, Any]:
    own = extension(doc, doc.data, (), SERVICE_EXTENSION)
    info = doc.data.get("info") or {}
    service: dict[str, Any] = {"name": options.service or own.get("name") or str(info.get("title"))}
    if info.get("description"):
        service["description"] = escape_literal(str(info["description"]).strip())
    if info.get("version") not in (None, ""):
        service["version"] = str(info["version"])
    service.update({k: copy.deepcopy(v) for k, v in own.items() if k != "name"})
    service[kinds.ENDPOINT.manifest_key] = endpoints
    return service
