"""Step 5, entitlement: the key's plan must entitle the service and the endpoint, and the
method the endpoint detects when the plan's endpoint lists methods (SUPPLEMENT §11.5).

Method detection reads ``apiMethodDetectionKey`` from each of
``apiMethodDetectionLocations``: a query parameter, a header, a form or JSON body field, or
for ``request-path`` the path segments at the key's 1-based positions joined by ``/`` (with
no positions: the path after the endpoint's alias). A method the plan does not list passes
only when the plan's endpoint has ``undefinedMethodsAllowed`` and the endpoint does not define
the method. Keyless calls (``noapikey`` without an
area key of that value) and OAuth calls have no plan to check and pass.
"""

from __future__ import annotations

from typing import Any

from apimctl.server.traffic.key import KeyFound, _body_fields, positions
from apimctl.server.traffic.model import Call, Refused, Trace
from apimctl.server.traffic.request import segment_text


def detect_method(call: Call, endpoint: dict[str, Any], rest: str) -> str | None:
    name = str(endpoint.get("apiMethodDetectionKey") or "")
    for location in endpoint.get("apiMethodDetectionLocations") or []:
        value: Any = None
        if location == "request-parameters":
            value = call.params.get(name)
        elif location == "request-header":
            value = call.header(name) if name else None
        elif location == "request-body":
            value = _body_fields(call)[1].get(name)
        elif location == "request-path":
            spots = positions(name)
            if spots:
                segments = call.path.strip("/").split("/")
                value = "/".join(segment_text(segments[p - 1]) for p in spots if p <= len(segments)) or None
            else:
                value = "/".join(segment_text(s) for s in rest.strip("/").split("/")) or None
        if isinstance(value, str) and value:
            return value
    return None


def check_entitlement(call: Call, found: KeyFound, service: dict[str, Any], endpoint: dict[str, Any],
                      rest: str, trace: Trace) -> None:
    plan = found.plan
    if found.key is None:
        trace.add("entitlement", "no plan to check (keyless or OAuth call)")
        return
    if plan is None:
        raise Refused("entitlement", "ERR_403_NOT_AUTHORIZED", "the key has no plan")
    entitled = next((s for s in plan.get("services") or [] if s.get("id") == service.get("id")), None)
    if entitled is None:
        raise Refused("entitlement", "ERR_403_NOT_AUTHORIZED",
                      f"plan {plan.get('name')!r} does not entitle service {service.get('name')!r}")
    ep = next((e for e in entitled.get("endpoints") or [] if e.get("id") == endpoint.get("id")), None)
    if ep is None:
        raise Refused("entitlement", "ERR_403_NOT_AUTHORIZED",
                      f"plan {plan.get('name')!r} does not entitle endpoint {endpoint.get('name')!r}")
    allowed = [str(m.get("name")) for m in ep.get("methods") or [] if isinstance(m, dict)]
    if not allowed:
        trace.add("entitlement", "ok")
        return
    method = detect_method(call, endpoint, rest)
    defined = {str(m.get("name")) for m in endpoint.get("methods") or [] if isinstance(m, dict)}
    if method in allowed:
        trace.add("entitlement", f"ok (method {method})")
    elif ep.get("undefinedMethodsAllowed") is True and method not in defined:
        trace.add("entitlement", f"ok (method {method!r} is not defined on the endpoint; undefined methods allowed)")
    else:
        raise Refused("entitlement", "ERR_403_NOT_AUTHORIZED",
                      f"method {method!r} is not among the plan's methods ({', '.join(allowed)})")
