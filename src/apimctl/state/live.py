"""Read the live configuration of an area and put it into manifest shape.

``planner.make_plan`` (and through it ``plan``, ``apply``, ``drift``) and ``export`` call
:func:`read_live`. Each top-level collection is read with one list call per 1,000 objects
(pages fetched concurrently by :meth:`ApiClient.list_all`), with the ``fields`` projection of
its entry in :mod:`apimctl.kinds`, so services come back with their endpoints (cors, cache,
processor, methods, ...) and error sets (with messages), packages with their plans (with
entitlements and roles): never one GET per object.

:func:`from_raw` is the pure half: it turns the API's objects into :class:`LiveObject` values
in manifest shape (references by name, domains as strings, role permissions as role names),
keeping ids and fingerprints beside them. Secret values that the API returns stay in memory
only; they are hashed by ``normalise`` before anything compares or prints them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from apimctl import kinds
from apimctl.api.quirks import as_list
from apimctl.errors import ServerError
from apimctl.kinds import Kind

PAGE_SIZE = 1000


class Lister(Protocol):
    """The part of :class:`apimctl.api.client.ApiClient` this module uses."""

    async def list_all(self, path: str, params: Any = None, *, page_size: int = ...,
                       page_index: bool = ...) -> list[dict[str, Any]]: ...


@dataclass
class LiveObject:
    """One live object: its key, id, parent, manifest-shaped ``doc`` and fingerprint facts."""

    kind: str
    key: str
    id: str
    doc: dict[str, Any]
    parent_key: str | None = None
    parent_id: str | None = None
    updated: str | None = None
    revision: int | None = None
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            self.name = str(self.doc.get(kinds.get(self.kind).identity, ""))


@dataclass
class LiveState:
    """Every live object, per kind, in the order the API listed them."""

    objects: dict[str, list[LiveObject]] = field(default_factory=dict)

    def of(self, kind: str) -> list[LiveObject]:
        return self.objects.get(kind, [])

    def add(self, obj: LiveObject) -> None:
        self.objects.setdefault(obj.kind, []).append(obj)

    def count(self) -> int:
        return sum(len(v) for v in self.objects.values())


async def read_raw(client: Lister) -> dict[str, list[dict[str, Any]]]:
    """The raw lists of every top-level kind, read concurrently."""
    async def one(kind: Kind) -> list[dict[str, Any]]:
        params = [("fields", kind.fields_param()), *kind.list_params]
        items = await client.list_all(kind.path, params, page_size=PAGE_SIZE,
                                      page_index=kind.page_index)
        for item in items:  # a reply that is not a list of these objects plans nonsense
            missing = [f for f in ("id", kind.identity) if item.get(f) in (None, "")]
            if missing:
                fields = ", ".join(sorted(map(str, item))[:10]) or "none"
                raise ServerError(f"GET {kind.path}: unreadable reply: an item without "
                                  f"{' or '.join(missing)} (its fields: {fields})", method="GET")
        return items

    results = await asyncio.gather(*(one(k) for k in kinds.TOP_LEVEL))
    return {k.name: list(r) for k, r in zip(kinds.TOP_LEVEL, results, strict=True)}


async def read_live(client: Lister) -> LiveState:
    """The live state of the client's area (one list call per 1,000 top-level objects)."""
    return from_raw(await read_raw(client))


