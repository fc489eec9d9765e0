"""Resource rules the field tables cannot express.

Called by :mod:`apimctl.server.engine` at fixed points of every write (``before_merge``,
``prepare``, ``finalize``, ``after_write``, ``on_delete_doc``, ``on_delete_child``) and for
computed fields at read time (:func:`hooks`). Here live: uniqueness (through the store's
index table), the domain gate, error sets and the message catalog, service revisions,
plan entitlements and role references, cascades of renames and deletions. Package keys,
maintenance-event links, event-trigger payloads and seed data have modules of their own
(:mod:`~apimctl.server.keys`, :mod:`~apimctl.server.maintenance`,
:mod:`~apimctl.server.triggers`, :mod:`~apimctl.server.seed`); the engine reaches them
through this module.
"""

from __future__ import annotations

from typing import Any

from apimctl.server import catalog as c
from apimctl.server.context import Env, claim, invalid, ref_of
from apimctl.server.keys import create_key, finalize_key, key_limits, move_key
from apimctl.server.maintenance import (
    endpoint_event,
    event_endpoint_view,
    finalize_event,
    set_endpoint_event,
    write_endpoint_event,
)
from apimctl.server.seed import seed_area
from apimctl.server.tree import Node
from apimctl.server.triggers import (
    NestedCreate,
    apply_event_changes,
    cascaded_deletes,
    event_after,
    event_preview,
    nested_previews,
    payload_of,
)
from apimctl.server.validation import POST_BUILD, WriteCtx, build

__all__ = ["Env", "NestedCreate", "apply_event_changes", "cascaded_deletes", "endpoint_event", "event_after", "event_preview",
           "nested_previews", "payload_of", "seed_area", "write_endpoint_event"]


def hooks(env: Env) -> dict[str, Any]:
    """Computed fields of the catalog, evaluated lazily with the request's caches."""
    return {
        "endpoint_event": lambda ep: endpoint_event(env, ep),
        "key_package": lambda key: ref_of(env.doc("package", key.get("_packageId"))),
        "key_plan": lambda key: ref_of(env.plan_of(key.get("_packageId"), key.get("_planId"))),
        "key_limits": lambda key: key_limits(env, key),
        "key_packaged": lambda key: True,
        "application_packaged": lambda app: app.get("id") in env.memo(
            "packaged-applications", lambda: {k.get("_applicationId") for k in env.docs("key")}),
        "application_keys": lambda app: [k for k in env.docs("key") if k.get("_applicationId") == app.get("id")],
        "member_applications": lambda m: [a for a in env.docs("application") if a.get("_memberId") == m.get("id")],
        "member_keys": lambda m: _member_keys(env, m),
        "event_endpoint": lambda ref: event_endpoint_view(env, ref),
    }


def _member_keys(env: Env, member: dict[str, Any]) -> list[dict[str, Any]]:
    apps = {a["id"] for a in env.docs("application") if a.get("_memberId") == member.get("id")}
    return [k for k in env.docs("key") if k.get("_applicationId") in apps]


def _error_set_hook(obj: dict[str, Any], body: dict[str, Any], ctx: WriteCtx, path: str, created: bool) -> None:
    if not created:
        return
    given = {m.get("id"): m for m in obj.get("errorMessages") or [] if isinstance(m, dict)}
    obj["errorMessages"] = [given.get(mid) or c.catalog_message(mid) for mid in c.ERROR_CATALOG]


def _error_message_hook(obj: dict[str, Any], body: dict[str, Any], ctx: WriteCtx, path: str, created: bool) -> None:
    mid = obj.get("id")
    if not isinstance(mid, str) or mid not in c.ERROR_CATALOG:
        if created:
            ctx.problem(f"{path}.id" if path else "id", f"unknown error message id {mid!r}; ids come from the catalog")
        return
    code, status = c.ERROR_CATALOG[mid]
    obj["code"] = code
    if created and "status" not in body:
        obj["status"] = status


