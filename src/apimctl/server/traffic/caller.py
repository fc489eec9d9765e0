"""The caller's side of a call made by ``apimctl call`` and ``apimctl test``: the key put
where the routed endpoint reads it.

:func:`key_value` turns what the user named (a key value, or the username of a member: its
first active key) into a key; :func:`with_key` puts it in the call at the endpoint's first
key location (a query parameter, a header, a form or JSON body field, the first path
position). A call no endpoint serves is left as it is (the traffic manager will say so).
"""

from __future__ import annotations

import json
from dataclasses import replace
from urllib.parse import parse_qsl, quote, urlencode

from apimctl.server.traffic.area import Area
from apimctl.server.traffic.key import positions
from apimctl.server.traffic.model import Call, Final
from apimctl.server.traffic.route import route


def key_value(areas: list[Area], named: str) -> str:
    """The key ``named`` is: a key of an area, else the first active key of the member of
    that username; else ``named`` itself (an unknown key, as the user asked)."""
    if any(named in area.keys for area in areas):
        return named
    for area in areas:
        members = {m["id"] for m in area.members.values() if m.get("username") == named}
        apps = {a["id"] for a in area.applications.values() if a.get("_memberId") in members}
        for value, key in area.keys.items():
            if key.get("_applicationId") in apps and key.get("status") == "active":
                return value
    return named


def with_key(areas: list[Area], call: Call, value: str) -> Call:
    """``call`` with the key ``value`` where the endpoint that serves it reads keys."""
    try:
        found = route(areas, call.method, call.host, call.path)
    except Final:
        return call
    endpoint = found.endpoint
    name = str(endpoint.get("apiKeyValueLocationKey") or "api_key")
    locations = list(endpoint.get("apiKeyValueLocations") or ["request-parameters"])
    location = locations[0]
    if location == "request-header":
        return replace(call, headers=[*call.headers, (name, value)])
    if location == "request-path" and positions(name):
        segments = call.path.split("/")
        spot = positions(name)[0]
        while len(segments) <= spot:
            segments.append("")
        segments[spot] = quote(value, safe="")
        return replace(call, path="/".join(segments))
    if location == "request-body":
        kind = (call.header("content-type") or "").lower()
        if "json" in kind:
            doc = json.loads(call.body or b"{}")
            doc[name] = value
            return replace(call, body=json.dumps(doc).encode())
        pairs = [*parse_qsl(call.body.decode("latin-1"), keep_blank_values=True), (name, value)]
        headers = call.headers if kind else [*call.headers, ("Content-Type", "application/x-www-form-urlencoded")]
        return replace(call, body=urlencode(pairs).encode(), headers=headers)
    return replace(call, query=[*call.query, (name, value)])
