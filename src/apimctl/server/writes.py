"""Writes of the management API on documents: create, update, delete, and writes at a
place inside a document (the place itself is handled by :mod:`apimctl.server.nested`).

The engine calls :func:`write` inside one write transaction (or a trial transaction that is
rolled back, :mod:`apimctl.server.eventful`). Every step runs the hooks of the document's
catalog entry (:class:`~apimctl.server.fields.Rules`): ``before_merge``, ``prepare``,
``finalize`` and the writers of computed fields, ``after_write``, ``on_delete``. Problems are
collected in a :class:`~apimctl.server.validation.WriteCtx` and answered as one 400.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from apimctl.server import catalog, rules
from apimctl.server.config import ServerConfig
from apimctl.server.context import Env
from apimctl.server.errors import NotFound
from apimctl.server.fields import DATETIME, Resource
from apimctl.server.messages import ApiRequest, ApiResponse, one
from apimctl.server.nested import write_nested
from apimctl.server.query import Projector, Selection, parse_fields
from apimctl.server.reads import fetch_doc, find_doc, navigate
from apimctl.server.store import Txn
from apimctl.server.tree import Step
from apimctl.server.validation import WriteCtx, build, merge


@dataclass
class Writing:
    """One write request inside its transaction; ``di`` indexes the innermost document step."""

    req: ApiRequest
    steps: list[Step]
    op: str
    di: int
    txn: Txn
    env: Env
    ctx: WriteCtx
    projector: Projector
    sel: Selection | None
    object_responses: bool
    parent: dict[str, Any] | None  # the document holding the addressed one (mounted documents)

    @property
    def step(self) -> Step:
        return self.steps[self.di]

    @property
    def kind(self) -> str:
        assert self.step.node.kind
        return self.step.node.kind

    @property
    def res(self) -> Resource:
        return self.env.resource(self.step.node.resource)

    def render(self, res: Resource, obj: dict[str, Any]) -> dict[str, Any]:
        return self.projector.render(res, self.sel, obj)

    def put(self, doc: dict[str, Any]) -> None:
        self.txn.put(self.req.area, self.kind, doc["id"], doc)


def write(req: ApiRequest, steps: list[Step], op: str, di: int, txn: Txn, config: ServerConfig) -> ApiResponse:
    """Run a create, update or delete on the document at ``steps[di]`` or inside it."""
    env = Env(txn, req.area, config, req.user, catalog.of(config.dialect))
    _, parent = find_doc(steps[:di], txn, req.area) if di > 0 else (-1, None)
    w = Writing(req, steps, op, di, txn, env, WriteCtx(req.user, env.dialect), Projector(rules.hooks(env)),
                parse_fields(req.params.getlist("fields"), env.dialect.nested_wildcards), config.bare_objects, parent)
    if di < len(steps) - 1:
        return update_inside(w)
    if op == "create":
        return create(w)
    doc = fetch_doc(txn, req.area, w.step, parent)
    return delete(w, doc) if op == "delete" else update(w, doc)


def create(w: Writing) -> ApiResponse:
    res = w.res
    doc = build(res, w.req.body, "", w.ctx)
    if w.step.node.link and w.parent is not None:
        doc[w.step.node.link] = w.parent["id"]
    _prepare(w, res, doc, created=True)
    w.ctx.check()
    finalize(res, doc, w.ctx, w.env, created=True)
    w.ctx.check()
    w.put(doc)
    resp = one(w.render(res, doc), w.object_responses)
    resp.stored, resp.created = doc, w.env.created
    return resp


def update(w: Writing, doc: dict[str, Any]) -> ApiResponse:
    res = w.res
    old = _keep_old(w, res, doc)
    if res.rules.before_merge is not None:
        res.rules.before_merge(doc, w.req.body, w.env, w.ctx)
    merge(res, doc, w.req.body, "", w.ctx)
    _prepare(w, res, doc, created=False)
    w.ctx.check()
    finalize(res, doc, w.ctx, w.env, created=False)
    w.ctx.check()
    w.put(doc)
    _after_write(res, old, doc, w.env)
    rendered = w.render(res, doc)
    if res.bare_update:  # the specification's example answers an application update bare
        return ApiResponse(200, rendered, stored=doc)
    resp = one(rendered, w.object_responses)
    resp.stored = doc
    return resp


def delete(w: Writing, doc: dict[str, Any]) -> ApiResponse:
    on_delete = w.res.rules.on_delete
    if on_delete is not None:
        on_delete(doc, w.env)
    w.txn.delete(w.req.area, w.kind, doc["id"])
    return ApiResponse(200, None, stored=doc)


def update_inside(w: Writing) -> ApiResponse:
    """A write at a place inside the document (``/services/{id}/endpoints/{id}/cors``)."""
    res = w.res
    doc = fetch_doc(w.txn, w.req.area, w.step, w.parent)
    old = _keep_old(w, res, doc)
    result = write_nested(w.req.body, w.steps[w.di + 1:], w.op, doc, w.env, w.ctx)
    w.ctx.check()
    _touch_ancestors(doc, w.steps[w.di:], w.ctx, w.env)
    finalize(res, doc, w.ctx, w.env, created=False)
    w.ctx.check()
    w.put(doc)
    _after_write(res, old, doc, w.env)
    if result is None:
        return ApiResponse(200, None)
    target = w.env.resource(w.steps[-1].node.resource)
    if isinstance(result, list):
        return ApiResponse(200, [w.render(target, o) for o in result])
    return one(w.render(target, result), w.object_responses)


def _keep_old(w: Writing, res: Resource, doc: dict[str, Any]) -> dict[str, Any] | None:
    """The document as it was, for rules that compare (``keeps_old``)."""
    old = w.env.old = copy.deepcopy(doc) if res.rules.keeps_old else None
    return old


def _prepare(w: Writing, res: Resource, doc: dict[str, Any], created: bool) -> None:
    if res.rules.prepare is not None:
        res.rules.prepare(doc, w.req.body, w.env, w.ctx, w.parent, created)


def _after_write(res: Resource, old: dict[str, Any] | None, doc: dict[str, Any], env: Env) -> None:
    if res.rules.after_write is not None and old is not None:
        res.rules.after_write(old, doc, env)


def finalize(res: Resource, doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    """Whole-document checks and unique keys; then the computed fields sent in the body are
    written to the objects that hold them (only when nothing is wrong so far)."""
    if res.rules.finalize is not None:
        res.rules.finalize(doc, ctx, env, created)
    if ctx.problems:
        return
    while ctx.deferred:
        res_name, obj, fname, value, path = ctx.deferred.pop(0)
        writer = env.resource(res_name).rules.write_computed.get(fname)
        if writer is not None:
            writer(doc, obj, value, path, ctx, env)


def _touch_ancestors(doc: dict[str, Any], steps: list[Step], ctx: WriteCtx, env: Env) -> None:
    """A write inside an object moves its ``updated`` (the document's and every object on
    the path), so ``updated`` is a fingerprint of everything below it."""
    obj: Any = doc
    for i, step in enumerate(steps):
        if i > 0:
            obj = _step_into(obj, step)
        if not isinstance(obj, dict) or step.id is None:
            return
        res = env.resource(step.node.resource)
        updated = res.by_name.get("updated")
        if updated is not None and updated.type == DATETIME:
            obj["updated"] = ctx.ts(res.ts_style)


def _step_into(obj: Any, step: Step) -> Any:
    try:
        return navigate(obj, [step])
    except NotFound:
        return None
