"""The caller's side of a call made by ``apimctl call`` and ``apimctl test``: the key, put where
the endpoint serving the call reads it, and the key a member's username stands for.

Both work from what the management API answers, whatever area serves it (the embedded
emulator, ``apimctl serve``, a real area), and name every field they read (real areas honour
no nested wildcard, SUPPLEMENT §10.10.8):

- :func:`read_services`: the services with what routing a call and placing a key need of
  their endpoints (:data:`CALLER_FIELDS`, taken from the kinds' read projection);
- :func:`place_key`: the call with the key at the routed endpoint's first key location (a
  query parameter, a header, a form or JSON body field, the first path position); a call no
  endpoint serves is left as it is (the traffic manager will say so). The endpoint is chosen
  as the traffic manager chooses it (SUPPLEMENT §11.1): the public domain equal to the host
  (its port ignored unless the domain names one), the longest ``requestPathAlias`` that is a
  prefix of the path on a segment boundary, among the endpoints supporting the method;
- :func:`member_key`: the first active package key of the member of a username, read
  through the management API (members, their applications, the applications' keys).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

import httpx

from apimctl import kinds, sensitive
from apimctl.api.quirks import as_list
from apimctl.kinds.capabilities import Routed

# the kind keys call (endpoints) and the kind holding them (services)
_CALLED, _ROUTED = next((k, routed) for k in kinds.KINDS
                        if k.callers.called and (routed := kinds.capability(k, Routed)) is not None)
_HOLDER = kinds.get(str(_CALLED.parent))
_ALIAS, _DOMAINS, _METHODS = _ROUTED.route_fields
_LOCATIONS, _LOCATION_KEY = "apiKeyValueLocations", "apiKeyValueLocationKey"
_DEFAULT_NAME, _DEFAULT_LOCATION = "api_key", "request-parameters"
_WANTED = (_CALLED.identity, _ALIAS, _DOMAINS, _METHODS, _LOCATIONS, _LOCATION_KEY)


def _caller_fields() -> str:
    """``id``, the identity, and the fields of the called kind :data:`_WANTED` names, as the
    holder's read projection names them (``endpoints.publicDomains.address``)."""
    prefix = f"{_CALLED.manifest_key}."
    nested = [f for f in _HOLDER.fields if f.startswith(prefix)
              and f[len(prefix):].split(".")[0] in ("id", *_WANTED)]
    return ",".join(("id", _HOLDER.identity, *nested))


CALLER_FIELDS = _caller_fields()
PAGE = 1000

Headers = list[tuple[str, str]]


class CallerError(Exception):
    """The management API refused a read the caller's side needs."""


async def read_services(api: httpx.AsyncClient) -> list[dict[str, Any]]:
    """The services of the area ``api`` (base URL ``.../v3/rest``, authenticated) manages,
    with :data:`CALLER_FIELDS`, page by page."""
    out: list[dict[str, Any]] = []
    while True:
        listed = await api.get(_HOLDER.path, params={"fields": CALLER_FIELDS, "limit": str(PAGE),
                                                     "offset": str(len(out))})
        if listed.status_code >= 300:
            raise CallerError(f"reading the {_HOLDER.manifest_key}: {listed.status_code} {sensitive.cut(listed.text, 200)}")
        page = as_list(listed.json())
        out += [s for s in page if isinstance(s, dict)]
        total = listed.headers.get("X-Total-Count")
        if len(page) < PAGE or (total is not None and total.isdigit() and len(out) >= int(total)):
            return out


async def member_key(api: httpx.AsyncClient, username: str) -> str | None:
    """The first active package key of the member whose username is ``username``, read
    through the management API ``api``; ``None`` when there is no such member or key."""
    members = await _list(api, "/members", {"fields": "id,username", "filter": f"username:{username}"})
    for member in members:
        if member.get("username") != username:
            continue  # a filter some areas match loosely
        apps = await _list(api, f"/members/{member['id']}/applications", {"fields": "id"})
        for app in apps:
            keys = await _list(api, f"/applications/{app['id']}/packageKeys", {"fields": "id,apikey,status"})
            for key in keys:
                if key.get("status") == "active" and isinstance(key.get("apikey"), str):
                    return str(key["apikey"])
    return None


