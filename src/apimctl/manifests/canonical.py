"""Shorthand expansion: the canonical form of a valid configuration (``Manifest.doc``).

Called by the pipeline as the last step, only when there are no errors. Roles written as
names become ``{"name": ...}``, domains ``{"domain": ...}``, plan endpoint names
``{"name": ...}``; a plan service without ``endpoints`` is entitled to every endpoint of that
service declared in the manifests. Nothing else is added: defaults are not filled in here.
"""

from __future__ import annotations

from typing import Any


def expand(doc: dict[str, Any]) -> dict[str, Any]:
    """Expand the shorthands of ``doc`` in place and return it."""
    if isinstance(doc.get("roles"), list):
        doc["roles"] = [{"name": r} if isinstance(r, str) else r for r in doc["roles"]]
    if isinstance(doc.get("domains"), list):
        doc["domains"] = [{"domain": d} if isinstance(d, str) else d for d in doc["domains"]]
    endpoints = {s["name"]: [{"name": e["name"]} for e in s.get("endpoints", [])]
                 for s in doc.get("services", [])}
    for package in doc.get("packages", []):
        for plan in package.get("plans", []):
            for entitled in plan.get("services", []):
                _expand_entitlement(entitled, endpoints)
    return doc


def _expand_entitlement(entitled: dict[str, Any], endpoints: dict[str, list[dict[str, Any]]]) -> None:
    if "endpoints" not in entitled:
        entitled["endpoints"] = [dict(e) for e in endpoints.get(entitled["name"], [])]
    else:
        entitled["endpoints"] = [{"name": e} if isinstance(e, str) else e for e in entitled["endpoints"]]