def _endpoint_hook(obj: dict[str, Any], body: dict[str, Any], ctx: WriteCtx, path: str, created: bool) -> None:
    """``oauth`` forbids apiKeyValueLocations; any other type forbids oauthGrantTypes."""
    at = (path + ".") if path else ""
    if obj.get("requestAuthenticationType") == "oauth":
        if obj.get("apiKeyValueLocations"):
            if "apiKeyValueLocations" in body:
                ctx.problem(at + "apiKeyValueLocations", "must be empty when requestAuthenticationType is oauth")
            else:
                obj["apiKeyValueLocations"] = []
    elif obj.get("oauthGrantTypes"):
        if "oauthGrantTypes" in body:
            ctx.problem(at + "oauthGrantTypes", "is only allowed when requestAuthenticationType is oauth")
        else:
            obj["oauthGrantTypes"] = []


POST_BUILD["ErrorSet"] = _error_set_hook
POST_BUILD["ErrorMessage"] = _error_message_hook
POST_BUILD["Endpoint"] = _endpoint_hook


def needs_old(kind: str) -> bool:
    return kind in ("service", "role", "key")


def before_merge(kind: str, doc: dict[str, Any], body: Any, env: Env, ctx: WriteCtx) -> None:
    if kind == "key" and isinstance(body, dict):
        move_key(doc, body, env, ctx)


def prepare(kind: str, doc: dict[str, Any], body: Any, env: Env, ctx: WriteCtx,
            parent: dict[str, Any] | None, created: bool) -> None:
    if kind == "service" and created and not doc.get("errorSets"):
        doc["errorSets"] = [build(c.resource("ErrorSet"), {"name": "Default"}, "errorSets[0]", ctx)]
    elif kind == "domain":
        doc["domain"] = str(doc.get("domain", "")).strip().lower()
        if not doc["domain"] or any(ch.isspace() for ch in doc["domain"]) or "/" in doc["domain"]:
            ctx.problem("domain", "must be a domain name such as example.com")
        doc["status"] = "active" if env.config.auto_approve_domains else "waiting"
    elif kind == "key" and created:
        create_key(doc, body if isinstance(body, dict) else {}, env, ctx, parent)
    elif kind == "role":
        for fname in ("organization", "group"):
            ref = doc.get(fname)
            if isinstance(ref, dict) and set(ref) <= {"id", "name"}:
                org = env.doc("organization", ref.get("id"))
                if org is None:
                    ctx.problem(f"{fname}.id", f"no organization with id {ref.get('id')!r}")
                else:
                    doc[fname] = {k: org.get(k) for k in ("id", "name", "description", "parent", "isActive", "created", "updated")}
        doc["isOrgrole"] = doc.get("organization") is not None


