"""Rules of members and their applications: unique usernames, role references, objects
created inside their owner's body, and deletes that take the owned objects along.

The catalog names :func:`finalize`, :func:`on_delete` and :func:`create_applications` (the
computed field ``applications``) as the Member's hooks, and :func:`delete_application` and
:func:`create_keys` (the computed field ``packageKeys``) as the Application's.
"""

from __future__ import annotations

from typing import Any

from apimctl.server import keys
from apimctl.server.context import Env, claim
from apimctl.server.roles import resolve_role
from apimctl.server.validation import WriteCtx, build


def finalize(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    for i, role in enumerate(doc.get("roles") or []):
        resolve_role(role, f"roles[{i}]", env, ctx)
    claim(env, ctx, "member.username", doc["id"], {doc.get("username", ""): "username"}, "username", sticky=True)


def on_delete(doc: dict[str, Any], env: Env) -> None:
    """A member's applications (and their keys) go with it."""
    for app in [a for a in env.docs("application") if a.get("_memberId") == doc["id"]]:
        delete_application(app, env)
        env.txn.delete(env.area, "application", app["id"])


def delete_application(doc: dict[str, Any], env: Env) -> None:
    """An application's keys go with it."""
    for key in [k for k in env.docs("key") if k.get("_applicationId") == doc["id"]]:
        keys.on_delete(key, env)
        env.txn.delete(env.area, "key", key["id"])


def create_applications(doc: dict[str, Any], member: dict[str, Any], value: Any, path: str,
                        ctx: WriteCtx, env: Env) -> None:
    """``applications`` sent with a new member: each stored as an application of its own."""
    res = env.resource("Application")
    for i, body in enumerate(_list_of(value, path, ctx)):
        app = build(res, body, f"{path}[{i}]", ctx)
        app["_memberId"] = member["id"]
        env.txn.put(env.area, "application", app["id"], app)
        env.forget("application")
        env.created.append((res, app, f"{path}[{i}]"))


def create_keys(doc: dict[str, Any], app: dict[str, Any], value: Any, path: str,
                ctx: WriteCtx, env: Env) -> None:
    """``packageKeys`` sent with a new application: each checked by the key rules and
    stored as a key of its own."""
    res = env.resource("PackageKey")
    env.prime("application", app)  # being created: its keys count for its member
    for i, body in enumerate(_list_of(value, path, ctx)):
        where = f"{path}[{i}]"
        key = build(res, body, where, ctx)
        sub = WriteCtx(env.user, env.dialect)
        keys.prepare(key, body, env, sub, app, True)
        keys.finalize_key(key, sub, env, True)
        for p in sub.problems:
            ctx.problem(f"{where}.{p['property']}", p["message"])
        env.txn.put(env.area, "key", key["id"], key)
        env.forget("key")
        env.created.append((res, key, where))


def _list_of(value: Any, path: str, ctx: WriteCtx) -> list[Any]:
    if not isinstance(value, list):
        ctx.problem(path, "must be an array")
        return []
    return value
