"""Rules of package keys: creation under a plan, generated values, ceilings, moves, limits.

The catalog names :func:`before_merge`, :func:`prepare`, :func:`finalize_key` and
:func:`on_delete` as the PackageKey's hooks; :mod:`apimctl.server.members` (keys created
with an application), :mod:`apimctl.server.triggers` (event payloads) and the computed field
``limits`` (:mod:`apimctl.server.rules`) use the rest.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Mapping
from typing import Any

from apimctl.server.context import Env, claim
from apimctl.server.validation import WriteCtx

_KEY_ALPHABET = string.ascii_lowercase + string.digits


def _random(length: int) -> str:
    return "".join(secrets.choice(_KEY_ALPHABET) for _ in range(max(1, length)))


def prepare(doc: dict[str, Any], body: Any, env: Env, ctx: WriteCtx,
            parent: dict[str, Any] | None, created: bool) -> None:
    """A new key is placed under its plan and gets its generated values."""
    if created:
        create_key(doc, body if isinstance(body, dict) else {}, env, ctx, parent)


def before_merge(doc: dict[str, Any], body: Any, env: Env, ctx: WriteCtx) -> None:
    """An update may move the key to another plan of its package."""
    if isinstance(body, dict):
        move_key(doc, body, env, ctx)


def on_delete(doc: dict[str, Any], env: Env) -> None:
    env.txn.release(env.area, "key.apikey", doc["id"])


def create_key(doc: dict[str, Any], body: dict[str, Any], env: Env, ctx: WriteCtx, parent: dict[str, Any] | None) -> None:
    """Place a new key under its plan (the package's only plan when none is named) and
    generate the apikey and secret the body leaves out."""
    plan_ref, package_ref = body.get("plan"), body.get("package")
    plan_id = plan_ref.get("id") if isinstance(plan_ref, dict) else None
    package_id = package_ref.get("id") if isinstance(package_ref, dict) else None
    if plan_id is None and isinstance(package_id, str):
        plans = (env.doc("package", package_id) or {}).get("plans", [])
        if len(plans) == 1:
            plan_id = plans[0]["id"]
    if not isinstance(plan_id, str):
        ctx.problem("plan.id", "is required (unless the package has exactly one plan)")
        return
    package = package_of_plan(env, plan_id)
    if package is None:
        ctx.problem("plan.id", f"no plan with id {plan_id!r}")
        return
    if package_id is not None and env.doc("package", package_id) is None:
        ctx.problem("package.id", f"no package with id {package_id!r}")
    elif package_id is not None and package_id != package["id"]:
        ctx.problem("plan.id", f"plan {plan_id!r} does not belong to package {package_id!r}")
    doc["_packageId"], doc["_planId"] = package["id"], plan_id
    if parent is not None:
        doc["_applicationId"] = parent["id"]
    if not doc.get("apikey"):
        doc["apikey"] = _random(int(package.get("keyLength") or 24))
    if not doc.get("secret"):
        doc["secret"] = _random(int(package.get("sharedSecretLength") or 10))


def package_of_plan(env: Env, plan_id: str) -> dict[str, Any] | None:
    for package in env.docs("package"):
        if any(p.get("id") == plan_id for p in package.get("plans", [])):
            return package
    return None


def move_key(doc: dict[str, Any], body: dict[str, Any], env: Env, ctx: WriteCtx) -> None:
    """A key moves between plans of its package only."""
    package_ref, plan_ref = body.get("package"), body.get("plan")
    moving = "delete the key and create the same key value under the other package"
    if isinstance(package_ref, dict) and package_ref.get("id") not in (None, doc.get("_packageId")):
        ctx.problem("package.id", f"a package key cannot be moved to another package; {moving}")
    if isinstance(plan_ref, dict) and plan_ref.get("id") not in (None, doc.get("_planId")):
        if env.plan_of(doc.get("_packageId"), plan_ref["id"]) is None:
            if package_of_plan(env, str(plan_ref["id"])) is not None:
                ctx.problem("plan.id", f"plan {plan_ref['id']!r} belongs to another package; {moving}")
            else:
                ctx.problem("plan.id", f"no plan with id {plan_ref['id']!r}")
        else:
            doc["_planId"] = plan_ref["id"]
            check_key_allowance(doc, env, ctx)


def key_limits(env: Env, key: dict[str, Any]) -> list[dict[str, Any]]:
    """The limits in force for a key (its ``limits`` field)."""
    return limits_of(key, env.plan_of(key.get("_packageId"), key.get("_planId")) or {})


def limits_of(key: Mapping[str, Any], plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The key's own ceilings where set, else the plan's; an exempt flag (key or plan)
    removes that limit. Also the ``limits`` of the key's event-trigger payload."""
    out = []
    for what, period in (("rateLimit", plan.get("rateLimitPeriod", "day")), ("qpsLimit", "second")):
        if key.get(f"{what}Exempt") or plan.get(f"{what}Exempt"):
            continue
        own = key.get(f"{what}Ceiling")
        if isinstance(own, int):
            out.append({"source": "key", "ceiling": own, "period": period})
        else:
            out.append({"source": "plan", "ceiling": int(plan.get(f"{what}Ceiling") or 0), "period": period})
    return out


def check_key_allowance(doc: dict[str, Any], env: Env, ctx: WriteCtx) -> None:
    """A member holds at most the plan's ``maxNumKeysAllowed`` keys under it ("maximum keys
    per developer"), counted over all of the member's applications. Checked when a key is
    created under a plan or moved to it, so lowering the maximum later keeps existing keys."""
    plan = env.plan_of(doc.get("_packageId"), doc.get("_planId"))
    maximum = (plan or {}).get("maxNumKeysAllowed")
    if not isinstance(maximum, int):
        return
    app = env.doc("application", doc.get("_applicationId"))
    member_id = (app or {}).get("_memberId")
    if app is None or member_id is None:
        return
    apps = {a["id"] for a in env.docs("application") if a.get("_memberId") == member_id} | {app["id"]}
    held = sum(1 for k in env.docs("key")
               if k.get("_applicationId") in apps and k.get("_planId") == doc.get("_planId")
               and k.get("id") != doc.get("id"))
    if held >= maximum:
        ctx.problem("plan.id", f"the member already holds {held} key(s) under plan "
                    f"{(plan or {}).get('name', '')!r}, whose maxNumKeysAllowed is {maximum}")


def finalize_key(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    plan = env.plan_of(doc.get("_packageId"), doc.get("_planId"))
    if created and plan is not None:
        check_key_allowance(doc, env, ctx)
    old = env.old if not created else None
    if plan is not None:
        for what in ("rateLimit", "qpsLimit"):
            ceiling = doc.get(f"{what}Ceiling")
            if old is not None and ceiling == old.get(f"{what}Ceiling") and doc.get("_planId") == old.get("_planId"):
                continue  # unchanged: a plan lowered later keeps its keys editable
            maximum = plan.get(f"{what}Ceiling") or 0
            if isinstance(ceiling, int) and maximum and ceiling > maximum and not plan.get(f"{what}KeyOverrideAllowed"):
                ctx.problem(f"{what}Ceiling", f"must not exceed the plan's {what}Ceiling ({maximum}) "
                            f"unless the plan sets {what}KeyOverrideAllowed")
    if doc.get("apikey"):
        claim(env, ctx, "key.apikey", doc["id"], {doc["apikey"]: "apikey"}, "apikey")

