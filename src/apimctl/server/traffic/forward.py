"""Steps 8 and 9, forward and return: the call to the back end and its answer (SUPPLEMENT
§11.8-9).

The call goes to the endpoint's first system domain (an address may carry a port, §10.10.2)
over ``outboundTransportProtocol`` (``use-inbound``: the call's own scheme), with
``outboundRequestTargetPath`` in place of the alias and
``outboundRequestTargetQueryParameters`` appended. The key is dropped where it was found
when ``dropApiKeyFromIncomingCall``, else replaced by ``systemDomainCredentialKey`` when
``useSystemDomainCredentials``; ``systemDomainAuthentication`` of type ``httpBasic`` sends
its user and password. ``headersToExcludeFromIncomingCall`` are removed and
``forwardedHeaders`` added (enum value ``svc-message-id`` -> header ``X-Svc-Message-ID``,
``mashery-host`` -> ``X-Mashery-Host``); ``hostPassthroughIncludedInBackendCallHeader``
sends the original host in the dialect's host header; the caller's own headers of those
names are dropped, so the back end reads only the emulator's. Redirects are followed up to
``numberOfHttpRedirectsToFollow`` (cookies carried only with
``cookiesDuringHttpRedirectsEnabled``), only to the endpoint's system domains (see
:func:`_follows`). Gzip: ``forceGzipOfBackendCall`` asks the back end
for gzip; with ``gzipPassthroughSupportEnabled`` the caller's ``Accept-Encoding`` goes to
the back end and a gzip answer comes back as it is, otherwise the answer is decoded. No
connection within ``connectionTimeoutForSystemDomainRequest`` seconds (or a refused one, or
one the transport may not make, :class:`Unreachable`, with its reason, or
none free among the back end's connections): ``ERR_502_BAD_GATEWAY``; no complete answer
(every redirect and every byte of the body) within ``connectionTimeoutForSystemDomainResponse``
seconds of the call's start: ``ERR_504_GATEWAY_TIMEOUT`` (a deadline, not a bound per read: a
back end dripping a byte a second does not hold the caller longer). An answer body longer
than the emulator's cap (:data:`MAX_ANSWER_BYTES` unless the server sets another) is
``ERR_502_BAD_GATEWAY`` as well. The answer gets ``returnedHeaders``; the back end's
``Date`` and ``Server`` give way to the listener's own, so the caller reads one of each.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx

from apimctl.server.traffic.key import KeyFound, Spot
from apimctl.server.traffic.model import Answer, Call, Refused, Trace
from apimctl.server.traffic.route import Route
from apimctl.server.traffic.transport import scheme_of

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
                        "trailer", "transfer-encoding", "upgrade", "host", "content-length"})
# the listener writes its own (uvicorn's Date and Server): the back end's would come twice
LISTENER_OWN = frozenset({"date", "server"})
# what the emulator forwards, in either dialect: a caller's header of such a name is not passed on
FORWARDED_NAMES = frozenset(f"x-{prefix}-{name}" for prefix in ("svc", "mashery")
                            for name in ("host", "message-id", "service-id"))
RESPONDER = "apimctl-traffic-emulator"
MAX_ANSWER_BYTES = 64 * 1024 * 1024  # longest answer body forwarded (ERR_502_BAD_GATEWAY beyond)
# what an httpx client adds to every request unless the request sends its own (read once)
CLIENT_HEADERS: list[tuple[str, str]] = [
    (name.decode("latin-1"), value.decode("latin-1"))
    for name, value in httpx.AsyncClient(transport=httpx.AsyncBaseTransport(), trust_env=False).headers.raw]


class Unreachable(httpx.ConnectError):
    """A back end the transport may not call (``apimctl test`` calls only the back ends a test
    file declares): no connection, and the reason, which the decision shows."""


@lru_cache(maxsize=256)
def header_name(value: str) -> str:
    """The header of a forwarded/returned header enum value: ``svc-message-id`` ->
    ``X-Svc-Message-ID``."""
    return "X-" + "-".join("ID" if p == "id" else p.capitalize() for p in value.split("-"))


def _swap(spot: Spot | None, endpoint: dict[str, Any]) -> tuple[str | None, str]:
    """What to do with the key: ("drop", "") or ("swap", new value) or (None, "")."""
    if spot is None:
        return None, ""
    if endpoint.get("dropApiKeyFromIncomingCall") is True:
        return "drop", ""
    if endpoint.get("useSystemDomainCredentials") is True and endpoint.get("systemDomainCredentialKey"):
        return "swap", str(endpoint["systemDomainCredentialKey"])
    return None, ""


def _path(call: Call, route: Route, spot: Spot | None, action: str | None, value: str) -> str:
    segments = call.path.split("/")  # segments[0] is "" (the path starts with "/")
    if spot is not None and spot.place == "path" and action:
        position = int(spot.name)
        if action == "drop":
            del segments[position]
        else:
            segments[position] = value
    path = "/".join(segments)
    alias = "/" + route.alias.strip("/") if route.alias.strip("/") else ""
    rest = path[len(alias):] if path.startswith(alias) else route.rest
    target = str(route.endpoint.get("outboundRequestTargetPath") or "") or alias
    full = ("/" + target.strip("/") if target.strip("/") else "") + rest
    return full or "/"


def _query(call: Call, endpoint: dict[str, Any], spot: Spot | None, action: str | None, value: str) -> str:
    pairs: list[tuple[str, str]] = []
    for name, val in call.query:
        if spot is not None and spot.place == "query" and name == spot.name and action:
            if action == "drop":
                continue
            val = value
        pairs.append((name, val))
    extra = str(endpoint.get("outboundRequestTargetQueryParameters") or "").lstrip("?&")
    pairs += parse_qsl(extra, keep_blank_values=True)
    return urlencode(pairs)


def _body(call: Call, spot: Spot | None, action: str | None, value: str) -> bytes:
    if spot is None or spot.place not in ("form", "json") or not action:
        return call.body
    if spot.place == "form":
        pairs = parse_qsl(call.body.decode("latin-1"), keep_blank_values=True)
        pairs = [(k, value if k == spot.name else v) for k, v in pairs if not (k == spot.name and action == "drop")]
        return urlencode(pairs).encode()
    doc = json.loads(call.body)
    if action == "drop":
        doc.pop(spot.name, None)
    else:
        doc[spot.name] = value
    return json.dumps(doc).encode()


def _headers(call: Call, route: Route, found: KeyFound, action: str | None, value: str,
             message_id: str, host_header: str) -> list[tuple[str, str]]:
    endpoint = route.endpoint
    excluded = {str(h).strip().lower() for h in endpoint.get("headersToExcludeFromIncomingCall") or [] if h}
    spot = found.spot
    out: list[tuple[str, str]] = []
    for name, val in call.headers:
        low = name.lower()
        if low in HOP_BY_HOP or low in excluded or low in FORWARDED_NAMES:
            continue
        if low == "accept-encoding" and endpoint.get("gzipPassthroughSupportEnabled") is not True:
            continue
        if spot is not None and spot.place == "header" and low == spot.name.lower() and action:
            if action == "drop":
                continue
            val = value
        out.append((name, val))
    if endpoint.get("forceGzipOfBackendCall") is True and not any(n.lower() == "accept-encoding" for n, _ in out):
        out.append(("Accept-Encoding", "gzip"))
    elif not any(n.lower() == "accept-encoding" for n, _ in out):
        out.append(("Accept-Encoding", "identity"))
    values = {"host": call.host, "message-id": message_id, "service-id": str(route.service.get("id"))}
    for item in endpoint.get("forwardedHeaders") or []:
        suffix = str(item).split("-", 1)[1] if "-" in str(item) else str(item)
        if suffix in values:
            out.append((header_name(str(item)), values[suffix]))
    if endpoint.get("hostPassthroughIncludedInBackendCallHeader") is True and not any(
            n.lower() == host_header.lower() for n, _ in out):  # once, when forwardedHeaders has it too
        out.append((host_header, call.host))
    auth = endpoint.get("systemDomainAuthentication")
    if isinstance(auth, dict) and auth.get("type") == "httpBasic" and auth.get("username"):
        token = base64.b64encode(f"{auth['username']}:{auth.get('password') or ''}".encode()).decode()
        out = [(n, v) for n, v in out if n.lower() != "authorization"] + [("Authorization", f"Basic {token}")]
    return out


def backend_request(call: Call, route: Route, found: KeyFound, message_id: str,
                    host_header: str) -> tuple[str, str, list[tuple[str, str]], bytes]:
    """(method, URL, headers, body) of the call to the back end."""
    endpoint = route.endpoint
    domains = [d.get("address") for d in endpoint.get("systemDomains") or [] if isinstance(d, dict)]
    if not domains or not domains[0]:
        raise Refused("forward", "ERR_502_BAD_GATEWAY", "the endpoint has no system domain")
    protocol = str(endpoint.get("outboundTransportProtocol") or "https")
    scheme = scheme_of(call) if protocol == "use-inbound" else protocol
    action, value = _swap(found.spot, endpoint)
    path = _path(call, route, found.spot, action, value)
    query = _query(call, endpoint, found.spot, action, value)
    url = f"{scheme}://{domains[0]}{path}" + (f"?{query}" if query else "")
    headers = _headers(call, route, found, action, value, message_id, host_header)
    return call.method, url, headers, _body(call, found.spot, action, value)


def masked(url: str, found: KeyFound, endpoint: dict[str, Any]) -> str:
    """``url`` as decisions show it: the caller's key and the system-domain key masked."""
    for secret, label in ((found.value, "(key)"), (str(endpoint.get("systemDomainCredentialKey") or ""),
                                                   "(system-domain key)")):
        if len(secret) >= 4:
            url = url.replace(secret, label)
    return url


