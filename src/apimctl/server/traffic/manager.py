"""The traffic manager: one call through the steps of SUPPLEMENT §11, in order.

route -> transport -> maintenance -> (CORS pre-flight) -> key -> entitlement -> limits ->
CORS headers -> forward -> return. The first step that refuses the call answers with a
message of the error catalog rendered through the endpoint's error set
(:mod:`~apimctl.server.traffic.errors`); route answers 596 and 405 itself and a pre-flight
is answered by the CORS step. Every call is recorded with its decisions in the call log.
The clock is injected (``apimctl test`` runs on a virtual one), and so is the transport of
the calls to the back end (stub back ends; by default
:class:`~apimctl.server.traffic.connections.KeepAliveTransport`), and the longest answer
body forwarded. A call cancelled on its way (its caller left) is recorded as such.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

import httpx

from apimctl.server.dialects import Dialect
from apimctl.server.store import Store
from apimctl.server.traffic import cors
from apimctl.server.traffic.area import Area, AreaReader
from apimctl.server.traffic.connections import KeepAliveTransport
from apimctl.server.traffic.entitlement import check_entitlement
from apimctl.server.traffic.errors import render
from apimctl.server.traffic.forward import MAX_ANSWER_BYTES, forward
from apimctl.server.traffic.key import NO_KEY, KeyFound, find_key, path_secrets
from apimctl.server.traffic.limits import Limits, Usage
from apimctl.server.traffic.log import CallLog
from apimctl.server.traffic.maintenance import check_maintenance
from apimctl.server.traffic.model import Answer, Call, Final, Refused, Trace
from apimctl.server.traffic.request import check_call, escaped
from apimctl.server.traffic.route import Route, route
from apimctl.server.traffic.transport import check_transport

Clock = Callable[[], float]
log = logging.getLogger("apimctl.server.traffic")


class TrafficManager:
    """Handles calls against the live configuration of the store's areas."""

    def __init__(self, store: Store, dialect: Dialect, log: CallLog, *, clock: Clock = time.time,
                 transport: httpx.AsyncBaseTransport | None = None,
                 max_answer_bytes: int = MAX_ANSWER_BYTES) -> None:
        self.dialect = dialect
        self.max_answer_bytes = max_answer_bytes
        self.reader = AreaReader(store)
        self.limits = Limits()
        self.log = log
        self.clock = clock
        self.transport = transport if transport is not None else KeepAliveTransport()

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def handle(self, call: Call) -> tuple[Answer, Trace]:
        trace = Trace(uuid.uuid4().hex)
        origin_headers: list[tuple[str, str]] = []
        try:
            normal = check_call(call)
            if normal != call.path:
                call = replace(call, path=normal)
            answer = await self._steps(call, trace, origin_headers)
            trace.deciding = "return"
        except asyncio.CancelledError:  # the caller left (or the server stops): nothing to answer
            trace.add("forward", "cancelled: the caller left (or the server stopped) before the answer")
            trace.deciding = "forward"
            self.log.record(call, trace, Answer(499, [], b""))
            raise
        except Final as final:
            if not trace.decisions or trace.decisions[-1].step != final.step:
                trace.add(final.step, final.reason)
            trace.deciding, answer = final.step, final.answer
        except Refused as refused:
            trace.add(refused.step, f"refused: {refused.reason} ({refused.message_id})")
            trace.deciding = refused.step
            answer = render(refused, trace.service, trace.endpoint, call, self.dialect)
            if refused.step != "cors" and trace.endpoint is not None and not cors.is_preflight(call):
                answer.headers += cors.actual_headers(call, trace.endpoint, Trace(""))
        except Exception:  # a bug of the emulator: a plain 500, never a stack trace
            log.exception("traffic manager failure on %s", escaped(f"{call.method} {call.host}{trace.masked(call.path)}"))
            trace.add("error", "internal error of the emulator (see the server log)")
            trace.deciding = "error"
            answer = Answer(500, [("Content-Type", "text/plain")], b"internal error of the traffic emulator")
        # keys in the path: at the routed endpoint's key positions, else any key of an area
        trace.secrets += path_secrets(call, self._areas_or_none() if trace.endpoint is None else [], trace.endpoint)
        self.log.record(call, trace, answer)
        return answer, trace

    def _areas_or_none(self) -> list[Area]:
        """The areas, for masking the keys of a call's path in the log (none when they cannot
        be read: the call was answered 500 already)."""
        try:
            return self.reader.areas()
        except Exception:
            return []

    async def _steps(self, call: Call, trace: Trace, origin_headers: list[tuple[str, str]]) -> Answer:
        passed = gates(self.reader.areas(), self.limits, call, trace)
        origin_headers += passed.origin_headers
        answer = await forward(self.transport, call, passed.route, passed.key, trace.message_id,
                               self.dialect.host_header, trace, self.max_answer_bytes)
        answer.headers += passed.usage.headers + origin_headers
        return answer


@dataclass
class Passed:
    """A call every step before forward let through: where it goes, with which key."""

    route: Route
    key: KeyFound
    usage: Usage
    origin_headers: list[tuple[str, str]]


def gates(areas: list[Area], limits: Limits, call: Call, trace: Trace) -> Passed:
    """The steps before forward (route, transport, maintenance, CORS pre-flight, key,
    entitlement, limits, CORS headers) on a call whose path is normalised: what passed, or
    :class:`Refused` / :class:`Final` from the step that decides. ``apimctl plan --replay``
    decides recorded calls with this same function, without forwarding them."""
    preflight = cors.is_preflight(call)
    method = str(call.header("access-control-request-method")) if preflight else call.method
    found_route = route(areas, method, call.host, call.path)
    service, endpoint = found_route.service, found_route.endpoint
    trace.service, trace.endpoint = service, endpoint
    trace.add("route", f"{service.get('name')}/{endpoint.get('name')}")
    check_transport(call, endpoint, trace)
    check_maintenance(found_route.area.events, endpoint, call.time, trace)
    if preflight:
        cors.preflight(call, endpoint, trace)
    found = find_key(call, found_route.area, endpoint, trace)
    if len(found.value) >= 4 and found.value != NO_KEY:  # the reserved key is no secret
        trace.secrets.append(found.value)
    check_entitlement(call, found, service, endpoint, found_route.rest, trace)
    usage = limits.check(found_route.area.name, service, endpoint, found, call.time, trace)
    return Passed(found_route, found, usage, cors.actual_headers(call, endpoint, trace))
