"""What ``apimctl lint --openapi-spec SPEC`` checks: the operations and paths of an OpenAPI
document next to the service the manifests declare for it.

:func:`coverage_facts` returns a small document for the lint rules (rules are data, in
``recommended.yaml``): per document, its ``operations`` (path, HTTP method, ``operationId``
when there is one) and its ``paths`` (with ``routedBy``, the name of an endpoint of the
service whose ``requestPathAlias`` routes the path, when one does), and where each was
written in the document, so that findings point into it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from apimctl import kinds
from apimctl.manifests.model import JsonPath, Position
from apimctl.openapi.document import HTTP_VERBS, ReadOptions, load_document
from apimctl.openapi.extensions import SERVICE_EXTENSION
from apimctl.openapi.sources import joined, servers

FACTS_KEY = "x-openapi"  # where the facts sit in the linted document


@dataclass
class Coverage:
    """The facts of every document (``FACTS_KEY``'s value), their positions, and warnings."""

    facts: list[dict[str, Any]] = field(default_factory=list)
    positions: dict[JsonPath, Position] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def coverage_facts(specs: Sequence[str], manifest: Mapping[str, Any],
                   ref_hosts: Sequence[str] = ()) -> Coverage:
    """The facts of each ``[SERVICE=]SPEC`` against the services of ``manifest``; a ``$ref``
    of a document may fetch only from ``ref_hosts``."""
    out = Coverage()
    services = {str(s.get("name")): s for s in manifest.get(kinds.SERVICE.manifest_key) or []
                if isinstance(s, Mapping)}
    for index, given in enumerate(specs):
        named, _, file = given.rpartition("=") if "=" in given else ("", "", given)
        doc = load_document(file, ReadOptions(allow_ref_hosts=tuple(ref_hosts)))
        info = doc.data.get("info") or {}
        name = named or (doc.data.get(SERVICE_EXTENSION) or {}).get("name") or str(info.get("title"))
        service = services.get(name)
        if service is None:
            out.warnings.append(f"{file}: the manifests declare no service named {name!r}; "
                                "every path of the document is uncovered")
        endpoints = list((service or {}).get(kinds.ENDPOINT.manifest_key) or [])
        base = servers(doc).base_path
        operations: list[dict[str, Any]] = []
        paths: list[dict[str, Any]] = []
        at: JsonPath = (FACTS_KEY, index)
        for path, item in doc.path_items():
            covering = _covering(endpoints, [joined(base, path), path])
            out.positions[(*at, "paths", len(paths))] = _position(doc.file, doc.where(("paths", path)))
            paths.append({"path": path, **({"routedBy": covering} if covering else {})})
            for verb in (v for v in HTTP_VERBS if isinstance(item.get(v), Mapping)):
                op_id = item[verb].get("operationId")
                out.positions[(*at, "operations", len(operations))] = _position(
                    doc.file, doc.where(("paths", path, verb)))
                operations.append({"path": path, "method": verb,
                                   **({"operationId": op_id} if op_id else {})})
        out.positions[at] = Position(doc.file, 1, 1)
        out.facts.append({"document": doc.file, "serviceName": name, "operations": operations,
                          "paths": paths})
    return out


def _position(file: str, where: tuple[int, int]) -> Position:
    return Position(file, where[0], where[1])


def _covering(endpoints: Sequence[Mapping[str, Any]], candidates: Sequence[str]) -> str | None:
    """The endpoint whose alias routes one of ``candidates`` (the longest such alias)."""
    best: tuple[int, str] | None = None
    for endpoint in endpoints:
        alias = _segments(str(endpoint.get("requestPathAlias", "")))
        for candidate in candidates:
            if _routes(alias, _segments(candidate)) and (best is None or len(alias) > best[0]):
                best = (len(alias), str(endpoint.get("name")))
    return best[1] if best else None


def _segments(path: str) -> list[str]:
    return [part for part in path.strip("/").split("/") if part]


def _routes(alias: list[str], path: list[str]) -> bool:
    """The traffic manager routes ``path`` to ``alias`` when the alias is a prefix of it on
    segment boundaries; a templated segment (``{id}``) on either side matches any segment."""
    if len(alias) > len(path):
        return False
    return all(a == p or a.startswith("{") or p.startswith("{") for a, p in zip(alias, path, strict=False))
