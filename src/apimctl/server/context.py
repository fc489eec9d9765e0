"""What the resource rules of one request work with.

:class:`Env` (the transaction, the area, the settings, the user, the catalog, per-request
caches of documents) is created by the engine for every request and handed to the rule
hooks of the catalog (:mod:`~apimctl.server.services`, :mod:`~apimctl.server.packages`,
:mod:`~apimctl.server.keys`, :mod:`~apimctl.server.maintenance`, ...), together with small
helpers they share: unique-key claims and endpoint look-up through the index. Rule modules
find other resources through :meth:`Env.resource`, never by importing the catalog (which
imports them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from apimctl.server.config import ServerConfig
from apimctl.server.fields import Resource
from apimctl.server.store import Txn
from apimctl.server.validation import WriteCtx


class Env:
    """What the rules of one request may look at: the transaction, the area, the settings."""

    def __init__(self, txn: Txn, area: str, config: ServerConfig, user: str | None,
                 catalog: Mapping[str, Resource]) -> None:
        self.txn = txn
        self.area = area
        self.config = config
        self.dialect = config.dialect_table
        self.user = user
        self.catalog = catalog
        self.old: dict[str, Any] | None = None  # the document before this write (updates)
        self._cache: dict[str, Any] = {}
        # documents created inside this write besides the one addressed (nested members'
        # applications and applications' keys): (resource, document, body path), for events
        self.created: list[tuple[Resource, dict[str, Any], str]] = []

    def resource(self, name: str) -> Resource:
        """The catalog resource called ``name``."""
        return self.catalog[name]

    def docs(self, kind: str) -> list[dict[str, Any]]:
        key = "list:" + kind
        if key not in self._cache:
            self._cache[key] = self.txn.all(self.area, kind)
        return self._cache[key]  # type: ignore[no-any-return]

    def doc(self, kind: str, id_: str | None) -> dict[str, Any] | None:
        if not id_:
            return None
        key = f"doc:{kind}:{id_}"
        if key not in self._cache:
            self._cache[key] = self.txn.get(self.area, kind, id_)
        return self._cache[key]  # type: ignore[no-any-return]

    def forget(self, kind: str) -> None:
        """Drop cached reads of ``kind`` after writing such documents."""
        for key in [k for k in self._cache if k.startswith((f"list:{kind}", f"doc:{kind}:"))]:
            del self._cache[key]
        if kind == "event":
            self._cache.pop("event-by-endpoint", None)
        if kind == "key":
            self._cache.pop("packaged-applications", None)

    def prime(self, kind: str, doc: dict[str, Any]) -> None:
        """Make ``doc`` (being written, not yet stored) what :meth:`doc` answers for its id."""
        self._cache[f"doc:{kind}:{doc['id']}"] = doc

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """A value computed once per request (until :meth:`forget`)."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def plan_of(self, package_id: str | None, plan_id: str | None) -> dict[str, Any] | None:
        package = self.doc("package", package_id)
        return next((p for p in (package or {}).get("plans", []) if p.get("id") == plan_id), None)


def ref_of(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if obj is None else {"id": obj.get("id"), "name": obj.get("name")}


def claim(env: Env, ctx: WriteCtx, scope: str, owner: str, values: dict[str, str], what: str,
           sticky: bool = False) -> None:
    """``values``: unique key -> property path to blame."""
    for taken in env.txn.claim(env.area, scope, owner, list(values), sticky=sticky):
        ctx.problem(values[taken], f"duplicate {what}: {taken.split('|')[0]!r} is already taken")


def find_endpoint(env: Env, endpoint_id: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(service, endpoint) for an endpoint id of the area, through the endpoint index."""
    if not isinstance(endpoint_id, str):
        return None
    service = env.doc("service", env.txn.owner(env.area, "endpoint.id", endpoint_id))
    if service is None:
        return None
    ep = next((e for e in service.get("endpoints", []) if e.get("id") == endpoint_id), None)
    return None if ep is None else (service, ep)