def _timeouts(endpoint: dict[str, Any]) -> dict[str, float | None]:
    """The request's ``timeout`` extension (as ``httpx.Timeout.as_dict`` gives it)."""
    connect = float(endpoint.get("connectionTimeoutForSystemDomainRequest") or 2)
    read = float(endpoint.get("connectionTimeoutForSystemDomainResponse") or 5)
    return {"connect": connect, "read": read, "write": read, "pool": connect}


class TooLarge(Exception):
    """An answer body longer than the cap."""


async def _send(transport: httpx.AsyncBaseTransport, request: httpx.Request,
                passthrough: bool, cap: int) -> tuple[httpx.Response, bytes]:
    response = await transport.handle_async_request(request)
    response.request = request
    try:
        raw = passthrough and response.headers.get("content-encoding", "").lower() == "gzip"
        parts: list[bytes] = []
        size = 0
        # the bytes as they came (gzip passed through), else decoded: the cap counts what is kept
        stream = response.stream
        parts_of = stream if raw and isinstance(stream, httpx.AsyncByteStream) else response.aiter_bytes()
        async for part in parts_of:
            size += len(part)
            if size > cap:
                raise TooLarge(f"longer than {cap} bytes")
            parts.append(part)
        body = b"".join(parts)
    finally:
        await response.aclose()
    return response, body


