"""Rules of roles: organization references, unique names, and role permissions that follow
renames and deletions into services and plans.

The catalog names :func:`prepare`, :func:`finalize`, :func:`after_write` and
:func:`on_delete` as the Role's hooks; :func:`resolve_role` is shared with the rules of
services, packages and members, which hold role references.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apimctl.server.context import Env, claim
from apimctl.server.validation import WriteCtx

_ORG_FIELDS = ("id", "name", "description", "parent", "isActive", "created", "updated")


def prepare(doc: dict[str, Any], body: Any, env: Env, ctx: WriteCtx,
            parent: dict[str, Any] | None, created: bool) -> None:
    """``organization`` and ``group`` given by id become the whole organization."""
    for fname in ("organization", "group"):
        ref = doc.get(fname)
        if isinstance(ref, dict) and set(ref) <= {"id", "name"}:
            org = env.doc("organization", ref.get("id"))
            if org is None:
                ctx.problem(f"{fname}.id", f"no organization with id {ref.get('id')!r}")
            else:
                doc[fname] = {k: org.get(k) for k in _ORG_FIELDS}
    doc["isOrgrole"] = doc.get("organization") is not None


def finalize(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    claim(env, ctx, "role.name", doc["id"], {doc.get("name", ""): "name"}, "role name")


def on_delete(doc: dict[str, Any], env: Env) -> None:
    env.txn.release(env.area, "role.name", doc["id"])
    _cascade(env, doc["id"], None)


def after_write(old: dict[str, Any], doc: dict[str, Any], env: Env) -> None:
    if old.get("name") != doc.get("name"):
        _cascade(env, doc["id"], doc.get("name"))


def resolve_role(ref: dict[str, Any], where: str, env: Env, ctx: WriteCtx) -> None:
    """A role reference ``{id}`` gets the role's name; an unknown id is a problem."""
    role = env.doc("role", ref.get("id"))
    if role is None:
        ctx.problem(f"{where}.id" if where else "id", f"no role with id {ref.get('id')!r}")
    else:
        ref["name"] = role.get("name", "")


_HOLDERS: tuple[tuple[str, Callable[[dict[str, Any]], list[dict[str, Any]]]], ...] = (
    ("service", lambda d: [d]),
    ("package", lambda d: d.get("plans", [])),
)


def _cascade(env: Env, role_id: str, name: str | None) -> None:
    """Rename (``name``) or drop (``None``) the role's permissions on services and plans."""
    for kind, holders in _HOLDERS:
        for doc in env.docs(kind):
            changed = False
            for holder in holders(doc):
                changed |= _fix_permissions(holder, role_id, name)
            if changed:
                env.txn.put(env.area, kind, doc["id"], doc)


def _fix_permissions(holder: dict[str, Any], role_id: str, name: str | None) -> bool:
    roles = holder.get("roles") or []
    if not any(r.get("id") == role_id for r in roles):
        return False
    if name is None:
        holder["roles"] = [r for r in roles if r.get("id") != role_id]
    else:
        for r in roles:
            if r.get("id") == role_id:
                r["name"] = name
    return True
