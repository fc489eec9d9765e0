"""The configuration a replay decides on, read through the management API.

:func:`read_documents` reads what the traffic manager's steps need of an area (services with
their endpoints and error sets, packages with their plans, maintenance events, domains, and
the package keys with their package and plan, and the applications and members that hold
the keys), in the shape the reference server stores them: a key names its package, plan and
application, and an application its member, by the internal fields the traffic manager reads.
"""

from __future__ import annotations

from typing import Any

from apimctl.state.live import PAGE_SIZE, Lister, read_raw

KEY_FIELDS = ("id,apikey,status,qpsLimitCeiling,qpsLimitExempt,rateLimitCeiling,rateLimitExempt,"
              "package,plan,application")
# an application names its member by username; a member's areaStatus is what the key step reads
APPLICATION_FIELDS = "id,username,packageKeys"
MEMBER_FIELDS = "id,username,areaStatus"
# the kinds of apimctl (top-level) -> the server's names of the same documents
STORED = {"service": "service", "package": "package", "maintenanceEvent": "event", "domain": "domain"}


def _id(ref: Any) -> str | None:
    return str(ref["id"]) if isinstance(ref, dict) and ref.get("id") is not None else None


def stored_key(key: dict[str, Any]) -> dict[str, Any]:
    """A key as the server stores it (its package, plan and application by id)."""
    doc = dict(key)
    doc["_packageId"], doc["_planId"] = _id(key.get("package")), _id(key.get("plan"))
    doc["_applicationId"] = _id(key.get("application"))
    return doc


async def read_documents(client: Lister) -> dict[str, list[dict[str, Any]]]:
    """The area's documents by the server's kind names (``service``, ``package``, ``event``,
    ``domain``, ``key``, and, when the area has keys, ``application`` and ``member``)."""
    raw = await read_raw(client)
    docs = {stored: list(raw.get(kind) or []) for kind, stored in STORED.items()}
    keys = await client.list_all("/packageKeys", [("fields", KEY_FIELDS)], page_size=PAGE_SIZE)
    docs["key"] = [stored_key(k) for k in keys if isinstance(k, dict) and isinstance(k.get("apikey"), str)]
    if docs["key"]:
        docs["application"], docs["member"] = await _holders(client, docs["key"])
    return docs


async def _holders(client: Lister, keys: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The applications (each with its member's id, ``_memberId``, found by its ``username``)
    and the members of the area; a key the area does not name the application of gets the
    application that lists it."""
    apps = [a for a in await client.list_all("/applications", [("fields", APPLICATION_FIELDS)], page_size=PAGE_SIZE)
            if isinstance(a, dict) and a.get("id") is not None]
    members = [m for m in await client.list_all("/members", [("fields", MEMBER_FIELDS)], page_size=PAGE_SIZE)
               if isinstance(m, dict) and m.get("id") is not None]
    by_name = {m.get("username"): str(m["id"]) for m in members}
    stored = [{"id": str(app["id"]), "username": app.get("username"), "_memberId": by_name.get(app.get("username"))}
              for app in apps]
    owners = {str(key.get("id")): str(app["id"]) for app in apps
              for key in app.get("packageKeys") or [] if isinstance(key, dict)}
    for key in keys:
        key["_applicationId"] = key["_applicationId"] or owners.get(str(key.get("id")))
    return stored, [{**m, "id": str(m["id"])} for m in members]
