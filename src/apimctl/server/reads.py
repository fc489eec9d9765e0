"""Reads of the management API: list and fetch, on documents and on places inside them.

:class:`apimctl.server.engine.Engine` calls :func:`read` (and :func:`hostnames`) inside one
read transaction. The write paths use :func:`find_doc`, :func:`fetch_doc` and
:func:`navigate` to find what they write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from apimctl.server import catalog, listing, rules
from apimctl.server.config import ServerConfig
from apimctl.server.context import Env
from apimctl.server.errors import NotFound
from apimctl.server.fields import Resource
from apimctl.server.maintenance import endpoint_event
from apimctl.server.messages import ApiRequest, ApiResponse, one
from apimctl.server.query import Projector, Selection, parse_fields, parse_list_query, run, select
from apimctl.server.store import Txn
from apimctl.server.tree import Node, Step

_encode = msgspec.json.encode
_decode = msgspec.json.decode


@dataclass
class Reading:
    """One read request inside its transaction."""

    req: ApiRequest
    steps: list[Step]
    txn: Txn
    projector: Projector
    sel: Selection | None
    object_responses: bool
    env: Env

    def one(self, res: Resource, obj: dict[str, Any]) -> ApiResponse:
        return one(self.projector.render(res, self.sel, obj), self.object_responses)


def read(req: ApiRequest, steps: list[Step], txn: Txn, config: ServerConfig) -> ApiResponse:
    """List or fetch what ``steps`` name."""
    env = Env(txn, req.area, config, req.user, catalog.of(config.dialect))
    sel = parse_fields(req.params.getlist("fields"), env.dialect.nested_wildcards)
    r = Reading(req, steps, txn, Projector(rules.hooks(env)), sel, config.bare_objects, env)
    di, doc = find_doc(steps, txn, req.area)
    last = steps[-1]
    res = env.resource(last.node.resource)
    if di == len(steps) - 1 and last.id is None:
        return _paged_list(r, last.node, res) or _list(r, last.node, res, list_docs(steps, di, txn, req.area))
    assert doc is not None
    if last.node.special == "endpoint_event":
        return _endpoint_event(r, doc, di, res)
    target = navigate(doc, steps[di + 1:])
    if isinstance(target, list):
        return _list(r, last.node, res, target)
    if target is None:
        raise NotFound(f"{last.node.segment} is not set")
    _check_fetch_filter(r, res, target)
    return r.one(res, target)


def _endpoint_event(r: Reading, doc: dict[str, Any], di: int, res: Resource) -> ApiResponse:
    target = endpoint_event(r.env, navigate(doc, r.steps[di + 1:-1]))
    if target is None:
        raise NotFound("this endpoint has no scheduled maintenance event")
    return r.one(res, target)


def _check_fetch_filter(r: Reading, res: Resource, target: dict[str, Any]) -> None:
    """A fetch with a filter answers the object only if it matches."""
    last = r.steps[-1]
    if not r.req.params.getlist("filter") or last.node.single:
        return
    q = parse_list_query(res, r.req.params, comma_joined=r.env.dialect.comma_filters)
    if not select([target], q, res, exact=res.exact_fetch_filter, hooks=r.projector.hooks)[0]:
        raise NotFound(f"no {res.name} with id {last.id!r} matches the filter")


def _list(r: Reading, node: Node, res: Resource, objs: list[dict[str, Any]]) -> ApiResponse:
    q = parse_list_query(res, r.req.params, page_offsets=node.page_offsets, comma_joined=r.env.dialect.comma_filters)
    if res.view:
        view = r.projector.hooks[res.view]
        objs = [view(o) for o in objs]
    page, total = select(objs, q, res, exact=node.exact_filters, or_filters=res.or_filters,
                         hooks=r.projector.hooks)
    plan = r.projector.compile(res, r.sel)
    return ApiResponse(200, [run(plan, o) for o in page], {"X-Total-Count": str(total)})


def _paged_list(r: Reading, node: Node, res: Resource) -> ApiResponse | None:
    """A list of top-level documents: the store's indexes answer the filters, the sort and
    the page (:mod:`apimctl.server.listing`), only the page is read from the store, and each
    document is decoded, projected and encoded on its own, so a page of large services never
    holds the whole area (or the whole page) decoded at once."""
    if node.link or res.view or node.kind is None:
        return None
    q = parse_list_query(res, r.req.params, page_offsets=node.page_offsets, comma_joined=r.env.dialect.comma_filters)
    raws, total = listing.page(r.txn, r.req.area, node.kind, res, q, exact=node.exact_filters,
                               or_filters=res.or_filters, hooks=r.projector.hooks)
    plan = r.projector.compile(res, r.sel)
    parts = [b"["]
    for raw in raws:
        if len(parts) > 1:
            parts.append(b",")
        parts.append(_encode(run(plan, _decode(raw))))
    parts.append(b"]")
    return ApiResponse(200, headers={"X-Total-Count": str(total)}, parts=parts)


def fetch_doc(txn: Txn, area: str, step: Step, parent: dict[str, Any] | None) -> dict[str, Any]:
    """The document ``step`` names (under ``parent``, for mounted documents)."""
    node = step.node
    assert node.kind
    doc = txn.get(area, node.kind, step.id or "")
    if doc is None or (node.link and parent is not None and doc.get(node.link) != parent.get("id")):
        raise NotFound(f"no {node.resource} with id {step.id!r}")
    return doc


def find_doc(steps: list[Step], txn: Txn, area: str) -> tuple[int, dict[str, Any] | None]:
    """Check every document on the path; answer the index of the innermost and its body."""
    di, doc = -1, None
    parent: dict[str, Any] | None = None
    for i, step in enumerate(steps):
        if step.node.kind is None:
            continue
        di = i
        if step.id is None:
            return di, None
        doc = parent = fetch_doc(txn, area, step, parent)
    return di, doc


def list_docs(steps: list[Step], di: int, txn: Txn, area: str) -> list[dict[str, Any]]:
    node = steps[di].node
    assert node.kind
    docs = txn.all(area, node.kind)
    if node.link and di > 0:
        parent_id = steps[di - 1].id
        docs = [d for d in docs if d.get(node.link) == parent_id]
    return docs


def navigate(obj: Any, steps: list[Step]) -> Any:
    """The place ``steps`` name inside a stored object."""
    for step in steps:
        node = step.node
        if not isinstance(obj, dict):
            raise NotFound(f"{node.segment} is not set")
        value = obj.get(node.field or node.segment)
        if node.single or step.id is None:
            obj = value if value is not None or node.single else []
            continue
        found = next((x for x in value or [] if isinstance(x, dict) and x.get("id") == step.id), None)
        if found is None:
            raise NotFound(f"no {node.resource} with id {step.id!r}")
        obj = found
    return obj


def hostnames(txn: Txn, area: str, which: str) -> list[dict[str, Any]]:
    """``[{address}]`` of the public or system domains in use by the area's endpoints."""
    seen: dict[str, None] = {}
    for service in txn.all(area, "service"):
        for endpoint in service.get("endpoints", []):
            for d in endpoint.get(which) or []:
                seen.setdefault(d.get("address", ""), None)
    return [{"address": a} for a in seen]