def read_call_bound(state: LiveState) -> int:
    """The fewest list calls that can read ``state``: Σ ⌈N/1000⌉ over top-level kinds (≥ 1 each)."""
    return sum(max(1, -(-len(state.of(k.name)) // PAGE_SIZE)) for k in kinds.TOP_LEVEL)


# --- translation into manifest shape ----------------------------------------------------------


def _names(items: Any, index: Mapping[str, str] | None = None) -> list[str]:
    """Role permissions, domains and plan methods as a list of names."""
    out: list[str] = []
    for item in as_list(items):
        if isinstance(item, Mapping):
            ref = str(item.get("id", ""))
            name = (index or {}).get(ref) or item.get("name") or item.get("address")
            if name is not None:
                out.append(str(name))
        elif item is not None:
            out.append(str(item))
    return out


def _strip(raw: Mapping[str, Any], kind: Kind) -> dict[str, Any]:
    """The raw object without server-computed fields and child collections."""
    drop = kind.computed | {kinds.get(c).manifest_key for c in kind.children}
    return {k: v for k, v in raw.items() if k not in drop}


def _fingerprint(raw: Mapping[str, Any]) -> tuple[str | None, int | None]:
    updated = raw.get("updated")
    revision = raw.get("revisionNumber")
    return (str(updated) if updated is not None else None,
            int(revision) if isinstance(revision, int | str) and str(revision).isdigit() else None)


class _Indexes:
    """Id -> name lookups across kinds, for references the API renders by id."""

    def __init__(self, raw: Mapping[str, list[dict[str, Any]]]) -> None:
        self.roles = {str(r.get("id")): str(r.get("name")) for r in raw.get("role", [])}
        self.services: dict[str, str] = {}
        self.endpoints: dict[str, tuple[str, str]] = {}
        self.methods: dict[str, str] = {}
        for svc in raw.get("service", []):
            self.services[str(svc.get("id"))] = str(svc.get("name"))
            for ep in as_list(svc.get("endpoints")):
                self.endpoints[str(ep.get("id"))] = (str(svc.get("name")), str(ep.get("name")))
                for method in as_list(ep.get("methods")):
                    if isinstance(method, Mapping) and method.get("id") is not None:
                        self.methods[str(method["id"])] = str(method.get("name"))


def _methods(raw: Any) -> list[dict[str, Any]]:
    out = []
    for method in as_list(raw):
        doc = {k: v for k, v in method.items() if k not in kinds.NESTED_COMPUTED_FIELDS}
        if "responseFilters" in method:
            doc["responseFilters"] = [
                {k: v for k, v in f.items() if k not in kinds.NESTED_COMPUTED_FIELDS}
                for f in as_list(method.get("responseFilters"))
            ]
        out.append(doc)
    return out


def _endpoint_doc(raw: Mapping[str, Any], set_names: Mapping[str, str]) -> dict[str, Any]:
    doc = _strip(raw, kinds.ENDPOINT)
    for name in ("publicDomains", "systemDomains"):
        if name in doc:
            doc[name] = _names(doc[name])
    if isinstance(doc.get("errorSet"), Mapping):
        ref = doc["errorSet"]  # {id, name}; some renderings carry the id alone
        doc["errorSet"] = ref.get("name") or set_names.get(str(ref.get("id")))
    auth = doc.get("systemDomainAuthentication")
    if isinstance(auth, Mapping):
        doc["systemDomainAuthentication"] = {k: v for k, v in auth.items() if k != "password"}
    if "methods" in doc:
        doc["methods"] = _methods(doc["methods"])
    return doc


def _error_set_doc(raw: Mapping[str, Any]) -> dict[str, Any]:
    doc = _strip(raw, kinds.ERROR_SET)
    if "errorMessages" in doc:
        doc["errorMessages"] = [
            {k: v for k, v in m.items() if k != "code"} for m in as_list(doc["errorMessages"])
        ]
    return doc


def _plan_services(raw: Any, idx: _Indexes) -> list[dict[str, Any]]:
    out = []
    for svc in as_list(raw):
        name = idx.services.get(str(svc.get("id"))) or svc.get("name")
        endpoints = []
        for ep in as_list(svc.get("endpoints")):
            ep_name = idx.endpoints.get(str(ep.get("id")), (None, ep.get("name")))[1]
            endpoints.append({"name": ep_name,
                              "undefinedMethodsAllowed": ep.get("undefinedMethodsAllowed", True),
                              "methods": _names(ep.get("methods"), idx.methods)})
        out.append({"name": name, "endpoints": endpoints})
    return out


def _service_objects(raw: Mapping[str, Any], idx: _Indexes) -> Iterable[LiveObject]:
    updated, revision = _fingerprint(raw)
    doc = _strip(raw, kinds.SERVICE)
    if "roles" in doc:
        doc["roles"] = _names(doc["roles"], idx.roles)
    name, sid = str(raw.get("name")), str(raw.get("id"))
    yield LiveObject("service", name, sid, doc, updated=updated, revision=revision)
    for es in as_list(raw.get("errorSets")):
        yield LiveObject("errorSet", kinds.ERROR_SET.key_of(str(es.get("name")), name),
                         str(es.get("id")), _error_set_doc(es), name, sid, updated, revision)
    sets = [s for s in as_list(raw.get("errorSets")) if isinstance(s, Mapping)]
    first_set = str(sets[0].get("name")) if sets else None
    set_names = {str(s.get("id")): str(s.get("name")) for s in sets}
    for ep in as_list(raw.get("endpoints")):
        doc = _endpoint_doc(ep, set_names)
        if "errorSet" in doc and doc["errorSet"] is None:
            doc["errorSet"] = first_set  # null means the service's first error set
        yield LiveObject("endpoint", kinds.ENDPOINT.key_of(str(ep.get("name")), name),
                         str(ep.get("id")), doc, name, sid, updated, revision)


def _package_objects(raw: Mapping[str, Any], idx: _Indexes) -> Iterable[LiveObject]:
    updated, _ = _fingerprint(raw)
    name, pid = str(raw.get("name")), str(raw.get("id"))
    yield LiveObject("package", name, pid, _strip(raw, kinds.PACKAGE), updated=updated)
    for plan in as_list(raw.get("plans")):
        doc = _strip(plan, kinds.PLAN)
        if "services" in doc:
            doc["services"] = _plan_services(doc["services"], idx)
        if "roles" in doc:
            doc["roles"] = _names(doc["roles"], idx.roles)
        plan_updated, _ = _fingerprint(plan)
        yield LiveObject("plan", kinds.PLAN.key_of(str(plan.get("name")), name),
                         str(plan.get("id")), doc, name, pid, plan_updated)


def _event_object(raw: Mapping[str, Any], idx: _Indexes) -> LiveObject:
    doc = _strip(raw, kinds.MAINTENANCE_EVENT)
    endpoints = []
    for ep in as_list(raw.get("endpoints")):
        found = idx.endpoints.get(str(ep.get("id")))
        if found is not None:
            endpoints.append({"service": found[0], "endpoint": found[1]})
    doc["endpoints"] = endpoints
    updated, _ = _fingerprint(raw)
    return LiveObject("maintenanceEvent", str(raw.get("name")), str(raw.get("id")), doc,
                      updated=updated)


def _role_object(raw: Mapping[str, Any]) -> LiveObject:
    doc = _strip(raw, kinds.ROLE)
    org = doc.get("organization")
    if isinstance(org, Mapping):
        doc["organization"] = org.get("name")
    doc.pop("group", None)
    updated, _ = _fingerprint(raw)
    return LiveObject("role", str(raw.get("name")), str(raw.get("id")), doc, updated=updated)


def from_raw(raw: Mapping[str, list[dict[str, Any]]]) -> LiveState:
    """Translate the raw lists of :func:`read_raw` (keyed by kind name) into a LiveState."""
    idx = _Indexes(raw)
    state = LiveState()
    for d in raw.get("domain", []):
        state.add(LiveObject("domain", str(d.get("domain")), str(d.get("id")),
                             {"domain": d.get("domain")}, updated=d.get("created")))
    for r in raw.get("role", []):
        state.add(_role_object(r))
    for svc in raw.get("service", []):
        for obj in _service_objects(svc, idx):
            state.add(obj)
    for pkg in raw.get("package", []):
        for obj in _package_objects(pkg, idx):
            state.add(obj)
    for ev in raw.get("maintenanceEvent", []):
        state.add(_event_object(ev, idx))
    return state
