"""Step 4, key: where the call's key is, and whether the area knows it (SUPPLEMENT §11.4).

The key is read from each of the endpoint's ``apiKeyValueLocations`` in turn, at
``apiKeyValueLocationKey``: a query parameter (``request-parameters``), a header
(``request-header``), a form or top-level JSON body field (``request-body``), or path
positions (``request-path``: ``"1 5"`` names the 1-based segments 1 and 5 of the path; the
first of them that holds a key of the area is the key). ``custom`` locations belong to a
custom adapter and are not emulated. No key: with ``allowMissingApiKey`` the call proceeds
as the reserved key ``noapikey`` (the specification: it "requires a special key whose value is
the literal noapikey", which the area's plans govern like any key), otherwise
``ERR_403_NOT_AUTHORIZED``. A key the area does not know, a key whose status is
not ``active`` or whose member is not ``active``: ``ERR_403_DEVELOPER_INACTIVE``. OAuth
endpoints are kept to token presence: a bearer token is required
(``ERR_400_MISSING_REQUIRED_ACCESS_TOKEN``) and is not checked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from apimctl.server.traffic.area import Area
from apimctl.server.traffic.model import Call, Refused, Trace
from apimctl.server.traffic.request import segment_text

NO_KEY = "noapikey"


@dataclass
class Spot:
    """Where a key was found: ``query``, ``header``, ``form``, ``json`` (a name) or ``path``
    (a 1-based segment position)."""

    place: str
    name: str

    def describe(self) -> str:
        label = {"query": "query", "header": "header", "form": "form field", "json": "JSON body field",
                 "path": "path segment"}[self.place]
        return f"{label} {self.name}"


@dataclass
class KeyFound:
    value: str
    spot: Spot | None  # None: the reserved key noapikey, or an OAuth token
    key: dict[str, Any] | None  # the area's key document (None: keyless or OAuth)
    plan: dict[str, Any] | None


def positions(text: str) -> list[int]:
    return [int(p) for p in text.replace(",", " ").split() if p.isdigit() and int(p) > 0]


def _body_fields(call: Call) -> tuple[str, dict[str, Any]]:
    kind = (call.header("content-type") or "").split(";")[0].strip().lower()
    if not call.body:
        return "", {}
    if kind == "application/x-www-form-urlencoded":
        return "form", dict(parse_qsl(call.body.decode("latin-1"), keep_blank_values=True))
    if kind.endswith("json"):
        try:
            value = json.loads(call.body)
        except ValueError:
            return "", {}
        return ("json", value) if isinstance(value, dict) else ("", {})
    return "", {}


def _candidates(call: Call, endpoint: dict[str, Any]) -> list[tuple[str, Spot | None]]:
    name = str(endpoint.get("apiKeyValueLocationKey") or "")
    out: list[tuple[str, Spot | None]] = []
    for location in endpoint.get("apiKeyValueLocations") or []:
        if location == "request-parameters" and name in call.params:
            out.append((call.params[name], Spot("query", name)))
        elif location == "request-header" and call.header(name) is not None:
            out.append((str(call.header(name)), Spot("header", name)))
        elif location == "request-body":
            place, fields = _body_fields(call)
            if name in fields and isinstance(fields[name], str | int):
                out.append((str(fields[name]), Spot(place, name)))
        elif location == "request-path":
            segments = call.path.strip("/").split("/")
            out += [(segment_text(segments[p - 1]), Spot("path", str(p))) for p in positions(name)
                    if p <= len(segments) and segments[p - 1]]
    return [(value, spot) for value, spot in out if value]


def path_secrets(call: Call, areas: list[Area], endpoint: dict[str, Any] | None) -> list[str]:
    """The segments of the call's path that hold a key, as the path spells them, whether or not
    the call reached the key step: a key of any area, and what is at the key positions of an
    endpoint that reads keys from the path (a key the area does not know is a secret too);
    like the key found, only values of 4 characters or more (shorter ones are masked nowhere)."""
    segments = call.path.strip("/").split("/")
    out = [s for s in segments if len(s) >= 4 and segment_text(s) != NO_KEY
           and any(segment_text(s) in area.keys for area in areas)]
    if endpoint is not None and "request-path" in (endpoint.get("apiKeyValueLocations") or []):
        spots = positions(str(endpoint.get("apiKeyValueLocationKey") or ""))
        out += [segments[p - 1] for p in spots if p <= len(segments) and len(segments[p - 1]) >= 4]
    return out


def _inactive(area: Area, key: dict[str, Any]) -> str | None:
    if key.get("status") != "active":
        return f"status {key.get('status')!r}"
    member = area.member_of(key)
    if member is not None and member.get("areaStatus", "active") != "active":
        return f"member {member.get('username')!r} is {member.get('areaStatus')!r}"
    return None


def find_key(call: Call, area: Area, endpoint: dict[str, Any], trace: Trace) -> KeyFound:
    if endpoint.get("requestAuthenticationType") == "oauth":
        scheme, _, token = (call.header("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Refused("key", "ERR_400_MISSING_REQUIRED_ACCESS_TOKEN", "OAuth endpoint, no bearer token")
        trace.add("key", "OAuth bearer token present (not verified by the emulator)")
        return KeyFound("", None, None, None)
    found = _candidates(call, endpoint)
    if not found:
        where = f"{', '.join(endpoint.get('apiKeyValueLocations') or []) or 'no location'} " \
                f"{endpoint.get('apiKeyValueLocationKey')!r}"
        if endpoint.get("allowMissingApiKey") is not True:
            raise Refused("key", "ERR_403_NOT_AUTHORIZED", f"no key in {where}")
        trace.add("key", f"none in {where}; allowMissingApiKey: proceeding as {NO_KEY}")
        found = [(NO_KEY, None)]
    value, spot = next(((v, s) for v, s in found if v in area.keys), found[0])
    if spot is not None:
        trace.key = value
    label = spot.describe() if spot else f"the reserved key {NO_KEY}"
    key = area.keys.get(value)
    if key is None and spot is None:
        raise Refused("key", "ERR_403_DEVELOPER_INACTIVE",
                      f"no key in the call, and the area has no key {NO_KEY} (allowMissingApiKey needs one)")
    if key is None:
        raise Refused("key", "ERR_403_DEVELOPER_INACTIVE", f"key in {label} unknown to the area")
    reason = _inactive(area, key)
    if reason:
        raise Refused("key", "ERR_403_DEVELOPER_INACTIVE", f"key in {label} is inactive ({reason})")
    plan = area.plan_of(key)
    trace.add("key", f"found in {label}, plan {plan.get('name') if plan else '(none)'}")
    return KeyFound(value, spot, key, plan)