def finalize(kind: str, doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    """Whole-document checks and unique keys; raises nothing, records problems in ``ctx``."""
    fn = _FINALIZERS.get(kind)
    if fn is not None:
        fn(doc, ctx, env, created)
    if not ctx.problems:
        _run_deferred(kind, doc, ctx, env)


def _run_deferred(kind: str, doc: dict[str, Any], ctx: WriteCtx, env: Env) -> None:
    """Computed fields sent in the body: written to the objects that hold them."""
    while ctx.deferred:
        res_name, obj, fname, value, path = ctx.deferred.pop(0)
        if (res_name, fname) == ("Endpoint", "scheduledMaintenanceEvent"):
            set_endpoint_event(doc, obj, value, path, ctx, env)
        elif (res_name, fname) == ("Member", "applications"):
            for i, body in enumerate(_list_of(value, path, ctx)):
                app = build(c.resource("Application"), body, f"{path}[{i}]", ctx)
                app["_memberId"] = obj["id"]
                env.txn.put(env.area, "application", app["id"], app)
                env.forget("application")
                env.created.append(("application", app, f"{path}[{i}]"))
        elif (res_name, fname) == ("Application", "packageKeys"):
            env.prime("application", obj)  # being created: its keys count for its member
            for i, body in enumerate(_list_of(value, path, ctx)):
                where = f"{path}[{i}]"
                key = build(c.resource("PackageKey"), body, where, ctx)
                sub = WriteCtx(env.user)
                create_key(key, body if isinstance(body, dict) else {}, env, sub, obj)
                finalize_key(key, sub, env, True)
                for p in sub.problems:
                    ctx.problem(f"{where}.{p['property']}", p["message"])
                env.txn.put(env.area, "key", key["id"], key)
                env.forget("key")
                env.created.append(("key", key, where))


def _list_of(value: Any, path: str, ctx: WriteCtx) -> list[Any]:
    if not isinstance(value, list):
        ctx.problem(path, "must be an array")
        return []
    return value


def _paths(ctx: WriteCtx) -> dict[int, str]:
    return {id(obj): path for _, obj, path in ctx.touched}


def _finalize_service(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    paths = _paths(ctx)
    if not created:
        doc["revisionNumber"] = int(doc.get("revisionNumber") or 0) + 1
        doc["updated"] = ctx.ts("ms")
    doc["editorHandle"] = env.user
    if not doc.get("errorSets"):
        ctx.problem("errorSets", "a service keeps at least one error set")
    sets_by_id = {s["id"]: s for s in doc.get("errorSets", [])}
    sets_by_name: dict[str, dict[str, Any]] = {}
    for i, es in enumerate(doc.get("errorSets", [])):
        if es.get("name") in sets_by_name:
            ctx.problem(paths.get(id(es), f"errorSets[{i}]") + ".name" if paths.get(id(es)) else f"errorSets[{i}].name",
                        f"duplicate error set name {es.get('name')!r}")
        sets_by_name.setdefault(es.get("name", ""), es)
    names: dict[str, int] = {}
    routes: dict[str, str] = {}
    active = None
    for i, ep in enumerate(doc.get("endpoints", [])):
        where = paths.get(id(ep), f"endpoints[{i}]")
        at = (where + ".") if where else ""
        if ep.get("name") in names:
            ctx.problem(at + "name", f"duplicate endpoint name {ep.get('name')!r} in this service")
        names[ep.get("name", "")] = i
        ref = ep.get("errorSet")
        if isinstance(ref, dict):
            target = sets_by_id.get(ref.get("id", "")) if ref.get("id") else sets_by_name.get(ref.get("name", ""))
            if target is None:
                ctx.problem(at + "errorSet", "must name an error set of the same service")
            else:
                ep["errorSet"] = {"id": target["id"], "name": target["name"]}
        alias = ep.get("requestPathAlias", "")
        for d in ep.get("publicDomains") or [{"address": ""}]:
            route = f"{alias}|{str(d.get('address', '')).lower()}"
            if route in routes:
                ctx.problem(at + "requestPathAlias",
                            f"duplicate requestPathAlias {alias!r} on {d.get('address', '')!r} in this service")
            routes[route] = at + "requestPathAlias"
        if id(ep) in paths:
            if active is None:
                active = [d["domain"] for d in env.docs("domain") if d.get("status") == "active"]
            _domain_gate(ep, at, active, _addresses(env.old, ep.get("id")), ctx)
    for i, role in enumerate(doc.get("roles", [])):
        _resolve_role(role, paths.get(id(role), f"roles[{i}]"), env, ctx)
    claim(env, ctx, "service.name", doc["id"], {doc.get("name", ""): "name"}, "service name")
    claim(env, ctx, "endpoint.route", doc["id"], routes, "requestPathAlias and public domain")
    env.txn.claim(env.area, "endpoint.id", doc["id"], [ep["id"] for ep in doc.get("endpoints", [])])


def _addresses(service: dict[str, Any] | None, endpoint_id: Any) -> set[str]:
    """The hostnames an endpoint had before this write (already through the gate)."""
    for ep in (service or {}).get("endpoints", []):
        if ep.get("id") == endpoint_id:
            return {str(d.get("address", "")).strip().lower()
                    for f in ("publicDomains", "systemDomains") for d in ep.get(f) or []}
    return set()


def _domain_gate(ep: dict[str, Any], at: str, active: list[str], kept: set[str], ctx: WriteCtx) -> None:
    """New hostnames must be under an active domain of the area; kept ones stay valid."""
    for fname in ("publicDomains", "systemDomains"):
        for j, d in enumerate(ep.get(fname) or []):
            host = str(d.get("address", "")).strip().lower()
            if host not in kept and not any(host == a or host.endswith("." + a) for a in active):
                ctx.problem(f"{at}{fname}[{j}].address",
                            f"{host!r} is not under an active domain of this area (see /domains)")


def _resolve_role(ref: dict[str, Any], where: str, env: Env, ctx: WriteCtx) -> None:
    role = env.doc("role", ref.get("id"))
    if role is None:
        ctx.problem(f"{where}.id" if where else "id", f"no role with id {ref.get('id')!r}")
    else:
        ref["name"] = role.get("name", "")


def _finalize_package(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    paths = _paths(ctx)
    names: set[str] = set()
    for i, plan in enumerate(doc.get("plans", [])):
        where = paths.get(id(plan), f"plans[{i}]")
        at = (where + ".") if where else ""
        if plan.get("name") in names:
            ctx.problem(at + "name", f"duplicate plan name {plan.get('name')!r} in this package")
        names.add(plan.get("name", ""))
        for j, ps in enumerate(plan.get("services", [])):
            _resolve_entitlement(ps, paths.get(id(ps), f"{at}services[{j}]"), env, ctx, paths)
        for j, role in enumerate(plan.get("roles", [])):
            _resolve_role(role, paths.get(id(role), f"{at}roles[{j}]"), env, ctx)
    claim(env, ctx, "package.name", doc["id"], {doc.get("name", ""): "name"}, "package name")


def _resolve_entitlement(ps: dict[str, Any], where: str, env: Env, ctx: WriteCtx, paths: dict[int, str]) -> None:
    at = (where + ".") if where else ""
    service = env.doc("service", ps.get("id"))
    if service is None:
        ctx.problem(at + "id", f"no service with id {ps.get('id')!r}")
        return
    ps["name"] = service.get("name", "")
    endpoints = {e["id"]: e for e in service.get("endpoints", [])}
    seen: set[str] = set()
    for k, pe in enumerate(ps.get("endpoints", [])):
        ew = paths.get(id(pe), f"{at}endpoints[{k}]")
        ep = endpoints.get(pe.get("id"))
        if ep is None:
            ctx.problem(f"{ew}.id" if ew else "id", f"no endpoint with id {pe.get('id')!r} in service {service.get('name')!r}")
            continue
        if pe["id"] in seen:
            ctx.problem(f"{ew}.id" if ew else "id", "duplicate endpoint entitlement")
        seen.add(pe["id"])
        pe["name"] = ep.get("name", "")
        methods = {m["id"]: m for m in ep.get("methods", [])}
        for m, pm in enumerate(pe.get("methods", [])):
            mw = paths.get(id(pm), f"{ew}.methods[{m}]")
            method = methods.get(pm.get("id"))
            if method is None:
                ctx.problem(f"{mw}.id" if mw else "id", f"no method with id {pm.get('id')!r} in endpoint {ep.get('name')!r}")
            else:
                pm["name"] = method.get("name", "")


def _finalize_role(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    claim(env, ctx, "role.name", doc["id"], {doc.get("name", ""): "name"}, "role name")


def _finalize_domain(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    claim(env, ctx, "domain", doc["id"], {doc.get("domain", ""): "domain"}, "domain")


def _finalize_member(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    for i, role in enumerate(doc.get("roles") or []):
        _resolve_role(role, f"roles[{i}]", env, ctx)
    claim(env, ctx, "member.username", doc["id"], {doc.get("username", ""): "username"}, "username", sticky=True)


_FINALIZERS = {
    "service": _finalize_service,
    "package": _finalize_package,
    "role": _finalize_role,
    "domain": _finalize_domain,
    "event": finalize_event,
    "member": _finalize_member,
    "key": finalize_key,
}


def on_delete_doc(kind: str, doc: dict[str, Any], env: Env) -> None:
    area, txn = env.area, env.txn
    if kind == "service":
        for scope in ("service.name", "endpoint.route", "endpoint.id"):
            txn.release(area, scope, doc["id"])
        _cascade_service(env, doc, None)
    elif kind == "package":
        if any(k.get("_packageId") == doc["id"] for k in env.docs("key")):
            raise invalid("", "the package has package keys; delete them first")
        txn.release(area, "package.name", doc["id"])
    elif kind == "role":
        txn.release(area, "role.name", doc["id"])
        _cascade_role(env, doc["id"], None)
    elif kind == "member":
        for app in [a for a in env.docs("application") if a.get("_memberId") == doc["id"]]:
            on_delete_doc("application", app, env)
            txn.delete(area, "application", app["id"])
    elif kind == "application":
        for key in [k for k in env.docs("key") if k.get("_applicationId") == doc["id"]]:
            on_delete_doc("key", key, env)
            txn.delete(area, "key", key["id"])
    elif kind == "key":
        txn.release(area, "key.apikey", doc["id"])


def on_delete_child(node: Node, doc: dict[str, Any], holder: dict[str, Any], target: dict[str, Any],
                    env: Env, ctx: WriteCtx) -> None:
    if node.resource == "ErrorSet":
        if len(holder.get("errorSets", [])) <= 1:
            ctx.problem("", "a service keeps at least one error set; the last one cannot be deleted")
            return
        for ep in holder.get("endpoints", []):
            if isinstance(ep.get("errorSet"), dict) and ep["errorSet"].get("id") == target.get("id"):
                ep["errorSet"] = None
    elif node.resource == "Plan" and any(k.get("_planId") == target.get("id") for k in env.docs("key")):
        ctx.problem("", "the plan has package keys; move or delete them first")


def _names(service: dict[str, Any] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    if service:
        out[service["id"]] = service.get("name", "")
        for ep in service.get("endpoints", []):
            out[ep["id"]] = ep.get("name", "")
            for m in ep.get("methods", []):
                out[m["id"]] = m.get("name", "")
    return out


def after_write(kind: str, old: dict[str, Any] | None, doc: dict[str, Any], env: Env) -> None:
    if kind == "service" and old is not None:
        _cascade_service(env, old, doc)
    elif kind == "role" and old is not None and old.get("name") != doc.get("name"):
        _cascade_role(env, doc["id"], doc.get("name"))


def _cascade_service(env: Env, old: dict[str, Any], new: dict[str, Any] | None) -> None:
    """Keep entitlements and maintenance events in step with renamed or removed objects."""
    before, after = _names(old), _names(new)
    if before == {k: after.get(k) for k in before}:
        return
    gone = set(before) - set(after)
    for package in env.docs("package"):
        changed = False
        for plan in package.get("plans", []):
            changed |= _fix_refs(plan, "services", gone, after)
            for ps in plan.get("services", []):
                changed |= _fix_refs(ps, "endpoints", gone, after)
                for pe in ps.get("endpoints", []):
                    changed |= _fix_refs(pe, "methods", gone, after)
        if changed:
            env.txn.put(env.area, "package", package["id"], package)
    for event in env.docs("event"):
        if _fix_refs(event, "endpoints", gone, after):
            env.txn.put(env.area, "event", event["id"], event)


def _fix_refs(holder: dict[str, Any], fname: str, gone: set[str], names: dict[str, str]) -> bool:
    refs = holder.get(fname) or []
    kept = [r for r in refs if r.get("id") not in gone]
    changed = len(kept) != len(refs)
    for r in kept:
        if r.get("id") in names and r.get("name") != names[r["id"]]:
            r["name"] = names[r["id"]]
            changed = True
    if changed:
        holder[fname] = kept
    return changed


def _cascade_role(env: Env, role_id: str, name: str | None) -> None:
    for kind, holders in (("service", lambda d: [d]), ("package", lambda d: d.get("plans", []))):
        for doc in env.docs(kind):
            changed = False
            for holder in holders(doc):
                roles = holder.get("roles") or []
                if any(r.get("id") == role_id for r in roles):
                    if name is None:
                        holder["roles"] = [r for r in roles if r.get("id") != role_id]
                    else:
                        for r in roles:
                            if r.get("id") == role_id:
                                r["name"] = name
                    changed = True
            if changed:
                env.txn.put(env.area, kind, doc["id"], doc)

