"""Payloads of event triggers for member, application and key writes.

:mod:`apimctl.server.engine` asks here for the snake_case object a pre event shows
(the object as it would be saved) and a post event shows (as saved), and applies the
changes a ``proceed_with_changes`` reply asks for. The wire format lives in
:mod:`apimctl.server.events`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from apimctl.errors import NotFound
from apimctl.server import catalog as c
from apimctl.server import events
from apimctl.server.context import Env
from apimctl.server.keys import create_key, move_key
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
        sent = body
        body = copy.deepcopy(body)
        obj = build(res, body, "", scratch)
        obj.pop("id", None)
        if node.link and parent is not None:
            obj[node.link] = parent["id"]
        if kind == "key" and isinstance(body, dict):
            create_key(obj, body, env, scratch, parent)
            _keep_generated(sent, obj)
        return payload_of(env, kind, obj), None
    existing = env.doc(kind, steps[di].id)
    if existing is None:
        raise NotFound(f"no {node.resource} with id {steps[di].id!r}", 404)
    if op == "delete":
        return None, existing["id"]
    obj = copy.deepcopy(existing)
    if kind == "key" and isinstance(body, dict):
        move_key(obj, body, env, WriteCtx(env.user))  # the payload shows the plan it moves to
    merge(res, obj, copy.deepcopy(body), "", WriteCtx(env.user))
    return payload_of(env, kind, obj), existing["id"]


def _keep_generated(sent: Any, key: dict[str, Any]) -> None:
    """Save the apikey and secret the pre event was shown, not newly generated ones."""
    if isinstance(sent, dict):
        for name in ("apikey", "secret"):
            if not sent.get(name) and key.get(name):
                sent[name] = key[name]


@dataclass
class NestedCreate:
    """An application or key created inside the body of its owner's create."""

    kind: str  # application | key
    path: str  # where in the request body, as the engine records it
    holder: list[Any]  # the body list holding it (replaced in place by event changes)
    index: int
    payload: dict[str, Any]


def nested_previews(env: Env, steps: list[Step], di: int, body: Any) -> list[NestedCreate]:
    """Pre-create payloads of the applications and keys a member or application create
    carries in its body (``applications[i]``, ``applications[i].packageKeys[j]``)."""
    node = steps[di].node
    if not isinstance(body, dict) or node.kind not in ("member", "application"):
        return []
    scratch = WriteCtx(env.user)
    out: list[NestedCreate] = []
    if node.kind == "member":
        member = build(c.resource("Member"), copy.deepcopy(body), "", scratch)
        for i, app_body in _dicts(body.get("applications")):
            app = _preview_app(app_body, member, scratch)
            out.append(NestedCreate("application", f"applications[{i}]", body["applications"], i,
                                    events.application_payload(app, member)))
            out += _key_previews(env, app_body, app, member, f"applications[{i}].", scratch)
    else:
        owner = (env.doc("member", steps[di - 1].id) if di > 0 else None) or {}
        app = _preview_app(body, owner, scratch)
        out += _key_previews(env, body, app, owner, "", scratch)
    return out


def _dicts(value: Any) -> list[tuple[int, dict[str, Any]]]:
    return [(i, v) for i, v in enumerate(value) if isinstance(v, dict)] if isinstance(value, list) else []


def _preview_app(body: dict[str, Any], member: dict[str, Any], scratch: WriteCtx) -> dict[str, Any]:
    app = build(c.resource("Application"), copy.deepcopy(body), "", scratch)
    app.pop("id", None)
    app["_memberId"] = member.get("id")
    return app


def _key_previews(env: Env, app_body: dict[str, Any], app: dict[str, Any], member: dict[str, Any],
                  at: str, scratch: WriteCtx) -> list[NestedCreate]:
    out = []
    for j, key_body in _dicts(app_body.get("packageKeys")):
        key = build(c.resource("PackageKey"), copy.deepcopy(key_body), "", scratch)
        key.pop("id", None)
        create_key(key, copy.deepcopy(key_body), env, scratch, None)
        _keep_generated(key_body, key)
        package = env.doc("package", key.get("_packageId")) or {}
        plan = env.plan_of(key.get("_packageId"), key.get("_planId")) or {}
        out.append(NestedCreate("key", f"{at}packageKeys[{j}]", app_body["packageKeys"], j,
                                events.key_payload(key, app, member, package, plan)))
    return out


def cascaded_deletes(env: Env, kind: str, obj_id: str | None) -> list[tuple[str, str]]:
    """What deleting a member or application deletes with it: (kind, id) of its
    applications and their keys, owners first."""
    if kind == "member":
        apps = [a["id"] for a in env.docs("application") if a.get("_memberId") == obj_id]
    elif kind == "application":
        apps = [obj_id] if obj_id else []
    else:
        return []
    keys = [("key", k["id"]) for k in env.docs("key") if k.get("_applicationId") in set(apps)]
    return [("application", a) for a in apps if a != obj_id] + keys


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

