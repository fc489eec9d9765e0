"""Rules of packages and plans: unique names, entitlements that must name existing
services, endpoints and methods, role permissions, and deletes refused while keys exist.

The catalog names :func:`finalize` and :func:`on_delete` as the Package's hooks,
:func:`delete_plan` as the Plan's ``on_delete_item`` and :func:`mark_entitlement` as the
PlanService's ``after_build``.
"""

from __future__ import annotations

from typing import Any

from apimctl.server.context import Env, claim
from apimctl.server.errors import Invalid
from apimctl.server.roles import resolve_role
from apimctl.server.validation import WriteCtx, build


def finalize(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    paths = ctx.paths()
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
            resolve_role(role, paths.get(id(role), f"{at}roles[{j}]"), env, ctx)
    claim(env, ctx, "package.name", doc["id"], {doc.get("name", ""): "name"}, "package name")


_ENTITLE_ALL = "_entitleAll"  # a new entitlement without endpoints, to be expanded (never stored)


def mark_entitlement(obj: dict[str, Any], body: dict[str, Any], ctx: WriteCtx, path: str, created: bool) -> None:
    """Where the dialect entitles a whole service (SUPPLEMENT §10.6), a new entitlement that
    lists no endpoints is marked for :func:`finalize` to entitle every endpoint and method."""
    listed = isinstance(body, dict) and "endpoints" in body
    if created and ctx.dialect.auto_entitle and not listed:
        obj[_ENTITLE_ALL] = True


def _entitle_all(ps: dict[str, Any], service: dict[str, Any], env: Env, ctx: WriteCtx) -> None:
    res = env.resource("PlanEndpoint")
    ps["endpoints"] = [
        build(res, {"id": ep["id"], "methods": [{"id": m["id"]} for m in ep.get("methods", [])]}, "", ctx)
        for ep in service.get("endpoints", [])
    ]


def _resolve_entitlement(ps: dict[str, Any], where: str, env: Env, ctx: WriteCtx, paths: dict[int, str]) -> None:
    at = (where + ".") if where else ""
    service = env.doc("service", ps.get("id"))
    expand = ps.pop(_ENTITLE_ALL, False)
    if service is None:
        ctx.problem(at + "id", f"no service with id {ps.get('id')!r}")
        return
    if expand:
        _entitle_all(ps, service, env, ctx)
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
        _resolve_methods(pe, ep, ew, ctx, paths)


def _resolve_methods(pe: dict[str, Any], ep: dict[str, Any], ew: str, ctx: WriteCtx, paths: dict[int, str]) -> None:
    methods = {m["id"]: m for m in ep.get("methods", [])}
    for m, pm in enumerate(pe.get("methods", [])):
        mw = paths.get(id(pm), f"{ew}.methods[{m}]")
        method = methods.get(pm.get("id"))
        if method is None:
            ctx.problem(f"{mw}.id" if mw else "id", f"no method with id {pm.get('id')!r} in endpoint {ep.get('name')!r}")
        else:
            pm["name"] = method.get("name", "")
            _resolve_filter(pm, method, mw, ctx)


def _resolve_filter(pm: dict[str, Any], method: dict[str, Any], mw: str, ctx: WriteCtx) -> None:
    """A plan method's response filter (where the dialect has one) names a filter of the method."""
    ref = pm.get("responseFilter")
    if not isinstance(ref, dict):
        return
    found = next((f for f in method.get("responseFilters", []) if f.get("id") == ref.get("id")), None)
    at = f"{mw}.responseFilter.id" if mw else "id"
    if found is None:
        ctx.problem(at, f"no response filter with id {ref.get('id')!r} in method {method.get('name')!r}")
    else:
        ref["name"] = found.get("name", "")


def on_delete(doc: dict[str, Any], env: Env) -> None:
    if any(k.get("_packageId") == doc["id"] for k in env.docs("key")):
        raise Invalid.at("", "the package has package keys; delete them first")
    env.txn.release(env.area, "package.name", doc["id"])


def delete_plan(holder: dict[str, Any], target: dict[str, Any], env: Env, ctx: WriteCtx) -> None:
    if any(k.get("_planId") == target.get("id") for k in env.docs("key")):
        ctx.problem("", "the plan has package keys; move or delete them first")
