"""The live configuration the traffic manager works from, read from the server's store.

:func:`AreaReader.areas` answers one :class:`Area` per area of the store that holds
services: its services, its keys by value, its plans and its maintenance events. The
documents are read again whenever the database changed since the last read (SQLite's
``PRAGMA data_version`` of the reading connection moves on every commit of another
connection), so an apply is visible to the next call while a run of calls against an
unchanged area decodes nothing.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from apimctl.server.store import Store
from apimctl.server.traffic.request import alias_path

Entry = tuple[int, dict[str, Any], dict[str, Any]]  # (place in the area's order, service, endpoint)
_KINDS = ("service", "package", "key", "event", "application", "member")


@dataclass
class Area:
    name: str
    services: list[dict[str, Any]] = field(default_factory=list)
    keys: dict[str, dict[str, Any]] = field(default_factory=dict)  # apikey -> key
    plans: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (package, plan)
    packages: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    applications: dict[str, dict[str, Any]] = field(default_factory=dict)
    members: dict[str, dict[str, Any]] = field(default_factory=dict)
    # public domain (lower case) -> normalised alias -> (order, service, endpoint) of the
    # endpoints it serves; made on the first call routed (the area's documents do not change
    # after that)
    _by_domain: dict[str, dict[str, list[Entry]]] | None = field(default=None, repr=False, compare=False)

    def by_domain(self) -> dict[str, dict[str, list[Entry]]]:
        """The area's endpoints by public domain and alias (as a normalised path prefix:
        :func:`~apimctl.server.traffic.request.alias_path`), each with its place in the
        area's order."""
        if self._by_domain is None:
            table: dict[str, dict[str, list[Entry]]] = {}
            order = 0
            for service in self.services:
                for endpoint in service.get("endpoints") or []:
                    domains = {str(d.get("address", "")).strip().lower()
                               for d in endpoint.get("publicDomains") or [] if isinstance(d, dict)}
                    alias = alias_path(str(endpoint.get("requestPathAlias") or ""))
                    for domain in domains:
                        table.setdefault(domain, {}).setdefault(alias, []).append((order, service, endpoint))
                    order += 1
            self._by_domain = table
        return self._by_domain

    def plan_of(self, key: dict[str, Any]) -> dict[str, Any] | None:
        return self.plans.get((str(key.get("_packageId")), str(key.get("_planId"))))

    def member_of(self, key: dict[str, Any]) -> dict[str, Any] | None:
        app = self.applications.get(str(key.get("_applicationId")))
        return None if app is None else self.members.get(str(app.get("_memberId")))


def area_of(name: str, docs: dict[str, list[dict[str, Any]]]) -> Area:
    """The area ``name`` of these documents (``service``, ``package``, ``key``, ``event``,
    ``application``, ``member``; a kind left out has none), as the store holds them."""
    return _area(name, {kind: docs.get(kind) or [] for kind in _KINDS})


def _area(name: str, docs: dict[str, list[dict[str, Any]]]) -> Area:
    area = Area(name, services=docs["service"], events=docs["event"])
    for key in docs["key"]:
        if isinstance(key.get("apikey"), str):
            area.keys[key["apikey"]] = key
    for package in docs["package"]:
        area.packages[package["id"]] = package
        for plan in package.get("plans") or []:
            area.plans[(package["id"], plan["id"])] = plan
    area.applications = {a["id"]: a for a in docs["application"]}
    area.members = {m["id"]: m for m in docs["member"]}
    return area


class AreaReader:
    """Reads the areas from the store, again only when the database changed."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._cache: dict[int, tuple[int, list[Area]]] = {}  # connection -> (data_version, areas)

    def areas(self) -> list[Area]:
        with self.store.read() as txn:
            conn = txn.conn
            version = int(conn.execute("PRAGMA data_version").fetchone()[0])
            cached = self._cache.get(id(conn))
            if cached is not None and cached[0] == version:
                return cached[1]
            names = [str(r[0]) for r in conn.execute(
                "SELECT DISTINCT area FROM docs WHERE kind='service' ORDER BY area")]
            areas = [_area(name, {kind: txn.all(name, kind) for kind in _KINDS}) for name in names]
        with self._lock:
            self._cache[id(conn)] = (version, areas)
        return areas
