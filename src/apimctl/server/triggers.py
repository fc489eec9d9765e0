"""Payloads of event triggers for member, application and key writes.

The catalog names the ``event_payload``, ``event_nested`` and ``event_cascade`` hooks of
members, applications and package keys here; the engine's event path
(:mod:`apimctl.server.eventful`) asks through them, and through :func:`event_preview` and
:func:`event_after`, for the snake_case object a pre event shows (the object as it would be
saved) and a post event shows (as saved), and applies the changes a ``proceed_with_changes``
reply asks for. The wire format lives in :mod:`apimctl.server.events`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from apimctl.server import events
from apimctl.server.context import Env
from apimctl.server.errors import NotFound
from apimctl.server.fields import Resource
from apimctl.server.keys import create_key
from apimctl.server.tree import Step
from apimctl.server.validation import WriteCtx, build, merge

# --- event_payload hooks: the objects of the specification's payloads, with their owners ---


def member_object(env: Env, member: dict[str, Any]) -> dict[str, Any]:
    return events.member_payload(member)


def application_object(env: Env, app: dict[str, Any]) -> dict[str, Any]:
    return events.application_payload(app, env.doc("member", app.get("_memberId")) or {})


def key_object(env: Env, key: dict[str, Any]) -> dict[str, Any]:
    app = env.doc("application", key.get("_applicationId")) or {}
    member = env.doc("member", app.get("_memberId")) or {}
    package = env.doc("package", key.get("_packageId")) or {}
    plan = env.plan_of(key.get("_packageId"), key.get("_planId")) or {}
    return events.key_payload(key, app, member, package, plan)


def payload_of(env: Env, res: Resource, obj: dict[str, Any]) -> dict[str, Any]:
    """The snake_case object of ``obj`` (a resource with event triggers)."""
    assert res.rules.event_payload is not None, res.name
    return res.rules.event_payload(env, obj)


# --- pre and post payloads of the object addressed ------------------------------------------


def event_preview(env: Env, steps: list[Step], di: int, op: str, body: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The payload of a pre event: the object as it would be saved (None for deletes)."""
    node = steps[di].node
    res = env.resource(node.resource)
    if op == "create":
        parent = env.doc(steps[di - 1].node.kind or "", steps[di - 1].id) if di > 0 else None
        return payload_of(env, res, _preview_create(env, res, node.link, parent, body)), None
    existing = env.doc(node.kind or "", steps[di].id)
    if existing is None:
        raise NotFound(f"no {node.resource} with id {steps[di].id!r}")
    if op == "delete":
        return None, existing["id"]
    obj = copy.deepcopy(existing)
    if res.rules.before_merge is not None:  # the payload shows, e.g., the plan a key moves to
        res.rules.before_merge(obj, body, env, WriteCtx(env.user, env.dialect))
    merge(res, obj, copy.deepcopy(body), "", WriteCtx(env.user, env.dialect))
    return payload_of(env, res, obj), existing["id"]


def _preview_create(env: Env, res: Resource, link: str | None, parent: dict[str, Any] | None,
                    body: Any) -> dict[str, Any]:
    scratch = WriteCtx(env.user, env.dialect)
    obj = build(res, copy.deepcopy(body), "", scratch)
    obj.pop("id", None)
    if link and parent is not None:
        obj[link] = parent["id"]
    if res.rules.prepare is not None and isinstance(body, dict):
        res.rules.prepare(obj, copy.deepcopy(body), env, scratch, parent, True)
        _keep_generated(body, obj)
    return obj


def _keep_generated(sent: Any, key: dict[str, Any]) -> None:
    """Save the apikey and secret the pre event was shown, not newly generated ones."""
    if isinstance(sent, dict):
        for name in ("apikey", "secret"):
            if not sent.get(name) and key.get(name):
                sent[name] = key[name]


