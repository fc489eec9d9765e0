"""The objects of event-trigger payloads: stored (camelCase) objects in the snake_case
shape of the specification's "Events" section, the fields a pre event may change, and the
redaction of secrets for the event log.

Used by the dispatcher (:mod:`apimctl.server.events`) and by the event hooks of the catalog
(:mod:`apimctl.server.triggers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apimctl.server.keys import limits_of

SENSITIVE = "(sensitive)"

# Payload fields a pre event may change with ``proceed_with_changes`` (snake_case).
WRITABLE: dict[str, frozenset[str]] = {
    "member": frozenset({
        "username", "email", "display_name", "external_id", "uri", "blog", "im", "imsvc",
        "phone", "company", "address1", "address2", "locality", "region", "postal_code",
        "country_code", "first_name", "last_name", "area_status",
    }),
    "application": frozenset({
        "name", "description", "type", "ads_system", "usage_model", "tags", "notes",
        "how_did_you_hear", "preferred_protocol", "preferred_output", "external_id", "uri",
        "commercial", "ads",
    }),
    "key": frozenset({
        "apikey", "secret", "status", "qps_limit_ceiling", "qps_limit_exempt",
        "rate_limit_ceiling", "rate_limit_exempt",
    }),
}
_SECRET_FIELDS = frozenset({"secret", "password", "passwd_new", "passwdNew"})


def snake_to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_MEMBER_STRINGS = (
    "region", "external_id", "phone", "address1", "address2", "area_status", "blog", "im",
    "country_code", "uri", "first_name", "display_name", "username", "email", "postal_code",
    "company", "last_name", "locality", "imsvc",
)
_APPLICATION_STRINGS = (
    "preferred_protocol", "tags", "external_id", "ads_system", "type", "uri", "username",
    "preferred_output", "how_did_you_hear", "description", "usage_model", "name", "notes",
)


def _strings(obj: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        value = obj.get(snake_to_camel(name))
        out[name] = "" if value is None else value
    return out


def member_payload(member: Mapping[str, Any]) -> dict[str, Any]:
    """A stored (camelCase) member as the snake_case member object of the callbacks."""
    payload = _strings(member, _MEMBER_STRINGS)
    payload.update(
        registration_ipaddr=member.get("registrationIpaddr") or "",
        object_type="member",
        created=member.get("created"),
        updated=member.get("updated"),
    )
    return payload


def application_payload(app: Mapping[str, Any], member: Mapping[str, Any]) -> dict[str, Any]:
    """An application and its owner as the callbacks' application object (no ``id`` before it has one)."""
    payload: dict[str, Any] = {"member": member_payload(member)}
    payload.update(_strings(app, _APPLICATION_STRINGS))
    payload["username"] = app.get("username") or member.get("username") or ""
    payload.update(
        status=app.get("status") or "active",
        object_type="application",
        created=app.get("created"),
        updated=app.get("updated"),
        ads=bool(app.get("ads", False)),
        commercial=bool(app.get("commercial", False)),
    )
    if app.get("id") is not None:
        payload["id"] = app["id"]
    return payload


def key_payload(
    key: Mapping[str, Any],
    app: Mapping[str, Any],
    member: Mapping[str, Any],
    package: Mapping[str, Any],
    plan: Mapping[str, Any],
) -> dict[str, Any]:
    """A package key as the callbacks' key object.

    The platform's ``service`` of a key is the plan it is issued under: ``service_key`` is the
    plan id. ``limits`` lists the effective per-period and per-second ceilings, each with its
    source (``key`` when the key sets it, else ``plan``); exempt limits are left out.
    """
    limits = limits_of(key, plan)
    return {
        "member": member_payload(member),
        "application": application_payload(app, member),
        "service": {
            "service_key": plan.get("id"),
            "name": plan.get("name") or package.get("name") or "",
            "created": plan.get("created"),
            "updated": plan.get("updated"),
            "limits": limits,
        },
        "limits": limits,
        "oauth_rate_limit_ceiling": 0,
        "oauth_rate_limit_exempt": False,
        "oauth_qps_limit_ceiling": 0,
        "oauth_qps_limit_exempt": False,
        "oauth_user_limits": [],
        "qps_limit_ceiling": key.get("qpsLimitCeiling"),
        "qps_limit_exempt": bool(key.get("qpsLimitExempt", False)),
        "rate_limit_ceiling": key.get("rateLimitCeiling"),
        "rate_limit_exempt": bool(key.get("rateLimitExempt", False)),
        "status": key.get("status") or "active",
        "group_id": None,
        "apikey": key.get("apikey"),
        "secret": key.get("secret"),
        "service_key": plan.get("id"),
        "object_type": "key",
        "username": member.get("username") or "",
        "protected_methods": False,
        "required_referer": "",
        "created": key.get("created"),
        "updated": key.get("updated"),
    }


def apply_changes(obj: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a stored (camelCase) object with snake_case ``changes`` applied."""
    out = dict(obj)
    for name, value in changes.items():
        out[snake_to_camel(name)] = value
    return out


def redact(value: Any) -> Any:
    """A copy with every secret field replaced by ``(sensitive)``, for logs."""
    if isinstance(value, dict):
        return {k: SENSITIVE if k in _SECRET_FIELDS and v else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value
