"""The generic request engine of the management API.

The HTTP layer (:mod:`apimctl.server.app`) hands over an :class:`ApiRequest` (method, path
segments, query parameters, parsed body, area, user) and gets an :class:`ApiResponse`
back. The engine resolves the path on the resource tree (:mod:`apimctl.server.tree`), opens
one store transaction, runs the operation generically — list, fetch, create, update,
delete on a document or on a place inside one — and leaves resource rules (uniqueness,
domain gate, package keys, cascades) to :mod:`apimctl.server.rules` and event triggers to
the dispatcher.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import msgspec

from apimctl.errors import Invalid, NotFound
from apimctl.server import catalog as c
from apimctl.server import rules
from apimctl.server.config import ServerConfig
from apimctl.server.query import Projector, parse_fields, parse_list_query, run, select
from apimctl.server.store import Store, Txn
from apimctl.server.tree import Node, Step, method_not_allowed, resolve
from apimctl.server.validation import WriteCtx, build, merge

MISSING: Any = c.MISSING
EVENT_KINDS = {"member": "member", "application": "application", "key": "key"}


@dataclass
class ApiRequest:
    method: str
    segments: list[str]
    params: Any  # starlette QueryParams (get / getlist)
    body: Any = MISSING
    area: str = ""
    user: str | None = None


@dataclass
class ApiResponse:
    status: int = 200
    body: Any = None  # JSON value; None -> empty body
    headers: dict[str, str] = field(default_factory=dict)
    template: str = ""
    stored: dict[str, Any] | None = None  # the document written (for post events)
    # documents created inside the write besides ``stored``: (kind, document, body path)
    created: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)
    raw: bytes | None = None  # the body already encoded (large lists), instead of ``body``


class NoEvents:
    """Stands in for the event dispatcher when none is configured."""

    def pre(self, area: str, obj: str, event: str, payload: dict[str, Any] | None,
            obj_id: str | None, txn: str) -> dict[str, Any]:
        return {}

    def post(self, area: str, obj: str, event: str, payload: dict[str, Any] | None,
             obj_id: str | None, txn: str) -> None:
        return None

    def new_txn(self) -> str:
        return "0" * 32

    def enabled(self, area: str, obj: str, event: str) -> bool:
        return False

    def log(self) -> list[dict[str, Any]]:
        return []


def _op(method: str, last: Step, body: Any) -> str:
    node = last.node
    if node.single:
        return {"GET": "get", "HEAD": "get", "POST": "post", "PUT": "put", "DELETE": "delete"}.get(method, "?")
    if last.id is None:
        if method == "PUT" and isinstance(body, list):
            return "bulk_update"
        return {"GET": "list", "HEAD": "list", "POST": "create"}.get(method, "?")
    return {"GET": "fetch", "HEAD": "fetch", "PUT": "update", "DELETE": "delete"}.get(method, "?")


class Engine:
    """Runs management-API operations against the store."""

    def __init__(self, config: ServerConfig, store: Store, dispatcher: Any | None = None) -> None:
        self.config = config
        self.store = store
        self.events = dispatcher or NoEvents()
        self._seeded: set[str] = set()

    # Entry point --------------------------------------------------------------------
    def handle(self, req: ApiRequest) -> ApiResponse:
        self._ensure_area(req.area)
        if req.segments[:1] == ["domains"] and len(req.segments) == 3 and req.segments[2] == "hostnames" \
                and req.segments[1] in ("public", "system"):
            return self._hostnames(req)
        steps, template = resolve(req.segments)
        op = _op(req.method, steps[-1], req.body)
        if op not in steps[-1].node.ops:
            raise method_not_allowed(req.method, template)
        if op in ("list", "fetch", "get"):
            with self.store.read() as txn:
                resp = self._read(req, steps, txn)
        else:
            if op != "delete" and req.body is MISSING:
                raise Invalid("a JSON body is required", 400, items=[{"property": "", "message": "a JSON body is required"}])
            resp = self._write(req, steps, op)
        resp.template = template
        return resp

    def _ensure_area(self, area: str) -> None:
        if area in self._seeded:
            return
        with self.store.write() as txn:
            if not txn.area_known(area):
                rules.seed_area(txn, area)
                txn.add_area(area)
        self._seeded.add(area)

    # Reads --------------------------------------------------------------------------
    def _read(self, req: ApiRequest, steps: list[Step], txn: Txn) -> ApiResponse:
        env = rules.Env(txn, req.area, self.config, req.user)
        projector = Projector(rules.hooks(env))
        sel = parse_fields(req.params.getlist("fields"))
        di, doc = self._doc_step(steps, txn, req.area)
        last = steps[-1]
        res = c.resource(last.node.resource)
        if di == len(steps) - 1 and last.id is None:
            paged = self._paged_list(req, last.node, res, txn, projector, sel)
            if paged is not None:
                return paged
            docs = self._list_docs(steps, di, txn, req.area)
            return self._list(req, last.node, res, docs, projector, sel)
        assert doc is not None
        if last.node.special == "endpoint_event":
            target = rules.endpoint_event(env, self._navigate(doc, steps[di + 1:-1]))
            if target is None:
                raise NotFound("this endpoint has no scheduled maintenance event", 404)
            return self._one(projector.render(res, sel, target))
        target = self._navigate(doc, steps[di + 1:])
        if isinstance(target, list):
            return self._list(req, last.node, res, target, projector, sel)
        if target is None:
            raise NotFound(f"{last.node.segment} is not set", 404)
        if req.params.getlist("filter") and not last.node.single:
            # a fetch with a filter answers the object only if it matches (exactly, for applications)
            q = parse_list_query(res, req.params)
            if not select([target], q, res, exact=last.node.kind == "application", hooks=projector.hooks)[0]:
                raise NotFound(f"no {res.name} with id {last.id!r} matches the filter", 404)
        return self._one(projector.render(res, sel, target))

    def _list(self, req: ApiRequest, node: Node, res: c.Resource, objs: list[dict[str, Any]],
              projector: Projector, sel: Any) -> ApiResponse:
        q = parse_list_query(res, req.params, page_offsets=node.page_offsets)
        exact = node.kind == "key" and node.link is not None
        or_filters = node.resource in ("Package", "Plan")
        if res.view:
            view = projector.hooks[res.view]
            objs = [view(o) for o in objs]
        page, total = select(objs, q, res, exact=exact, or_filters=or_filters, hooks=projector.hooks)
        plan = projector.compile(res, sel)
        body = [run(plan, o) for o in page]
        return ApiResponse(200, body, {"X-Total-Count": str(total)})

    def _paged_list(self, req: ApiRequest, node: Node, res: c.Resource, txn: Txn,
                    projector: Projector, sel: Any) -> ApiResponse | None:
        """A top-level list without filter, search or sort: only the page is read from the
        store, and each document is decoded, projected and encoded on its own, so a page of
        large services never holds the whole area (or the whole page) decoded at once."""
        q = parse_list_query(res, req.params, page_offsets=node.page_offsets)
        if q.filters or q.searches or q.sort or node.link or res.view or node.kind is None:
            return None
        total = txn.count(req.area, node.kind)
        plan = projector.compile(res, sel)
        parts = [_encode(run(plan, _decode(raw))) for raw in txn.page(req.area, node.kind, q.offset, q.limit)]
        return ApiResponse(200, headers={"X-Total-Count": str(total)}, raw=b"[" + b",".join(parts) + b"]")

    def _one(self, obj: Any) -> ApiResponse:
        return ApiResponse(200, obj if self.config.object_responses else [obj])

    def _doc_step(self, steps: list[Step], txn: Txn, area: str) -> tuple[int, dict[str, Any] | None]:
        """Check every document on the path; answer the index of the innermost and its body."""
        di, doc = -1, None
        parent: dict[str, Any] | None = None
        for i, step in enumerate(steps):
            node = step.node
            if node.kind is None:
                continue
            di = i
            if step.id is None:
                doc = None
                break
            doc = txn.get(area, node.kind, step.id)
            if doc is None or (node.link and parent is not None and doc.get(node.link) != parent.get("id")):
                raise NotFound(f"no {node.resource} with id {step.id!r}", 404)
            parent = doc
        return di, doc

    def _list_docs(self, steps: list[Step], di: int, txn: Txn, area: str) -> list[dict[str, Any]]:
        node = steps[di].node
        assert node.kind
        docs = txn.all(area, node.kind)
        if node.link and di > 0:
            parent_id = steps[di - 1].id
            docs = [d for d in docs if d.get(node.link) == parent_id]
        return docs

    def _navigate(self, obj: Any, steps: list[Step]) -> Any:
        for step in steps:
            node = step.node
            if not isinstance(obj, dict):
                raise NotFound(f"{node.segment} is not set", 404)
            value = obj.get(node.field or node.segment)
            if node.single or step.id is None:
                obj = value if value is not None or node.single else []
                continue
            found = next((x for x in value or [] if isinstance(x, dict) and x.get("id") == step.id), None)
            if found is None:
                raise NotFound(f"no {node.resource} with id {step.id!r}", 404)
            obj = found
        return obj

    # Writes -------------------------------------------------------------------------
    def _write(self, req: ApiRequest, steps: list[Step], op: str) -> ApiResponse:
        di = max(i for i, s in enumerate(steps) if s.node.kind)
        kind = steps[di].node.kind
        assert kind
        event_obj = EVENT_KINDS.get(kind) if di == len(steps) - 1 else None
        if event_obj is None:
            with self.store.write() as txn:
                return self._write_in(req, steps, op, di, txn)
        return self._write_with_events(req, steps, op, di, event_obj)

    def _write_with_events(self, req: ApiRequest, steps: list[Step], op: str, di: int, obj_name: str) -> ApiResponse:
        """Members, applications, keys: pre event before the write, post event after commit."""
        event = {"create": "create", "update": "update", "delete": "delete"}.get(op)
        if event is None:
            raise method_not_allowed(req.method, "/" + "/".join(req.segments))
        txn_id = self.events.new_txn()
        with self.store.read() as txn:
            env = rules.Env(txn, req.area, self.config, req.user)
            payload, obj_id = rules.event_preview(env, steps, di, op, req.body)
            nested = rules.nested_previews(env, steps, di, req.body) if op == "create" else []
            cascade = rules.cascaded_deletes(env, obj_name, obj_id) if op == "delete" else []
        pres = [(obj_name, f"pre-{event}")] + [(n.kind, "pre-create") for n in nested] + \
               [(kind, "pre-delete") for kind, _ in cascade]
        if any(self.events.enabled(req.area, o, e) for o, e in pres):
            # a write the server would refuse anyway is refused before any receiver hears of it
            with self.store.trial() as txn:
                self._write_in(copy.deepcopy(req), steps, op, di, txn)
        changes = self.events.pre(req.area, obj_name, f"pre-{event}", payload, obj_id, txn_id)
        if changes and isinstance(req.body, dict):
            req.body = rules.apply_event_changes(req.body, changes)
        nested_txns = self._nested_pre(req.area, nested)
        cascade_txns = [(kind, child, self.events.new_txn()) for kind, child in cascade]
        for kind, child, child_txn in cascade_txns:
            self.events.pre(req.area, kind, "pre-delete", None, child, child_txn)
        with self.store.write() as txn:
            resp = self._write_in(req, steps, op, di, txn)
            env = rules.Env(txn, req.area, self.config, req.user)
            post_payload, post_id = rules.event_after(env, steps, di, op, resp, payload, obj_id)
            nested_posts = [(kind, rules.payload_of(env, kind, doc), doc["id"], where)
                            for kind, doc, where in resp.created]
        self.events.post(req.area, obj_name, f"post-{event}", post_payload, post_id, txn_id)
        for kind, nested_payload, nested_id, where in nested_posts:
            nested_txn = nested_txns.get(where) or self.events.new_txn()
            self.events.post(req.area, kind, "post-create", nested_payload, nested_id, nested_txn)
        for kind, child, child_txn in cascade_txns:
            self.events.post(req.area, kind, "post-delete", None, child, child_txn)
        return resp

    def _nested_pre(self, area: str, nested: list[rules.NestedCreate]) -> dict[str, str]:
        """Pre-create events of the objects created inside the body (each its own txn);
        their changes go into the body before anything is written."""
        txns: dict[str, str] = {}
        for item in nested:
            txns[item.path] = txn_id = self.events.new_txn()
            changes = self.events.pre(area, item.kind, "pre-create", item.payload, None, txn_id)
            if changes:
                item.holder[item.index] = rules.apply_event_changes(item.holder[item.index], changes)
        return txns

    def _write_in(self, req: ApiRequest, steps: list[Step], op: str, di: int, txn: Txn) -> ApiResponse:
        env = rules.Env(txn, req.area, self.config, req.user)
        ctx = WriteCtx(req.user)
        doc_node = steps[di].node
        kind = doc_node.kind
        assert kind
        _, parent_doc = self._doc_step(steps[:di], txn, req.area) if di > 0 else (-1, None)
        sel = parse_fields(req.params.getlist("fields"))
        projector = Projector(rules.hooks(env))
        if di == len(steps) - 1:
            return self._write_doc(req, steps, op, di, txn, env, ctx, parent_doc, projector, sel)
        doc = txn.get(req.area, kind, steps[di].id or "")
        if doc is None or (doc_node.link and parent_doc is not None and doc.get(doc_node.link) != parent_doc.get("id")):
            raise NotFound(f"no {doc_node.resource} with id {steps[di].id!r}", 404)
        old = env.old = copy.deepcopy(doc) if rules.needs_old(kind) else None
        result = self._write_nested(req, steps[di + 1:], op, doc, env, ctx)
        self._check(ctx)
        self._touch_ancestors(doc, steps[di:], ctx)
        rules.finalize(kind, doc, ctx, env, created=False)
        self._check(ctx)
        txn.put(req.area, kind, doc["id"], doc)
        rules.after_write(kind, old, doc, env)
        if result is None:
            return ApiResponse(200, None)
        res = c.resource(steps[-1].node.resource)
        if isinstance(result, list):
            return ApiResponse(200, [projector.render(res, sel, o) for o in result])
        return self._one(projector.render(res, sel, result))

    def _touch_ancestors(self, doc: dict[str, Any], steps: list[Step], ctx: WriteCtx) -> None:
        """A write inside an object moves its ``updated`` (the document's and every object
        on the path), so ``updated`` is a fingerprint of everything below it."""
        obj: Any = doc
        for i, step in enumerate(steps):
            if i > 0:
                try:
                    obj = self._navigate(obj, [step])
                except NotFound:
                    return
            if not isinstance(obj, dict) or step.id is None:
                return
            res = c.resource(step.node.resource)
            updated = res.by_name.get("updated")
            if updated is not None and updated.type == c.DATETIME:
                obj["updated"] = ctx.ts(res.ts_style)

    def _check(self, ctx: WriteCtx) -> None:
        if ctx.problems:
            first = ctx.problems[0]
            where = f"{first['property']}: " if first["property"] else ""
            raise Invalid(f"{where}{first['message']}", 400, items=list(ctx.problems))

    def _write_doc(self, req: ApiRequest, steps: list[Step], op: str, di: int, txn: Txn, env: rules.Env,
                   ctx: WriteCtx, parent_doc: dict[str, Any] | None, projector: Projector, sel: Any) -> ApiResponse:
        step = steps[di]
        node = step.node
        kind = node.kind
        assert kind
        res = c.resource(node.resource)
        if op == "create":
            body = req.body
            doc = build(res, body, "", ctx)
            if node.link and parent_doc is not None:
                doc[node.link] = parent_doc["id"]
            rules.prepare(kind, doc, body, env, ctx, parent_doc, created=True)
            self._check(ctx)
            rules.finalize(kind, doc, ctx, env, created=True)
            self._check(ctx)
            txn.put(req.area, kind, doc["id"], doc)
            resp = self._one(projector.render(res, sel, doc))
            resp.stored, resp.created = doc, env.created
            return resp
        found = txn.get(req.area, kind, step.id or "")
        if found is None or (node.link and parent_doc is not None and found.get(node.link) != parent_doc.get("id")):
            raise NotFound(f"no {node.resource} with id {step.id!r}", 404)
        doc = found
        if op == "delete":
            rules.on_delete_doc(kind, doc, env)
            txn.delete(req.area, kind, doc["id"])
            return ApiResponse(200, None, stored=doc)
        old = env.old = copy.deepcopy(doc) if rules.needs_old(kind) else None
        rules.before_merge(kind, doc, req.body, env, ctx)
        merge(res, doc, req.body, "", ctx)
        rules.prepare(kind, doc, req.body, env, ctx, parent_doc, created=False)
        self._check(ctx)
        rules.finalize(kind, doc, ctx, env, created=False)
        self._check(ctx)
        txn.put(req.area, kind, doc["id"], doc)
        rules.after_write(kind, old, doc, env)
        rendered = projector.render(res, sel, doc)
        if kind == "application":
            # the specification's example answers an application update bare
            return ApiResponse(200, rendered, stored=doc)
        resp = self._one(rendered)
        resp.stored = doc
        return resp

    def _write_nested(self, req: ApiRequest, steps: list[Step], op: str, doc: dict[str, Any],
                      env: rules.Env, ctx: WriteCtx) -> Any:
        """Run the operation on the place ``steps`` names inside ``doc``; answer what to render."""
        holder = self._navigate(doc, steps[:-1])
        if not isinstance(holder, dict):
            raise NotFound("no such object", 404)
        last = steps[-1]
        node = last.node
        res = c.resource(node.resource)
        fname = node.field or node.segment
        body = req.body
        if node.special == "endpoint_event":
            return rules.write_endpoint_event(env, ctx, doc, holder, op, body)
        if node.single:
            return self._write_single(node, res, holder, fname, op, body, ctx)
        items: list[dict[str, Any]] = holder.setdefault(fname, [])
        if op == "bulk_update":
            return self._bulk_update(res, items, body, ctx, node)
        if op == "create":
            existing = None
            if isinstance(body, dict) and res.id_style in ("ref", "catalog"):
                existing = next((x for x in items if x.get("id") == body.get("id")), None)
            if existing is not None:
                if res.id_style == "catalog":
                    items[items.index(existing)] = new = build(res, body, "", ctx)
                    return new
                return merge(res, existing, body, "", ctx)
            new = build(res, body, "", ctx)
            items.append(new)
            return new
        if res.id_style == "catalog" and last.id not in c.ERROR_CATALOG:
            raise Invalid(f"unknown error message id {last.id!r}", 400, items=[
                {"property": "id", "message": f"unknown error message id {last.id!r}; ids come from the catalog"}])
        target = next((x for x in items if x.get("id") == last.id), None)
        if target is None:
            raise NotFound(f"no {node.resource} with id {last.id!r}", 404)
        if op == "update":
            return merge(res, target, body, "", ctx)
        rules.on_delete_child(node, doc, holder, target, env, ctx)
        self._check(ctx)
        if res.id_style == "catalog":
            items[items.index(target)] = c.catalog_message(target["id"])
        else:
            items.remove(target)
        return None

    def _write_single(self, node: Node, res: c.Resource, holder: dict[str, Any], fname: str, op: str,
                      body: Any, ctx: WriteCtx) -> Any:
        field_def = c.resource(node.parent_resource).by_name.get(fname) if node.parent_resource else None
        autobuild = bool(field_def and field_def.autobuild)
        current = holder.get(fname)
        if op == "post" or (op == "put" and not isinstance(current, dict)):
            holder[fname] = build(res, body, "", ctx)
        elif op == "put" and isinstance(current, dict):
            merge(res, current, body, "", ctx)
        else:
            if current is None and not autobuild:
                raise NotFound(f"{node.segment} is not set", 404)
            holder[fname] = build(res, {}, "", ctx) if autobuild else None
            return None
        return holder[fname]

    def _bulk_update(self, res: c.Resource, items: list[dict[str, Any]], body: Any, ctx: WriteCtx, node: Node) -> Any:
        if not isinstance(body, list):
            ctx.problem("", "must be an array")
            return []
        if node.resource == "ScheduledMaintenanceEventEndpoint":
            items[:] = [build(res, b, f"[{i}]", ctx) for i, b in enumerate(body)]
            return items
        by_id = {x.get("id"): x for x in items}
        out = []
        for i, entry in enumerate(body):
            eid = entry.get("id") if isinstance(entry, dict) else None
            if eid not in by_id:
                ctx.problem(f"[{i}].id", f"no {res.name} with id {eid!r} here")
                continue
            out.append(merge(res, by_id[eid], entry, f"[{i}]", ctx))
        return out

    # Specials -----------------------------------------------------------------------
    def _hostnames(self, req: ApiRequest) -> ApiResponse:
        if req.method not in ("GET", "HEAD"):
            raise method_not_allowed(req.method, f"/domains/{req.segments[1]}/hostnames")
        which = "publicDomains" if req.segments[1] == "public" else "systemDomains"
        with self.store.read() as txn:
            seen: dict[str, None] = {}
            for service in txn.all(req.area, "service"):
                for endpoint in service.get("endpoints", []):
                    for d in endpoint.get(which) or []:
                        seen.setdefault(d.get("address", ""), None)
        body = [{"address": a} for a in seen]
        return ApiResponse(200, body, {"X-Total-Count": str(len(body))},
                           template=f"/domains/{req.segments[1]}/hostnames")


_encode = msgspec.json.encode
_decode = msgspec.json.decode


def dumps(value: Any, indent: bool = False) -> bytes:
    """JSON bytes of a response body."""
    data = msgspec.json.encode(value)
    return msgspec.json.format(data, indent=2) if indent else data