def event_after(env: Env, res: Resource, op: str, stored: dict[str, Any] | None,
                obj_id: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The payload of a post event: the object as saved (None for deletes)."""
    if op == "delete" or stored is None:
        return None, obj_id
    return payload_of(env, res, stored), stored.get("id")


def apply_event_changes(body: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """The request body with the changes of a ``proceed_with_changes`` reply applied."""
    return events.apply_changes(body, changes)


# --- event_nested hooks: objects created inside their owner's body ---------------------------


@dataclass
class NestedCreate:
    """An application or key created inside the body of its owner's create."""

    kind: str  # the event object: application | key
    path: str  # where in the request body, as the engine records it
    holder: list[Any]  # the body list holding it (replaced in place by event changes)
    index: int
    payload: dict[str, Any]


def member_nested(env: Env, steps: list[Step], di: int, body: Any) -> list[NestedCreate]:
    """Pre-create payloads of ``applications[i]`` and ``applications[i].packageKeys[j]``."""
    if not isinstance(body, dict):
        return []
    scratch = WriteCtx(env.user, env.dialect)
    member = build(env.resource("Member"), copy.deepcopy(body), "", scratch)
    out: list[NestedCreate] = []
    for i, app_body in _dicts(body.get("applications")):
        app = _preview_app(env, app_body, member, scratch)
        out.append(NestedCreate("application", f"applications[{i}]", body["applications"], i,
                                events.application_payload(app, member)))
        out += _key_previews(env, app_body, app, member, f"applications[{i}].", scratch)
    return out


def application_nested(env: Env, steps: list[Step], di: int, body: Any) -> list[NestedCreate]:
    """Pre-create payloads of ``packageKeys[j]``."""
    if not isinstance(body, dict):
        return []
    scratch = WriteCtx(env.user, env.dialect)
    owner = (env.doc("member", steps[di - 1].id) if di > 0 else None) or {}
    app = _preview_app(env, body, owner, scratch)
    return _key_previews(env, body, app, owner, "", scratch)


def _dicts(value: Any) -> list[tuple[int, dict[str, Any]]]:
    return [(i, v) for i, v in enumerate(value) if isinstance(v, dict)] if isinstance(value, list) else []


def _preview_app(env: Env, body: dict[str, Any], member: dict[str, Any], scratch: WriteCtx) -> dict[str, Any]:
    app = build(env.resource("Application"), copy.deepcopy(body), "", scratch)
    app.pop("id", None)
    app["_memberId"] = member.get("id")
    return app


def _key_previews(env: Env, app_body: dict[str, Any], app: dict[str, Any], member: dict[str, Any],
                  at: str, scratch: WriteCtx) -> list[NestedCreate]:
    out = []
    for j, key_body in _dicts(app_body.get("packageKeys")):
        key = build(env.resource("PackageKey"), copy.deepcopy(key_body), "", scratch)
        key.pop("id", None)
        create_key(key, copy.deepcopy(key_body), env, scratch, None)
        _keep_generated(key_body, key)
        package = env.doc("package", key.get("_packageId")) or {}
        plan = env.plan_of(key.get("_packageId"), key.get("_planId")) or {}
        out.append(NestedCreate("key", f"{at}packageKeys[{j}]", app_body["packageKeys"], j,
                                events.key_payload(key, app, member, package, plan)))
    return out


# --- event_cascade hooks: what a delete takes along, owners first ----------------------------


def member_cascade(env: Env, member_id: str | None) -> list[tuple[str, str]]:
    apps = [a["id"] for a in env.docs("application") if a.get("_memberId") == member_id]
    return [("application", a) for a in apps] + _keys_of(env, apps)


def application_cascade(env: Env, app_id: str | None) -> list[tuple[str, str]]:
    return _keys_of(env, [app_id] if app_id else [])


def _keys_of(env: Env, apps: list[str]) -> list[tuple[str, str]]:
    owners = set(apps)
    return [("key", k["id"]) for k in env.docs("key") if k.get("_applicationId") in owners]
