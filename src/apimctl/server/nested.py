"""Writes at a place inside a document: singletons (``cors``), items of nested collections
(``endpoints``, ``methods``, ``errorMessages``, plan entitlements ...), and bulk updates.

Called by :func:`apimctl.server.writes.update_inside`, which then finalizes and stores the
whole document. Items of a ``ref`` collection are upserted by id, items of the error-message
catalog are replaced and reset rather than added and removed; an item's deletion runs its
resource's ``on_delete_item`` hook.
"""

from __future__ import annotations

from typing import Any

from apimctl.platform import ERROR_CATALOG
from apimctl.server.context import Env
from apimctl.server.errors import Invalid, NotFound
from apimctl.server.fields import MISSING, Resource
from apimctl.server.maintenance import write_endpoint_event
from apimctl.server.reads import navigate
from apimctl.server.shapes import catalog_message
from apimctl.server.tree import Node, Step
from apimctl.server.validation import WriteCtx, build, merge


def write_nested(body: Any, steps: list[Step], op: str, doc: dict[str, Any], env: Env, ctx: WriteCtx) -> Any:
    """Run the operation on the place ``steps`` names inside ``doc``; answer what to render."""
    holder = navigate(doc, steps[:-1])
    if not isinstance(holder, dict):
        raise NotFound("no such object")
    last = steps[-1]
    node = last.node
    res = env.resource(node.resource)
    fname = node.field or node.segment
    if node.special == "endpoint_event":
        return write_endpoint_event(env, ctx, doc, holder, op, body)
    if node.single:
        return _write_single(node, res, holder, fname, op, body, ctx, env)
    if op in ("replace", "clear"):
        return _replace_all(node, res, holder, fname, body if op == "replace" else MISSING, ctx, env)
    if holder.get(fname) is None:
        holder[fname] = []
    items: list[dict[str, Any]] = holder[fname]
    if op == "bulk_update":
        return _bulk_update(res, items, body, ctx, _replaces(node, fname, env))
    if op == "create":
        return _create_item(res, items, body, ctx)
    target = _find_item(res, items, last)
    if op == "update":
        return merge(res, target, body, "", ctx)
    _delete_item(res, holder, items, target, env, ctx)
    return None


def _write_single(node: Node, res: Resource, holder: dict[str, Any], fname: str, op: str,
                  body: Any, ctx: WriteCtx, env: Env) -> Any:
    """POST sets the whole object, PUT changes the fields sent, DELETE clears it (or puts the
    defaults back, for singletons that always exist)."""
    field_def = env.resource(node.parent_resource).by_name.get(fname) if node.parent_resource else None
    autobuild = bool(field_def and field_def.autobuild)
    current = holder.get(fname)
    if op == "post" or (op == "put" and not isinstance(current, dict)):
        holder[fname] = build(res, body, "", ctx)
    elif op == "put" and isinstance(current, dict):
        merge(res, current, body, "", ctx)
    else:
        if current is None and not autobuild:
            raise NotFound(f"{node.segment} is not set")
        holder[fname] = build(res, {}, "", ctx) if autobuild else None
        return None
    return holder[fname]


def _replace_all(node: Node, res: Resource, holder: dict[str, Any], fname: str, body: Any,
                 ctx: WriteCtx, env: Env) -> Any:
    """``PUT`` of a collection with ``{"<collection>": [...]}`` replaces it as a whole;
    ``DELETE`` of the collection (``body`` MISSING) clears it. An empty collection is the
    field's default (``null`` where the dialect says so, SUPPLEMENT §10.7)."""
    field_def = env.resource(node.parent_resource).by_name[fname]
    items: list[dict[str, Any]] = []
    if body is not MISSING:
        given = body.get(fname) if isinstance(body, dict) else None
        if not isinstance(given, list):
            ctx.problem(fname, f"must be an object with the array {fname!r}")
            return None
        items = [build(res, b, f"{fname}[{i}]", ctx) for i, b in enumerate(given)]
        seen: set[Any] = set()
        for i, item in enumerate(items):
            if item.get("id") in seen:
                ctx.problem(f"{fname}[{i}].id", f"{item.get('id')!r} is listed twice")
            seen.add(item.get("id"))
    holder[fname] = items or field_def.default_value()
    return None if body is MISSING else items


def _replaces(node: Node, fname: str, env: Env) -> bool:
    """Whether the holder's field is replaced as a whole by a bulk update."""
    field_def = env.resource(node.parent_resource).by_name.get(fname) if node.parent_resource else None
    return bool(field_def and field_def.replace)


def _bulk_update(res: Resource, items: list[dict[str, Any]], body: Any, ctx: WriteCtx, replace: bool) -> Any:
    """``PUT`` of a collection with an array: replace the list, or update the items listed."""
    if not isinstance(body, list):
        ctx.problem("", "must be an array")
        return []
    if replace:
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


def _create_item(res: Resource, items: list[dict[str, Any]], body: Any, ctx: WriteCtx) -> dict[str, Any]:
    """A new item; a reference already listed is updated, a catalog message is replaced."""
    existing = None
    if isinstance(body, dict) and res.id_style in ("ref", "catalog"):
        existing = next((x for x in items if x.get("id") == body.get("id")), None)
    if existing is None:
        new = build(res, body, "", ctx)
        items.append(new)
        return new
    if res.id_style == "catalog":
        items[items.index(existing)] = new = build(res, body, "", ctx)
        return new
    return merge(res, existing, body, "", ctx)


def _find_item(res: Resource, items: list[dict[str, Any]], last: Step) -> dict[str, Any]:
    if res.id_style == "catalog" and last.id not in ERROR_CATALOG:
        raise Invalid(f"unknown error message id {last.id!r}", [
            {"property": "id", "message": f"unknown error message id {last.id!r}; ids come from the catalog"}])
    target = next((x for x in items if x.get("id") == last.id), None)
    if target is None:
        raise NotFound(f"no {last.node.resource} with id {last.id!r}")
    return target


def _delete_item(res: Resource, holder: dict[str, Any], items: list[dict[str, Any]], target: dict[str, Any],
                 env: Env, ctx: WriteCtx) -> None:
    """Remove the item (a catalog message goes back to its default)."""
    if res.rules.on_delete_item is not None:
        res.rules.on_delete_item(holder, target, env, ctx)
    ctx.check()
    if res.id_style == "catalog":
        items[items.index(target)] = catalog_message(target["id"], ctx.dialect)
    else:
        items.remove(target)
