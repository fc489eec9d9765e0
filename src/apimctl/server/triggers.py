"""Payloads of event triggers for member, application and key writes.

:mod:`apimctl.server.engine` asks here for the snake_case object a pre event shows
(the object as it would be saved) and a post event shows (as saved), and applies the
changes a ``proceed_with_changes`` reply asks for. The wire format lives in
:mod:`apimctl.server.events`.
"""

from __future__ import annotations

import copy
from typing import Any

from apimctl.errors import NotFound
from apimctl.server import catalog as c
from apimctl.server import events
from apimctl.server.context import Env
from apimctl.server.keys import create_key
from apimctl.server.tree import Step
from apimctl.server.validation import WriteCtx, build, merge


def payload_of(env: Env, kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The snake_case object of the specification's payloads, with its owners."""
    if kind == "member":
        return events.member_payload(obj)
    if kind == "application":
        return events.application_payload(obj, env.doc("member", obj.get("_memberId")) or {})
    app = env.doc("application", obj.get("_applicationId")) or {}
    member = env.doc("member", app.get("_memberId")) or {}
    package = env.doc("package", obj.get("_packageId")) or {}
    plan = env.plan_of(obj.get("_packageId"), obj.get("_planId")) or {}
    return events.key_payload(obj, app, member, package, plan)


def event_preview(env: Env, steps: list[Step], di: int, op: str, body: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The payload of a pre event: the object as it would be saved (None for deletes)."""
    node = steps[di].node
    kind = node.kind or ""
    res = c.resource(node.resource)
    parent = env.doc(steps[di - 1].node.kind or "", steps[di - 1].id) if di > 0 else None
    if op == "create":
        scratch = WriteCtx(env.user)
        body = copy.deepcopy(body)
        obj = build(res, body, "", scratch)
        obj.pop("id", None)
        if node.link and parent is not None:
            obj[node.link] = parent["id"]
        if kind == "key" and isinstance(body, dict):
            create_key(obj, body, env, scratch, parent)
        return payload_of(env, kind, obj), None
    existing = env.doc(kind, steps[di].id)
    if existing is None:
        raise NotFound(f"no {node.resource} with id {steps[di].id!r}", 404)
    if op == "delete":
        return None, existing["id"]
    obj = copy.deepcopy(existing)
    merge(res, obj, copy.deepcopy(body), "", WriteCtx(env.user))
    return payload_of(env, kind, obj), existing["id"]


def event_after(env: Env, steps: list[Step], di: int, op: str, resp: Any, payload: dict[str, Any] | None,
                obj_id: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The payload of a post event: the object as saved (None for deletes)."""
    stored = getattr(resp, "stored", None)
    if op == "delete" or stored is None:
        return None, obj_id
    return payload_of(env, steps[di].node.kind or "", stored), stored.get("id")


def apply_event_changes(body: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """The request body with the changes of a ``proceed_with_changes`` reply applied."""
    return events.apply_changes(body, changes)

