"""Deciding a recorded call against one configuration, the way the traffic manager would.

A :class:`Side` holds a configuration (the traffic manager's areas, built once) and its own
limit counters. :meth:`Side.decide` rebuilds the call from its record (its host, path and
query; the scheme from ``ssl_enabled``; the recorded key put where the endpoint that served
the call reads keys in the area as it is, which is where the caller put it) and runs the
traffic manager's steps before forward (:func:`apimctl.server.traffic.manager.gates`, the
emulator's own function). Nothing is forwarded: a call that passes every step keeps its
recorded status. The limit counters run on the recorded times, so a lowered ceiling refuses
the calls that would have gone over it within their period.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from urllib.parse import parse_qsl, quote, urlencode

from apimctl.replay.records import Record
from apimctl.server.dialects import Dialect
from apimctl.server.traffic.area import Area
from apimctl.server.traffic.errors import render
from apimctl.server.traffic.key import positions
from apimctl.server.traffic.limits import Limits
from apimctl.server.traffic.maintenance import instant
from apimctl.server.traffic.manager import gates
from apimctl.server.traffic.model import Call, Final, Refused, Trace
from apimctl.server.traffic.request import check_call
from apimctl.server.traffic.route import route

PASSED = "forward"  # the step named for a call that passed every gate


@dataclass(frozen=True)
class Outcome:
    """What a caller would get, and what decided it."""

    status: int
    error: str  # the error message id ("" when the call passed or a step answered itself)
    step: str  # the deciding step (``forward``: it passed every gate)
    service: str = ""  # names of what the call was routed to ("" when it was not)
    endpoint: str = ""
    event: str = ""  # the name of the maintenance event that refused the call

    @property
    def answer(self) -> str:
        return f"{self.status} {self.error}" if self.error else str(self.status)


def call_of(record: Record) -> Call:
    """The call as the caller made it, without its key."""
    headers = [("Host", record.host), ("X-Forwarded-Proto", "https" if record.https else "http")]
    if record.token:
        headers.append(("Authorization", f"Bearer {record.token}"))
    return Call(record.method, "https" if record.https else "http", record.host, record.path,
                list(record.query), headers, b"", record.time)


def keyed(areas: list[Area], record: Record) -> Call:
    """The call with its recorded key where the endpoint serving it in ``areas`` reads keys."""
    call = call_of(record)
    try:
        call = replace(call, path=check_call(call))
    except Final:
        return call
    return _with_key(areas, call, record.key) if record.key else call


def _with_key(areas: list[Area], call: Call, value: str) -> Call:
    """``call`` with the key ``value`` where the endpoint that serves it reads keys (its first
    key location: a query parameter, a header, a form or JSON body field, a path position)."""
    try:
        endpoint = route(areas, call.method, call.host, call.path).endpoint
    except Final:
        return call
    name = str(endpoint.get("apiKeyValueLocationKey") or "api_key")
    location = next(iter(endpoint.get("apiKeyValueLocations") or ["request-parameters"]))
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


class Side:
    """One configuration (the areas) and the limit counters of its replay."""

    def __init__(self, areas: list[Area], dialect: Dialect) -> None:
        self.areas = areas
        self.dialect = dialect
        self.limits = Limits()

    def knows(self, key: str) -> bool:
        return any(key in area.keys for area in self.areas)

    def plan_of(self, key: str) -> tuple[str, str]:
        """The names of the package and plan of ``key`` ("" when the area does not know it)."""
        for area in self.areas:
            found = area.keys.get(key)
            if found is not None:
                package = area.packages.get(str(found.get("_packageId"))) or {}
                plan = area.plan_of(found) or {}
                return str(package.get("name") or ""), str(plan.get("name") or "")
        return "", ""

    def application_of(self, key: str) -> str:
        for area in self.areas:
            found = area.keys.get(key)
            if found is not None:
                return str(found.get("_applicationId") or "")
        return ""

    def decide(self, call: Call, recorded: int) -> Outcome:
        """The outcome of ``call`` (keyed: :func:`keyed`); ``recorded``: the status it got."""
        trace = Trace("")
        try:
            normal = check_call(call)
            if normal != call.path:
                call = replace(call, path=normal)
            gates(self.areas, self.limits, call, trace)
        except Final as final:
            return _outcome(trace, final.answer.status, "", final.step)
        except Refused as refused:
            answer = render(refused, trace.service, trace.endpoint, call, self.dialect)
            out = _outcome(trace, answer.status, refused.message_id, refused.step)
            return replace(out, event=self._event(trace, call.time)) if refused.step == "maintenance" else out
        return _outcome(trace, recorded, "", PASSED)


    def _event(self, trace: Trace, now: float) -> str:
        """The name of the maintenance event whose window holds ``now`` on the routed endpoint."""
        wanted = (trace.endpoint or {}).get("id")
        for area in self.areas:
            for event in area.events:
                start, end = instant(event.get("startDateTime")), instant(event.get("endDateTime"))
                if (start is not None and end is not None and start <= now < end
                        and any(ref.get("id") == wanted for ref in event.get("endpoints") or [])):
                    return str(event.get("name") or "")
        return ""


def _outcome(trace: Trace, status: int, error: str, step: str) -> Outcome:
    service, endpoint = trace.service or {}, trace.endpoint or {}
    return Outcome(status, error, step, str(service.get("name") or ""), str(endpoint.get("name") or ""))
