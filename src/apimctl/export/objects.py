"""The exporter: live objects turned into manifest-shaped documents, one top-level kind at a time.

Each object is brought into its normal form and written with only the fields that differ
from the defaults (:mod:`apimctl.export.fields`), children under their parent sorted by
identity, ids only when asked for, strings holding a literal ``${`` escaped as ``$${``, and
secrets replaced by ``${VAR}`` references named once every secret of the area is known
(:func:`apimctl.export.naming.variable_names`). Called by
:func:`apimctl.export.area.export_state` through :func:`build_documents`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from apimctl import kinds
from apimctl.export.fields import differing
from apimctl.export.naming import SECRET_SUFFIX, TOP_ORDER, variable_names
from apimctl.kinds import Kind
from apimctl.state.live import LiveObject, LiveState
from apimctl.state.normalise import Context, normalise

# Fields the manifest schema requires even when they hold the default.
_REQUIRED_ENDPOINT_FIELDS = ("requestPathAlias", "trafficManagerDomain")


def build_documents(live: LiveState, *, manifest_keys: Sequence[str] | None = None,
                    with_ids: bool = False) -> tuple[dict[str, list[Any]], list[str]]:
    """Per top-level manifest key, the exported objects; and the variables they reference."""
    area = _Area(live)
    exporter = _Exporter(area, with_ids)
    makers = {
        "domains": ("domain", exporter.domain),
        "roles": ("role", exporter.role),
        "services": ("service", exporter.service),
        "packages": ("package", exporter.package),
        "scheduledMaintenanceEvents": ("maintenanceEvent", exporter.maintenance_event),
    }
    keys = list(manifest_keys) if manifest_keys is not None else list(TOP_ORDER)
    docs: dict[str, list[Any]] = {}
    for key in TOP_ORDER:
        if key not in keys:
            continue
        kind_name, make = makers[key]
        items = [make(obj) for obj in area.top(kind_name)]
        if items:
            docs[key] = items
    return exporter.name_secrets(docs), exporter.used()


def escape_literal(value: Any) -> Any:
    """Strings with a literal ``${`` escaped as ``$${`` so substitution gives them back."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, list):
        return [escape_literal(v) for v in value]
    if isinstance(value, dict):
        return {k: escape_literal(v) for k, v in value.items()}
    return value


@dataclass
class _Area:
    """The live state grouped for export: children by parent id, sorted by identity."""

    live: LiveState
    children: dict[tuple[str, str], list[LiveObject]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        grouped: dict[tuple[str, str], list[LiveObject]] = defaultdict(list)
        for kind in kinds.KINDS:
            if kind.parent is None:
                continue
            for obj in self.live.of(kind.name):
                grouped[(kind.name, obj.parent_id or "")].append(obj)
        self.children = dict(grouped)

    def top(self, kind: str) -> list[LiveObject]:
        return sorted(self.live.of(kind), key=lambda o: (o.name, o.id))

    def of(self, kind: str, parent: LiveObject) -> list[LiveObject]:
        return self.children.get((kind, parent.id), [])


class _SecretRef(str):
    """Where a secret reference goes, until every secret of the export is known."""

    parts: tuple[str, ...]

    def __new__(cls, parts: tuple[str, ...]) -> _SecretRef:
        ref = super().__new__(cls, "${SECRET}")
        ref.parts = parts
        return ref


class _Exporter:
    """Makes the document of each object; remembers the secrets it stood in for."""

    def __init__(self, area: _Area, with_ids: bool) -> None:
        self.area = area
        self.with_ids = with_ids
        self.requests: list[tuple[str, ...]] = []

    def head(self, kind: Kind, obj: LiveObject) -> dict[str, Any]:
        out: dict[str, Any] = {kind.identity: escape_literal(obj.name)}
        if self.with_ids and kind.pinnable:
            out["id"] = obj.id
        return out

    def plain(self, kind: Kind, obj: LiveObject, ctx: Context | None = None,
              base_ctx: Context | None = None) -> dict[str, Any]:
        norm = normalise(kind, obj.doc, ctx)
        base = normalise(kind, {}, base_ctx or ctx)
        norm.pop(kind.identity, None)
        return {**self.head(kind, obj), **escape_literal(differing(kind, "", norm, base))}

    def secret(self, *parts: str) -> str:
        """A stand-in for the reference; :meth:`name_secrets` names them all at the end, when
        every secret of the area is known (see :func:`variable_names`)."""
        self.requests.append(parts)
        return _SecretRef(parts)

    def name_secrets(self, value: Any) -> Any:
        """``value`` with every stand-in replaced by its ``${VAR}`` reference."""
        names = variable_names(self.requests)

        def walk(node: Any) -> Any:
            if isinstance(node, _SecretRef):
                return "${" + names[node.parts] + "}"
            if isinstance(node, list):
                return [walk(v) for v in node]
            if isinstance(node, dict):
                return {k: walk(v) for k, v in node.items()}
            return node

        return walk(value)

    def used(self) -> list[str]:
        names = variable_names(self.requests)
        return list(dict.fromkeys(names[parts] for parts in self.requests))

    # -- kinds

    def domain(self, obj: LiveObject) -> Any:
        return escape_literal(obj.name)

    def role(self, obj: LiveObject) -> Any:
        doc = self.plain(kinds.ROLE, obj)
        return doc if len(doc) > 1 else doc["name"]

    def service(self, obj: LiveObject) -> dict[str, Any]:
        doc = self.plain(kinds.SERVICE, obj)
        live_sets = self.area.of("errorSet", obj)
        sets = sorted(live_sets, key=lambda o: (o.name, o.id))
        exported_sets = [self.plain(kinds.ERROR_SET, s) for s in sets]
        if exported_sets != [{"name": "Default"}]:
            doc["errorSets"] = exported_sets
        first_live = live_sets[0].name if live_sets else None
        first_written = sets[0].name if "errorSets" in doc and sets else first_live
        endpoints = sorted(self.area.of("endpoint", obj), key=lambda o: (o.name, o.id))
        if endpoints:
            doc["endpoints"] = [self.endpoint(obj, ep, first_live, first_written)
                                for ep in endpoints]
        return doc

    def endpoint(self, service: LiveObject, obj: LiveObject, first_live: str | None,
                 first_written: str | None) -> dict[str, Any]:
        doc = self.plain(kinds.ENDPOINT, obj, Context(first_live), Context(first_written))
        doc = _with_required(doc, obj.doc, _REQUIRED_ENDPOINT_FIELDS)
        if "systemDomainCredentialSecret" in doc:
            doc["systemDomainCredentialSecret"] = self.secret(
                service.name, obj.name, SECRET_SUFFIX["systemDomainCredentialSecret"])
        if isinstance(doc.get("systemDomainAuthentication"), dict):
            doc["systemDomainAuthentication"] = self.backend_auth(service, obj, doc)
        return doc

    def backend_auth(self, service: LiveObject, obj: LiveObject,
                     doc: Mapping[str, Any]) -> dict[str, Any]:
        """The endpoint's ``systemDomainAuthentication``, led by its type, its password (for
        ``httpBasic``) a secret reference."""
        raw = obj.doc.get("systemDomainAuthentication")
        kind_of_auth = raw.get("type") if isinstance(raw, Mapping) else None
        kind_of_auth = kind_of_auth or kinds.SYSTEM_DOMAIN_AUTH_DEFAULTS["type"]
        auth = {"type": kind_of_auth, **doc["systemDomainAuthentication"]}
        if kind_of_auth == "httpBasic":
            auth["password"] = self.secret(
                service.name, obj.name, SECRET_SUFFIX["systemDomainAuthentication.password"])
        return auth

    def package(self, obj: LiveObject) -> dict[str, Any]:
        doc = self.plain(kinds.PACKAGE, obj)
        plans = sorted(self.area.of("plan", obj), key=lambda o: (o.name, o.id))
        if plans:
            doc["plans"] = [self.plan(p) for p in plans]
        return doc

    def plan(self, obj: LiveObject) -> dict[str, Any]:
        doc = self.plain(kinds.PLAN, obj)
        if "services" in doc:
            doc["services"] = [_entitlement(s) for s in doc["services"]]
        return doc

    def maintenance_event(self, obj: LiveObject) -> dict[str, Any]:
        doc = self.plain(kinds.MAINTENANCE_EVENT, obj)
        endpoints = [e for e in obj.doc.get("endpoints") or [] if isinstance(e, Mapping)]
        pairs = sorted({(str(e.get("service")), str(e.get("endpoint"))) for e in endpoints})
        doc.pop("endpoints", None)
        if pairs:
            doc["endpoints"] = escape_literal([{"service": s, "endpoint": e} for s, e in pairs])
        return doc


def _with_required(doc: dict[str, Any], live: Mapping[str, Any],
                   names: Sequence[str]) -> dict[str, Any]:
    """``doc`` with the required ``names`` present (after the identity), from ``live``."""
    head = {k: v for k, v in doc.items() if k in ("name", "id")}
    required = {n: doc.get(n, escape_literal(live.get(n) or "")) for n in names}
    rest = {k: v for k, v in doc.items() if k not in head and k not in required}
    return {**head, **required, **rest}


def _entitlement(item: Mapping[str, Any]) -> dict[str, Any]:
    """A plan's entitled service, always with ``endpoints`` (omitted means "all declared"),
    and endpoints entitled with every method as plain names."""
    endpoints = []
    for ep in item.get("endpoints") or []:
        endpoints.append(ep["name"] if isinstance(ep, Mapping) and len(ep) == 1 else ep)
    return {"name": item["name"], "endpoints": endpoints}
