"""Names one object uses to refer to others: renamed in live documents, and turned into
the addresses that order the plan's steps. Called by :mod:`apimctl.planning.steps` and
:mod:`apimctl.planning.order`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apimctl.plans.model import address

# --- renames in live references ---------------------------------------------------------------


def _renamed_name(renames: Mapping[str, str], kind: str, key: str) -> str:
    """The name of a child object (``PARENT/NAME`` key) as the manifests call it."""
    return renames.get(f"{kind}:{key}", key).partition("/")[2]


def translate(kind: str, doc: Mapping[str, Any], parent_key: str | None,
              renames: Mapping[str, str]) -> dict[str, Any]:
    """``doc`` with the names it references replaced by their new names, for objects that the
    manifests rename (``previousNames``): a rename alone changes no reference."""
    out = dict(doc)
    if not renames:
        return out
    if kind in ("service", "plan") and isinstance(out.get("roles"), list):
        out["roles"] = [renames.get(f"role:{r}", r) for r in out["roles"]]
    if kind == "endpoint" and isinstance(out.get("errorSet"), str) and parent_key is not None:
        out["errorSet"] = _renamed_name(renames, "errorSet", f"{parent_key}/{out['errorSet']}")
    if kind == "plan" and isinstance(out.get("services"), list):
        out["services"] = [_renamed_entitlement(svc, renames) for svc in out["services"]]
    if kind == "maintenanceEvent" and isinstance(out.get("endpoints"), list):
        pairs = []
        for ep in out["endpoints"]:
            key = renames.get(f"endpoint:{ep.get('service')}/{ep.get('endpoint')}")
            if key is not None:
                service, _, endpoint = key.partition("/")
                ep = {"service": service, "endpoint": endpoint}
            pairs.append(ep)
        out["endpoints"] = pairs
    return out


def _renamed_entitlement(svc: Mapping[str, Any], renames: Mapping[str, str]) -> dict[str, Any]:
    old = str(svc.get("name"))
    endpoints = [{**ep, "name": _renamed_name(renames, "endpoint", f"{old}/{ep.get('name')}")}
                 for ep in svc.get("endpoints") or []]
    return {**svc, "name": renames.get(f"service:{old}", old), "endpoints": endpoints}


# --- dependencies ----------------------------------------------------------------------------


def references(kind: str, doc: Mapping[str, Any], parent_key: str | None) -> set[str]:
    """Addresses of the objects ``doc`` (manifest shape) refers to by name, domains excepted."""
    refs: set[str] = set()
    if kind in ("service", "plan"):
        refs |= {address("role", str(r)) for r in doc.get("roles") or [] if isinstance(r, str)}
    if kind == "endpoint" and isinstance(doc.get("errorSet"), str) and parent_key is not None:
        refs.add(address("errorSet", f"{parent_key}/{doc['errorSet']}"))
    if kind == "plan":
        for svc in doc.get("services") or []:
            if not isinstance(svc, Mapping):
                continue
            refs.add(address("service", str(svc.get("name"))))
            for ep in svc.get("endpoints") or []:
                name = ep.get("name") if isinstance(ep, Mapping) else ep
                refs.add(address("endpoint", f"{svc.get('name')}/{name}"))
    if kind == "maintenanceEvent":
        for ep in doc.get("endpoints") or []:
            if isinstance(ep, Mapping):
                refs.add(address("endpoint", f"{ep.get('service')}/{ep.get('endpoint')}"))
    return refs