def _request(method: str, url: str | httpx.URL, headers: list[tuple[str, str]], body: bytes | None,
             timeout: dict[str, float | None]) -> httpx.Request:
    """The request as an ``httpx.AsyncClient`` builds it: its default headers (``Accept``,
    ``User-Agent``, ...) first where the call does not send them, then the call's."""
    names = {n.lower() for n, _ in headers}
    merged = [(n, v) for n, v in CLIENT_HEADERS if n.lower() not in names] + headers
    return httpx.Request(method, url, headers=merged, content=body, extensions={"timeout": timeout})


def _origin(url: httpx.URL) -> tuple[str, str, int]:
    scheme = url.scheme.lower()
    return scheme, url.host.lower(), url.port or (443 if scheme == "https" else 80)


def _follows(target: httpx.URL, endpoint: dict[str, Any]) -> bool:
    """Whether a redirect to ``target`` is followed: only to one of the endpoint's system
    domains (its host, and its port: the scheme's default where the address names none),
    over http or https.

    The platform's documentation says only that the traffic manager follows up to
    ``numberOfHttpRedirectsToFollow`` redirects "from the host server" before it passes one
    to the caller; nothing says it follows one elsewhere. A redirect elsewhere would carry
    the endpoint's ``systemDomainAuthentication`` and the body of a 307 to an address the
    area never declared and the domain check never saw, so such a redirect is passed to the
    caller as it came (as with no redirects to follow), and the call log says why."""
    if target.scheme.lower() not in ("http", "https"):
        return False
    scheme, host, port = _origin(target)
    default = 443 if scheme == "https" else 80
    for domain in endpoint.get("systemDomains") or []:
        address = str(domain.get("address") or "").strip().lower() if isinstance(domain, dict) else ""
        name, _, number = address.rpartition(":") if ":" in address else (address, "", "")
        if number and not number.isdigit():
            continue
        if name == host and (int(number) if number else default) == port:
            return True
    return False


def _next_hop(request: httpx.Request, response: httpx.Response, headers: list[tuple[str, str]], body: bytes,
              endpoint: dict[str, Any], timeout: dict[str, float | None]) -> httpx.Request:
    """The request that follows a redirect: the same method and body on 307/308, else a GET;
    the back end's cookies only with ``cookiesDuringHttpRedirectsEnabled``. On another
    origin (another system domain, or another scheme or port) ``Authorization`` is not sent,
    as browsers and HTTP clients do."""
    target = request.url.join(response.headers["location"])
    follow = [(n, v) for n, v in headers if n.lower() != "cookie"]
    if _origin(target) != _origin(request.url):
        follow = [(n, v) for n, v in follow if n.lower() != "authorization"]
    if endpoint.get("cookiesDuringHttpRedirectsEnabled") is True:
        cookies = "; ".join(c.split(";", 1)[0] for c in response.headers.get_list("set-cookie"))
        if cookies:
            follow.append(("Cookie", cookies))
    same = response.status_code in (307, 308)
    return _request(request.method if same else "GET", target, follow, body if same else None, timeout)


