"""Step 7, CORS: pre-flights answered from the endpoint's ``cors`` block, and the headers of
an actual call from an allowed origin (SUPPLEMENT §11.7).

An origin is allowed when ``allDomainsEnabled``, when it equals one of ``domainsAllowed``
(scheme and host, compared without case and trailing slash), or with
``subDomainMatchingAllowed`` when its host is a sub-domain of an allowed one on the same
scheme. A pre-flight (``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``)
is answered before the key step, as browsers send no key on it: 200 with the allowed
origin, the endpoint's methods, ``headersAllowed``, ``maxAge`` and credentials
(``cookiesAllowed``); a pre-flight from an origin not allowed, for a method the endpoint
does not support or for a header not in ``headersAllowed`` is refused with
``ERR_403_NOT_AUTHORIZED`` and carries no CORS headers. An endpoint without a ``cors``
block (``null``) answers no CORS headers at all.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from apimctl.server.traffic.model import Answer, Call, Final, Refused, Trace
from apimctl.server.traffic.route import methods_of


def is_preflight(call: Call) -> bool:
    return (call.method.upper() == "OPTIONS" and call.header("origin") is not None
            and call.header("access-control-request-method") is not None)


def _norm(origin: str) -> tuple[str, str]:
    parts = urlsplit(origin.strip().rstrip("/").lower())
    return parts.scheme, parts.netloc


def origin_allowed(cors: dict[str, Any] | None, origin: str) -> bool:
    if not isinstance(cors, dict):
        return False
    if cors.get("allDomainsEnabled") is True:
        return True
    scheme, host = _norm(origin)
    for allowed in cors.get("domainsAllowed") or []:
        a_scheme, a_host = _norm(str(allowed))
        if (a_scheme, a_host) == (scheme, host):
            return True
        if cors.get("subDomainMatchingAllowed") is True and a_scheme == scheme and host.endswith("." + a_host):
            return True
    return False


def _allow_origin(cors: dict[str, Any], origin: str) -> list[tuple[str, str]]:
    wildcard = cors.get("allDomainsEnabled") is True and cors.get("cookiesAllowed") is not True
    headers = [("Access-Control-Allow-Origin", "*" if wildcard else origin)]
    if not wildcard:
        headers.append(("Vary", "Origin"))
    if cors.get("cookiesAllowed") is True:
        headers.append(("Access-Control-Allow-Credentials", "true"))
    return headers


def preflight(call: Call, endpoint: dict[str, Any], trace: Trace) -> None:
    """Answer a pre-flight (:class:`Final`) or refuse it (:class:`Refused`)."""
    cors = endpoint.get("cors")
    origin = str(call.header("origin"))
    method = str(call.header("access-control-request-method")).upper()
    if not origin_allowed(cors, origin) or not isinstance(cors, dict):
        raise Refused("cors", "ERR_403_NOT_AUTHORIZED", f"pre-flight from {origin}: origin not allowed")
    if method not in methods_of(endpoint):
        raise Refused("cors", "ERR_403_NOT_AUTHORIZED", f"pre-flight for {method}: method not supported")
    asked = [h.strip().lower() for h in (call.header("access-control-request-headers") or "").split(",") if h.strip()]
    allowed = {str(h).lower() for h in cors.get("headersAllowed") or []}
    refused = [h for h in asked if h not in allowed]
    if refused:
        raise Refused("cors", "ERR_403_NOT_AUTHORIZED", f"pre-flight asks for headers not allowed: {', '.join(refused)}")
    headers = _allow_origin(cors, origin)
    headers.append(("Access-Control-Allow-Methods", ", ".join(sorted(methods_of(endpoint)))))
    if cors.get("headersAllowed"):
        headers.append(("Access-Control-Allow-Headers", ", ".join(cors["headersAllowed"])))
    if isinstance(cors.get("maxAge"), int) and cors["maxAge"] > 0:
        headers.append(("Access-Control-Max-Age", str(cors["maxAge"])))
    trace.add("cors", f"pre-flight from {origin} for {method}: allowed")
    raise Final("cors", f"pre-flight from {origin} allowed", Answer(200, headers, b""))


def actual_headers(call: Call, endpoint: dict[str, Any], trace: Trace) -> list[tuple[str, str]]:
    """The CORS headers of an actual call (none without an allowed ``Origin``)."""
    origin = call.header("origin")
    if origin is None:
        return []
    cors = endpoint.get("cors")
    if not isinstance(cors, dict) or not origin_allowed(cors, origin):
        trace.add("cors", f"origin {origin} not allowed: no CORS headers")
        return []
    headers = _allow_origin(cors, origin)
    if cors.get("headersExposed"):
        headers.append(("Access-Control-Expose-Headers", ", ".join(cors["headersExposed"])))
    trace.add("cors", f"origin {origin} allowed")
    return headers
