"""Rules of services and what they hold: error sets, endpoint routes, the domain gate,
revisions, and renames or removals carried into plans and maintenance events.

The catalog names :func:`prepare`, :func:`finalize`, :func:`after_write` and
:func:`on_delete` as the Service's hooks and :func:`delete_error_set` as the ErrorSet's
``on_delete_item``.
"""

from __future__ import annotations

from typing import Any

from apimctl.server.context import Env, claim
from apimctl.server.domains import claim_public, host_of, public_hosts, release_public
from apimctl.server.roles import resolve_role
from apimctl.server.validation import WriteCtx, build

_SCOPES = ("service.name", "endpoint.route", "endpoint.id")


def prepare(doc: dict[str, Any], body: Any, env: Env, ctx: WriteCtx,
            parent: dict[str, Any] | None, created: bool) -> None:
    """A service created without error sets gets one named ``Default`` (SUPPLEMENT §3)."""
    if created and not doc.get("errorSets"):
        doc["errorSets"] = [build(env.resource("ErrorSet"), {"name": "Default"}, "errorSets[0]", ctx)]


def finalize(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    """Revision, error sets, endpoint names and routes, the domain gate, role permissions."""
    paths = ctx.paths()
    if not created:
        doc["revisionNumber"] = int(doc.get("revisionNumber") or 0) + 1
        doc["updated"] = ctx.ts("ms")
    doc["editorHandle"] = env.user
    sets_by_id, sets_by_name = _error_sets(doc, paths, ctx)
    routes = _endpoints(doc, paths, sets_by_id, sets_by_name, env, ctx)
    for i, role in enumerate(doc.get("roles") or []):
        resolve_role(role, paths.get(id(role), f"roles[{i}]"), env, ctx)
    claim(env, ctx, "service.name", doc["id"], {doc.get("name", ""): "name"}, "service name")
    _claim_routes(env, ctx, doc["id"], routes)
    claim_public(env, ctx, doc, paths)
    env.txn.claim(env.area, "endpoint.id", doc["id"], [ep["id"] for ep in doc.get("endpoints", [])])


def _error_sets(doc: dict[str, Any], paths: dict[int, str], ctx: WriteCtx
                ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """At least one error set, unique names; the sets by id and by name."""
    if not doc.get("errorSets"):
        ctx.problem("errorSets", "a service keeps at least one error set")
    sets_by_id = {s["id"]: s for s in doc.get("errorSets", [])}
    sets_by_name: dict[str, dict[str, Any]] = {}
    for i, es in enumerate(doc.get("errorSets", [])):
        if es.get("name") in sets_by_name:
            ctx.problem(paths.get(id(es), f"errorSets[{i}]") + ".name" if paths.get(id(es)) else f"errorSets[{i}].name",
                        f"duplicate error set name {es.get('name')!r}")
        sets_by_name.setdefault(es.get("name", ""), es)
    return sets_by_id, sets_by_name


Routes = dict[str, tuple[str, str]]  # route key -> (property to blame, message if taken)


def _endpoints(doc: dict[str, Any], paths: dict[int, str], sets_by_id: dict[str, dict[str, Any]],
               sets_by_name: dict[str, dict[str, Any]], env: Env, ctx: WriteCtx) -> Routes:
    """Check every endpoint; answer their routes."""
    names: set[str] = set()
    routes: Routes = {}
    active: list[str] | None = None
    for i, ep in enumerate(doc.get("endpoints", [])):
        where = paths.get(id(ep), f"endpoints[{i}]")
        at = (where + ".") if where else ""
        if ep.get("name") in names:
            ctx.problem(at + "name", f"duplicate endpoint name {ep.get('name')!r} in this service")
        names.add(ep.get("name", ""))
        _link_error_set(ep, at, sets_by_id, sets_by_name, ctx)
        _routes(ep, at, routes, ctx, env.dialect.route_message)
        if id(ep) in paths:  # written by this request: its hostnames go through the gate
            if active is None:
                active = [d["domain"] for d in env.docs("domain") if d.get("status") == "active"]
            _domain_gate(ep, at, active, _addresses(env.old, ep.get("id")), ctx)
    return routes


def _link_error_set(ep: dict[str, Any], at: str, sets_by_id: dict[str, dict[str, Any]],
                    sets_by_name: dict[str, dict[str, Any]], ctx: WriteCtx) -> None:
    ref = ep.get("errorSet")
    if not isinstance(ref, dict):
        return
    target = sets_by_id.get(ref.get("id", "")) if ref.get("id") else sets_by_name.get(ref.get("name", ""))
    if target is None:
        ctx.problem(at + "errorSet", "must name an error set of the same service")
    else:
        ep["errorSet"] = {"id": target["id"], "name": target["name"]}


def _routes(ep: dict[str, Any], at: str, routes: Routes, ctx: WriteCtx, by_method: str | None) -> None:
    """The endpoint's routes, each unique in the area: ``requestPathAlias`` + each public
    domain (SUPPLEMENT §4), or with ``by_method`` (the message of a repeated route) each HTTP
    method + public domain + ``requestPathAlias`` (§10.10.1)."""
    alias = ep.get("requestPathAlias", "")
    prop = at + "requestPathAlias"
    for d in ep.get("publicDomains") or [{"address": ""}]:
        address = str(d.get("address", ""))
        if by_method is None:
            keys = {f"{alias}|{address.lower()}": (
                f"duplicate requestPathAlias {alias!r} on {address!r} in this service",
                f"duplicate requestPathAlias and public domain: {alias!r} is already taken")}
        else:
            keys = {}
            for method in ep.get("supportedHttpMethods") or []:
                message = by_method.format(method=str(method).upper(), domain=address, path=alias)
                keys[f"{alias}|{address.lower()}|{str(method).lower()}"] = (message, message)
        for route, (here, taken) in keys.items():
            if route in routes:
                ctx.problem(prop, here)
            routes[route] = (prop, taken)


def _claim_routes(env: Env, ctx: WriteCtx, owner: str, routes: Routes) -> None:
    """The service's routes are its own in the area: a route another service holds is a 400."""
    for taken in env.txn.claim(env.area, "endpoint.route", owner, list(routes)):
        ctx.problem(*routes[taken])


def _addresses(service: dict[str, Any] | None, endpoint_id: Any) -> set[str]:
    """The hostnames an endpoint had before this write (already through the gate)."""
    for ep in (service or {}).get("endpoints", []):
        if ep.get("id") == endpoint_id:
            return {str(d.get("address", "")).strip().lower()
                    for f in ("publicDomains", "systemDomains") for d in ep.get(f) or []}
    return set()


def _domain_gate(ep: dict[str, Any], at: str, active: list[str], kept: set[str], ctx: WriteCtx) -> None:
    """New addresses must be under an active domain of the area (their host part: an
    address may carry a port, SUPPLEMENT §10.10.2); kept ones stay valid."""
    for fname in ("publicDomains", "systemDomains"):
        for j, d in enumerate(ep.get(fname) or []):
            address = str(d.get("address", "")).strip().lower()
            if address in kept:
                continue
            host, problem = host_of(address)
            if problem is not None:
                ctx.problem(f"{at}{fname}[{j}].address", problem)
            elif not any(host == a or host.endswith("." + a) for a in active):
                ctx.problem(f"{at}{fname}[{j}].address",
                            f"{host!r} is not under an active domain of this area (see /domains)")


def on_delete(doc: dict[str, Any], env: Env) -> None:
    for scope in _SCOPES:
        env.txn.release(env.area, scope, doc["id"])
    release_public(env, public_hosts(doc), doc["id"])
    _cascade(env, doc, None)


def after_write(old: dict[str, Any], doc: dict[str, Any], env: Env) -> None:
    release_public(env, public_hosts(old) - public_hosts(doc), doc["id"])
    _cascade(env, old, doc)


def delete_error_set(holder: dict[str, Any], target: dict[str, Any], env: Env, ctx: WriteCtx) -> None:
    """The last error set stays; endpoints using a deleted one fall back to none."""
    if len(holder.get("errorSets", [])) <= 1:
        ctx.problem("", "a service keeps at least one error set; the last one cannot be deleted")
        return
    for ep in holder.get("endpoints", []):
        if isinstance(ep.get("errorSet"), dict) and ep["errorSet"].get("id") == target.get("id"):
            ep["errorSet"] = None


def _names(service: dict[str, Any] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    if service:
        out[service["id"]] = service.get("name", "")
        for ep in service.get("endpoints", []):
            out[ep["id"]] = ep.get("name", "")
            for m in ep.get("methods", []):
                out[m["id"]] = m.get("name", "")
    return out


def _cascade(env: Env, old: dict[str, Any], new: dict[str, Any] | None) -> None:
    """Keep entitlements and maintenance events in step with renamed or removed objects."""
    before, after = _names(old), _names(new)
    if before == {k: after.get(k) for k in before}:
        return
    gone = set(before) - set(after)
    for package in env.docs("package"):
        if _fix_entitlements(package, gone, after):
            env.txn.put(env.area, "package", package["id"], package)
    for event in env.docs("event"):
        if _fix_refs(event, "endpoints", gone, after):
            env.txn.put(env.area, "event", event["id"], event)


def _fix_entitlements(package: dict[str, Any], gone: set[str], names: dict[str, str]) -> bool:
    changed = False
    for plan in package.get("plans", []):
        changed |= _fix_refs(plan, "services", gone, names)
        for ps in plan.get("services", []):
            changed |= _fix_refs(ps, "endpoints", gone, names)
            for pe in ps.get("endpoints", []):
                changed |= _fix_refs(pe, "methods", gone, names)
    return changed


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
