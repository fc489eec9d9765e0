"""Scheduled maintenance events and the endpoints they list.

The event documents hold the links (``{id, name, serviceId, stringsToTrimFromApiKey}``);
an endpoint's ``scheduledMaintenanceEvent`` and an event's endpoint objects are views
computed from them. The catalog names :func:`finalize_event` as the event's ``finalize``
and :func:`set_endpoint_event` as the Endpoint's writer of ``scheduledMaintenanceEvent``;
the engine's nested writes call :func:`write_endpoint_event` for
``/services/{id}/endpoints/{id}/scheduledMaintenanceEvent`` and the reads :func:`endpoint_event`.
"""

from __future__ import annotations

from typing import Any

from apimctl.server.context import Env, find_endpoint
from apimctl.server.errors import Invalid, NotFound
from apimctl.server.validation import WriteCtx, build, merge


def finalize_event(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    start, end = doc.get("startDateTime"), doc.get("endDateTime")
    if isinstance(start, str) and isinstance(end, str) and start >= end:
        ctx.problem("endDateTime", "must be after startDateTime")
    kept: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, ref in enumerate(doc.get("endpoints", [])):
        found = find_endpoint(env, ref.get("id"))
        if found is None:
            ctx.problem(f"endpoints[{i}].id", f"no endpoint with id {ref.get('id')!r}")
            continue
        service, ep = found
        if ep["id"] in seen:
            continue
        seen.add(ep["id"])
        trim = ref.get("stringsToTrimFromApiKey") or ""
        ref.clear()
        ref.update({"id": ep["id"], "name": ep.get("name", ""), "serviceId": service["id"],
                    "stringsToTrimFromApiKey": trim})
        kept.append(ref)
    doc["endpoints"][:] = kept
    if not created:
        doc["updated"] = ctx.ts("ms")


def event_endpoint_view(env: Env, ref: dict[str, Any]) -> dict[str, Any]:
    """An endpoint of a maintenance event as read: the live endpoint plus the link's fields."""
    found = find_endpoint(env, ref.get("id"))
    live = found[1] if found else {}
    return {**live, **ref}


def endpoint_event(env: Env, endpoint: Any) -> dict[str, Any] | None:
    """The event listing this endpoint, if any (an endpoint's ``scheduledMaintenanceEvent``)."""
    if not isinstance(endpoint, dict):
        return None

    def index() -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for event in env.docs("event"):
            for ref in event.get("endpoints", []):
                out.setdefault(ref.get("id"), event)
        return out

    return env.memo("event-by-endpoint", index).get(endpoint.get("id"))  # type: ignore[no-any-return]


def write_endpoint_event(env: Env, ctx: WriteCtx, service: dict[str, Any], endpoint: dict[str, Any],
                         op: str, body: Any) -> dict[str, Any] | None:
    """POST assigns (``{id}``) or creates an event for the endpoint; PUT updates its event;
    DELETE takes the endpoint out of its event. The event documents hold the links."""
    current = endpoint_event(env, endpoint)
    if op == "delete":
        if current is None:
            raise NotFound("this endpoint has no scheduled maintenance event")
        _take_out(env, current, endpoint)
        env.forget("event")
        return None
    target = _target_event(env, ctx, current, op, body)
    if ctx.problems:
        return target
    if current is not None and current["id"] != target["id"]:
        _take_out(env, current, endpoint)
    if not any(r.get("id") == endpoint["id"] for r in target.get("endpoints", [])):
        ref = {"id": endpoint["id"], "name": endpoint.get("name", ""), "serviceId": service["id"]}
        target.setdefault("endpoints", []).append(ref)
    finalize_event(target, ctx, env, created=False)
    if not ctx.problems:
        env.txn.put(env.area, "event", target["id"], target)
    env.forget("event")
    return target


def _target_event(env: Env, ctx: WriteCtx, current: dict[str, Any] | None, op: str, body: Any) -> dict[str, Any]:
    """The event named by ``{id}`` (updated by PUT), the current one (PUT), or a new one."""
    res = env.resource("ScheduledMaintenanceEvent")
    target_id = body.get("id") if isinstance(body, dict) else None
    if target_id is not None:
        target = env.doc("event", target_id)
        if target is None:
            raise Invalid.at("id", f"no scheduled maintenance event with id {target_id!r}")
        if op == "put":
            merge(res, target, body, "", ctx)
        return target
    if op == "put" and current is not None:
        return merge(res, current, body, "", ctx)
    target = build(res, body, "", ctx)
    target["endpoints"] = []
    return target


def _take_out(env: Env, event: dict[str, Any], endpoint: dict[str, Any]) -> None:
    event["endpoints"] = [r for r in event.get("endpoints", []) if r.get("id") != endpoint["id"]]
    env.txn.put(env.area, "event", event["id"], event)


def set_endpoint_event(service: dict[str, Any], endpoint: dict[str, Any], value: Any, path: str,
                        ctx: WriteCtx, env: Env) -> None:
    env.prime("service", service)  # the endpoint may be new, its service not yet stored
    if value is None:
        if endpoint_event(env, endpoint) is not None:
            write_endpoint_event(env, ctx, service, endpoint, "delete", None)
    elif isinstance(value, dict):
        sub = WriteCtx(env.user, env.dialect)
        write_endpoint_event(env, sub, service, endpoint, "post", value)
        for p in sub.problems:
            ctx.problem(f"{path}.{p['property']}" if p["property"] else path, p["message"])
    else:
        ctx.problem(path, "must be an object with an id, or null")

