"""Step 2, transport: an endpoint with ``inboundSslRequired`` or ``highSecurity`` refuses a
plain-HTTP call with ``ERR_403_SERVICE_REQUIRES_SSL`` (SUPPLEMENT §11.2). The call's scheme
is ``X-Forwarded-Proto`` when present, else the listener's."""

from __future__ import annotations

from typing import Any

from apimctl.server.traffic.model import Call, Refused, Trace


def scheme_of(call: Call) -> str:
    forwarded = call.header("x-forwarded-proto")
    return (forwarded.split(",")[0].strip().lower() if forwarded else call.scheme) or "http"


def check_transport(call: Call, endpoint: dict[str, Any], trace: Trace) -> None:
    scheme = scheme_of(call)
    requires = [f for f in ("inboundSslRequired", "highSecurity") if endpoint.get(f) is True]
    if requires and scheme != "https":
        raise Refused("transport", "ERR_403_SERVICE_REQUIRES_SSL",
                      f"{scheme} call, the endpoint requires https ({', '.join(requires)})")
    trace.add("transport", scheme + ("" if not requires else " (https required)"))
