"""The generic request engine of the management API.

The HTTP layer (:mod:`apimctl.server.app`) hands over an :class:`ApiRequest` (method, path
segments, query parameters, parsed body, area, user) and gets an :class:`ApiResponse`
back. The engine resolves the path on the resource tree (:mod:`apimctl.server.tree`), names
the operation, and hands it to one path in one store transaction: reads
(:mod:`apimctl.server.reads`), writes on documents (:mod:`apimctl.server.writes`) and inside
them (:mod:`apimctl.server.nested`), and writes of resources with event triggers
(:mod:`apimctl.server.eventful`). What differs between resources is the catalog's business
(:mod:`apimctl.server.catalog`): the write paths call the hooks its entries name.
"""

from __future__ import annotations

from typing import Any

from apimctl.server import catalog, reads, seed, writes
from apimctl.server.config import ServerConfig
from apimctl.server.errors import Invalid
from apimctl.server.eventful import Dispatcher, EventfulWrites, NoEvents
from apimctl.server.fields import MISSING
from apimctl.server.messages import ApiRequest, ApiResponse, dumps
from apimctl.server.store import Store
from apimctl.server.tree import ROOTS, Step, method_not_allowed, resolve

__all__ = ["MISSING", "ApiRequest", "ApiResponse", "Engine", "NoEvents", "dumps"]

_READS = frozenset({"list", "fetch", "get"})
_SINGLE_OPS = {"GET": "get", "HEAD": "get", "POST": "post", "PUT": "put", "DELETE": "delete"}
_COLLECTION_OPS = {"GET": "list", "HEAD": "list", "POST": "create", "PUT": "replace", "DELETE": "clear"}
_ITEM_OPS = {"GET": "fetch", "HEAD": "fetch", "PUT": "update", "DELETE": "delete"}


def _op(method: str, last: Step, body: Any) -> str:
    """The operation a method means at the last step of a path."""
    if last.node.single:
        return _SINGLE_OPS.get(method, "?")
    if last.id is None:
        if method == "PUT" and isinstance(body, list):
            return "bulk_update"
        return _COLLECTION_OPS.get(method, "?")
    return _ITEM_OPS.get(method, "?")


def _is_hostnames(segments: list[str], by_kind: bool) -> bool:
    """``/domains/{public|system}/hostnames``; also ``/domains/{public|system}`` where the
    dialect lists domains by kind (SUPPLEMENT §10.9)."""
    tail = ["hostnames"] if len(segments) == 3 else [] if by_kind else None
    return tail is not None and len(segments) >= 2 and segments[0] == "domains" \
        and segments[1] in ("public", "system") and segments[2:] == tail


class Engine:
    """Runs management-API operations against the store."""

    def __init__(self, config: ServerConfig, store: Store, dispatcher: Dispatcher | None = None) -> None:
        self.config = config
        self.dialect = config.dialect_table
        self.catalog = catalog.of(config.dialect)
        self.store = store
        self.events: Dispatcher = dispatcher or NoEvents()
        self.eventful = EventfulWrites(config, store, self.events)
        self._seeded: set[str] = set()

    def handle(self, req: ApiRequest) -> ApiResponse:
        """Answer one request of the management API (raises :class:`~apimctl.server.errors.HttpProblem`)."""
        self._ensure_area(req.area)
        if _is_hostnames(req.segments, self.dialect.domain_kinds):
            return self._hostnames(req)
        steps, template = resolve(req.segments, ROOTS[self.config.dialect])
        op = _op(req.method, steps[-1], req.body)
        if op not in steps[-1].node.ops:
            raise method_not_allowed(req.method, template)
        if op in _READS:
            with self.store.read() as txn:
                resp = reads.read(req, steps, txn, self.config)
        else:
            if op not in ("delete", "clear") and req.body is MISSING:
                raise Invalid.at("", "a JSON body is required")
            resp = self._write(req, steps, op)
        resp.template = template
        return resp

    def _ensure_area(self, area: str) -> None:
        """Seed an area the first time it is used."""
        if area in self._seeded:
            return
        with self.store.write() as txn:
            if not txn.area_known(area):
                seed.seed_area(txn, area)
                txn.add_area(area)
        self._seeded.add(area)

    def _write(self, req: ApiRequest, steps: list[Step], op: str) -> ApiResponse:
        di = max(i for i, s in enumerate(steps) if s.node.kind)
        if di == len(steps) - 1 and self.catalog[steps[di].node.resource].rules.events:
            return self.eventful.write(req, steps, op, di)
        with self.store.write() as txn:
            return writes.write(req, steps, op, di, txn, self.config)

    def _hostnames(self, req: ApiRequest) -> ApiResponse:
        template = "/" + "/".join(req.segments)
        if req.method not in ("GET", "HEAD"):
            raise method_not_allowed(req.method, template)
        which = "publicDomains" if req.segments[1] == "public" else "systemDomains"
        with self.store.read() as txn:
            body = reads.hostnames(txn, req.area, which)
        return ApiResponse(200, body, {"X-Total-Count": str(len(body))}, template=template)
