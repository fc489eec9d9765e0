"""Rules at read time: the computed fields of the catalog, and where the write rules live.

:func:`hooks` answers, for one request, the functions behind the ``computed`` and ``view``
names of the field tables (an endpoint's maintenance event, a key's package, plan and
limits, a member's applications and keys ...), evaluated lazily with the request's caches;
the engine hands them to the :class:`~apimctl.server.query.Projector` and to list filters.

The write rules are the hooks each catalog entry names (:class:`~apimctl.server.fields.Rules`,
wired in :mod:`apimctl.server.catalog`), one small module per subject:
:mod:`~apimctl.server.shapes` (objects at any depth), :mod:`~apimctl.server.services`,
:mod:`~apimctl.server.packages`, :mod:`~apimctl.server.roles`, :mod:`~apimctl.server.domains`,
:mod:`~apimctl.server.members`, :mod:`~apimctl.server.keys`,
:mod:`~apimctl.server.maintenance` and :mod:`~apimctl.server.triggers` (event payloads).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apimctl.server.context import Env, ref_of
from apimctl.server.keys import key_limits
from apimctl.server.maintenance import endpoint_event, event_endpoint_view


def hooks(env: Env) -> dict[str, Callable[[dict[str, Any]], Any]]:
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
