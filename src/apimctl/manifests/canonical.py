"""Shorthand expansion: the canonical form of a valid configuration (``Manifest.doc``).

Called by the pipeline as the last step, only when there are no errors. Roles written as
names become ``{"name": ...}``, domains ``{"domain": ...}``, plan endpoint names
``{"name": ...}``; a plan service without ``endpoints`` is entitled to every endpoint of that
service declared in the manifests. Nothing else is added: defaults are not filled in here.
"""

from __future__ import annotations

from typing import Any

from apimctl import kinds
from apimctl.kinds import ENDPOINT, PACKAGE, PLAN, SERVICE

# the plan field listing entitled services (``services[].name`` references services)
_ENTITLED = next(r.field for r in PLAN.references if r.kind == SERVICE.name).partition("[]")[0]
_NAME = ENDPOINT.identity


def expand(doc: dict[str, Any]) -> dict[str, Any]:
    """Expand the shorthands of ``doc`` in place and return it."""
    for kind in kinds.TOP_LEVEL:  # a top-level entry written as its identity (roles, domains)
        if isinstance(doc.get(kind.manifest_key), list):
            doc[kind.manifest_key] = [{kind.identity: e} if isinstance(e, str) else e
                                      for e in doc[kind.manifest_key]]
    endpoints = {s[SERVICE.identity]: [{_NAME: e[_NAME]} for e in s.get(ENDPOINT.manifest_key, [])]
                 for s in doc.get(SERVICE.manifest_key, [])}
    for package in doc.get(PACKAGE.manifest_key, []):
        for plan in package.get(PLAN.manifest_key, []):
            for entitled in plan.get(_ENTITLED, []):
                _expand_entitlement(entitled, endpoints)
    return doc


def _expand_entitlement(entitled: dict[str, Any], endpoints: dict[str, list[dict[str, Any]]]) -> None:
    if ENDPOINT.manifest_key not in entitled:
        entitled[ENDPOINT.manifest_key] = [dict(e) for e in endpoints.get(entitled[_NAME], [])]
    else:
        entitled[ENDPOINT.manifest_key] = [{_NAME: e} if isinstance(e, str) else e
                                           for e in entitled[ENDPOINT.manifest_key]]
