"""Someone to call an area's APIs as: a member, an application of theirs and a package key on a
plan, created through the management API (``apimctl consumer``).

Members, applications and keys are the developers' side of an area, which manifests do not
manage; the traffic manager needs one to let a call through a plan. ``apimctl call --key
USERNAME`` uses the member's first active key, so the member is created with exactly the
username given. What exists already is kept: the member of that username, their application
of that name, and a key of it on the plan; running it twice creates nothing the second time.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from apimctl import kinds
from apimctl.applying.calls import Client, find_by_name
from apimctl.errors import ApimctlError

_PLAN = kinds.ROLES.keys_for  # the kind keys are issued for
_PACKAGE = kinds.get(str(_PLAN.parent))


@dataclass(frozen=True)
class Consumer:
    """What the area holds for one consumer, and what this run created (``created``: the
    kinds of the objects it wrote, in order)."""

    username: str
    member_id: str
    application: str
    application_id: str
    key_id: str
    plan: str
    created: tuple[str, ...]


async def add_consumer(client: Client, username: str, plan_key: str, *,
                       application: str | None = None, email: str | None = None) -> Consumer:
    """The member ``username`` with the application ``application`` (default: the username)
    holding a key on the plan ``plan_key`` (``PACKAGE/PLAN``), each created when missing."""
    package_id, plan_id = await _plan_ids(client, plan_key)
    created: list[str] = []
    member = await find_by_name(client, "/members", username, key="username",
                                params={"fields": "id,username"})
    if member is None:
        member = await client.post("/members", {
            "username": username, "email": email or f"{username}@example.com", "displayName": username,
            "externalId": username, "passwdNew": secrets.token_urlsafe(16)})
        created.append("member")
    name = application or username
    apps = await client.get(f"/members/{member['id']}/applications", {"fields": "id,name"})
    app = next((a for a in _items(apps) if a.get("name") == name), None)
    if app is None:
        app = await client.post(f"/members/{member['id']}/applications", {"name": name, "username": username})
        created.append("application")
    held = await client.get(f"/applications/{app['id']}/packageKeys",
                            {"fields": "id,status,package.id,plan.id"})
    key = next((k for k in _items(held) if _id(k.get(_PLAN.name)) == plan_id), None)
    if key is None:
        key = await client.post(f"/applications/{app['id']}/packageKeys",
                                {_PACKAGE.name: {"id": package_id}, _PLAN.name: {"id": plan_id}})
        created.append("key")
    return Consumer(username, str(member["id"]), name, str(app["id"]), str(key["id"]), plan_key,
                    tuple(created))


async def _plan_ids(client: Client, plan_key: str) -> tuple[str, str]:
    try:
        package_key, plan_name = kinds.split_key(_PLAN, plan_key)
    except ValueError as exc:
        raise ApimctlError(f"--plan: {exc} (for example 'Weather Partners/Gold')") from None
    package_name = kinds.unescape_name(str(package_key))
    plans = _PLAN.manifest_key
    package = await find_by_name(client, _PACKAGE.path, package_name,
                                 params={"fields": f"id,name,{plans}.id,{plans}.name"})
    if package is None:
        raise ApimctlError(f"--plan {plan_key}: the area has no package {package_name!r}")
    found = next((p for p in package.get(plans) or [] if p.get("name") == plan_name), None)
    if found is None:
        names = ", ".join(sorted(str(p.get("name")) for p in package.get(plans) or [])) or "none"
        raise ApimctlError(f"--plan {plan_key}: package {package_name!r} has no plan {plan_name!r} "
                           f"(its plans: {names})")
    return str(package["id"]), str(found["id"])


def _items(reply: Any) -> list[dict[str, Any]]:
    if isinstance(reply, dict):
        return [reply]
    return [item for item in reply or [] if isinstance(item, dict)]


def _id(ref: Any) -> str | None:
    return str(ref["id"]) if isinstance(ref, dict) and "id" in ref else None