async def _exchange(transport: httpx.AsyncBaseTransport, method: str, url: str, headers: list[tuple[str, str]],
                    body: bytes, endpoint: dict[str, Any], shown: str,
                    cap: int) -> tuple[httpx.Response, bytes, int, str]:
    """The back end's answer after the redirects the endpoint follows, its body, the hops and
    a redirect not followed (or ""); a refused or slow back end is :class:`Refused` (502, 504)."""
    redirects = endpoint.get("numberOfHttpRedirectsToFollow") or 0
    passthrough = endpoint.get("gzipPassthroughSupportEnabled") is True
    timeout = _timeouts(endpoint)
    deadline = timeout["read"]
    hops = 0
    unfollowed = ""
    try:
        async with asyncio.timeout(deadline):  # the whole exchange: every hop, every byte
            request = _request(method, url, headers, body, timeout)
            response, content = await _send(transport, request, passthrough, cap)
            while response.is_redirect and response.headers.get("location") and hops < redirects:
                target = request.url.join(response.headers["location"])
                if not _follows(target, endpoint):
                    unfollowed = f"{target.scheme}://{target.netloc.decode('ascii', 'replace')}"
                    break
                hops += 1
                request = _next_hop(request, response, headers, body, endpoint, timeout)
                response, content = await _send(transport, request, passthrough, cap)
    except Unreachable as exc:
        raise Refused("forward", "ERR_502_BAD_GATEWAY", str(exc)) from None
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
        raise Refused("forward", "ERR_502_BAD_GATEWAY", f"no connection to {shown}: {type(exc).__name__}") from None
    except (httpx.TimeoutException, TimeoutError):
        raise Refused("forward", "ERR_504_GATEWAY_TIMEOUT",
                      f"no answer from {shown} within {deadline:g} s (the whole of it, redirects included)") from None
    except TooLarge as exc:
        raise Refused("forward", "ERR_502_BAD_GATEWAY", f"the answer of {shown} is {exc} "
                      "(the emulator's cap on forwarded answers)") from None
    except httpx.HTTPError as exc:
        raise Refused("forward", "ERR_502_BAD_GATEWAY", f"{shown}: {type(exc).__name__}") from None
    return response, content, hops, unfollowed


def returned_headers(response: httpx.Response, endpoint: dict[str, Any], method: str,
                     message_id: str) -> list[tuple[str, str]]:
    """The back end's headers the caller gets (hop-by-hop ones, ``Date`` and ``Server`` and a
    decoded encoding left out; a HEAD answer keeps its length), and the endpoint's
    ``returnedHeaders``."""
    passthrough = endpoint.get("gzipPassthroughSupportEnabled") is True
    out = [(n, v) for n, v in response.headers.multi_items()
           if (n.lower() not in HOP_BY_HOP or (method == "HEAD" and n.lower() == "content-length"))
           and n.lower() not in LISTENER_OWN
           and not (n.lower() == "content-encoding" and not (passthrough and v.lower() == "gzip"))]
    for item in endpoint.get("returnedHeaders") or []:
        suffix = str(item).split("-", 1)[1] if "-" in str(item) else str(item)
        value = {"message-id": message_id, "responder": RESPONDER}.get(suffix)
        if value:
            out.append((header_name(str(item)), value))
    return out


async def forward(transport: httpx.AsyncBaseTransport, call: Call, route: Route, found: KeyFound, message_id: str,
                  host_header: str, trace: Trace, max_answer_bytes: int = MAX_ANSWER_BYTES) -> Answer:
    endpoint = route.endpoint
    method, url, headers, body = backend_request(call, route, found, message_id, host_header)
    shown = masked(url, found, endpoint)
    started = time.perf_counter()
    response, content, hops, unfollowed = await _exchange(transport, method, url, headers, body, endpoint, shown,
                                                          max_answer_bytes)
    elapsed = (time.perf_counter() - started) * 1000
    via = f" after {hops} redirect{'s' * (hops != 1)}" if hops else ""
    if unfollowed:
        via += f"; the redirect to {unfollowed} not followed (not a system domain of the endpoint)"
    trace.add("forward", f"forwarded to {method} {shown}{via}")
    trace.add("return", f"{response.status_code} in {elapsed:.0f} ms")
    return Answer(response.status_code, returned_headers(response, endpoint, method, message_id), content)