async def _list(api: httpx.AsyncClient, path: str, params: Mapping[str, str]) -> list[dict[str, Any]]:
    listed = await api.get(path, params={**params, "limit": str(PAGE)})
    if listed.status_code >= 300:
        raise CallerError(f"reading {path}: {listed.status_code} {sensitive.cut(listed.text, 200)}")
    return [i for i in as_list(listed.json()) if isinstance(i, dict)]


def place_key(services: Sequence[Mapping[str, Any]], method: str, url: str, headers: Headers,
              body: bytes, key: str) -> tuple[str, Headers, bytes]:
    """``(url, headers, body)`` of the call with ``key`` where the endpoint of ``services``
    that serves it reads keys (unchanged when none serves it)."""
    parts = urlsplit(url)
    path = unquote(parts.path) or "/"
    endpoint = serving(services, method, parts.netloc, path)
    if endpoint is None:
        return url, headers, body
    name = str(endpoint.get(_LOCATION_KEY) or _DEFAULT_NAME)
    location = next(iter(as_list(endpoint.get(_LOCATIONS))), _DEFAULT_LOCATION)
    if location == "request-header":
        return url, [*headers, (name, key)], body
    if location == "request-path" and positions(name):
        # the segment replaced in the path as written: the other segments keep their encoding
        # (an encoded "/" stays one segment), the key is encoded as one segment
        segments = (parts.path or "/").split("/")
        spot = positions(name)[0]
        while len(segments) <= spot:
            segments.append("")
        segments[spot] = quote(key, safe="")
        return urlunsplit(parts._replace(path="/".join(segments))), headers, body
    if location == "request-body":
        kind = next((v for n, v in headers if n.lower() == "content-type"), "").lower()
        if "json" in kind:
            doc = json.loads(body or b"{}")
            doc[name] = key
            return url, headers, json.dumps(doc).encode()
        pairs = [*parse_qsl(body.decode("latin-1"), keep_blank_values=True), (name, key)]
        more = [] if kind else [("Content-Type", "application/x-www-form-urlencoded")]
        return url, [*headers, *more], urlencode(pairs).encode()
    query = [*parse_qsl(parts.query, keep_blank_values=True), (name, key)]
    return urlunsplit(parts._replace(query=urlencode(query))), headers, body


def positions(text: str) -> list[int]:
    """The path positions a ``request-path`` key location names (``"1 5"``, ``"2,3"``)."""
    return [int(p) for p in text.replace(",", " ").split() if p.isdigit() and int(p) > 0]


def serving(services: Sequence[Mapping[str, Any]], method: str, host: str,
            path: str) -> Mapping[str, Any] | None:
    """The endpoint that serves ``method`` on ``host`` and ``path``, if any: the longest
    alias first, the services' order among aliases of one length."""
    best: tuple[int, Mapping[str, Any]] | None = None
    for service in services:
        for endpoint in as_list(service.get(_CALLED.manifest_key)):
            if not isinstance(endpoint, Mapping) or not _supports(endpoint, method):
                continue
            if not any(_host_matches(d, host) for d in _addresses(endpoint)):
                continue
            alias = "/" + str(endpoint.get(_ALIAS) or "").strip("/")
            alias = "" if alias == "/" else alias
            if (path == alias or alias == "" or path.startswith(alias + "/")) and \
                    (best is None or len(alias) > best[0]):
                best = (len(alias), endpoint)
    return None if best is None else best[1]


def _supports(endpoint: Mapping[str, Any], method: str) -> bool:
    return method.upper() in {str(m).upper() for m in as_list(endpoint.get(_METHODS))}


def _addresses(endpoint: Mapping[str, Any]) -> list[str]:
    """The public domains of ``endpoint``: ``{address}`` as the API writes them, or names."""
    return [str(d.get("address", "")) if isinstance(d, Mapping) else str(d)
            for d in as_list(endpoint.get(_DOMAINS))]


def _host_matches(domain: str, host: str) -> bool:
    domain, host = domain.strip().lower(), host.strip().lower()
    if ":" in domain or host.startswith("["):
        return domain == host
    return domain == host.rsplit(":", 1)[0]
