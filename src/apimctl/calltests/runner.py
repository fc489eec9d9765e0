"""Running call tests: consumers created through the management API, then each call made
against a traffic listener and its answer checked.

The runner is given a :class:`Target`: ``httpx`` clients of the management API and of the
traffic listener, and what only the embedded emulator offers (the virtual clock, the stub
back ends, where an endpoint reads its key, the decisions of the last call, a reset of the
limit counters between files). A running server's decisions come from its call log
(:class:`TrafficLog`, with the operator token). A call is sent to the traffic listener with
the test URL's host in ``Host`` and its scheme in ``X-Forwarded-Proto``; with ``repeat`` it
is made that many times at the same instant and the expectations apply to the last answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx
import jsonpath_rfc9535

from apimctl import kinds, sensitive
from apimctl.calltests import patterns
from apimctl.calltests.backends import BackendTransport, stubs_of
from apimctl.calltests.model import TestFile
from apimctl.calltests.timing import ClockError, VirtualClock, parse_instant

PlaceKey = Callable[[str, str, list[tuple[str, str]], bytes, str], tuple[str, list[tuple[str, str]], bytes]]
Send = Callable[[str, str, list[tuple[str, str]], bytes], Awaitable[httpx.Response]]


@dataclass
class Target:
    management: httpx.AsyncClient  # base URL .../v3/rest, authenticated
    traffic: httpx.AsyncClient  # base URL of the traffic listener
    clock: VirtualClock | None = None
    backends: BackendTransport | None = None
    place_key: PlaceKey | None = None
    last_call: Callable[[], dict[str, Any] | None] | None = None
    reset: Callable[[], None] | None = None
    cleanup: bool = False  # delete the consumers afterwards (a real area)
    send: Send | None = None  # hands a call to an in-process traffic manager, instead of ``traffic``
    traffic_log: TrafficLog | None = None  # the decisions of a running server's calls


class TrafficLogError(Exception):
    pass


@dataclass
class TrafficLog:
    """The recent calls of a running server with their decisions: its ``GET /operator/traffic``
    (newest last, behind the operator token). A call's entry is the newest one of its method
    and host that was not there before it was made."""

    client: httpx.AsyncClient
    url: str  # .../operator/traffic
    token: str

    async def entries(self) -> list[dict[str, Any]]:
        try:
            answer = await self.client.get(self.url, headers={"Authorization": f"Bearer {self.token}"})
        except httpx.HTTPError as exc:
            raise TrafficLogError(f"{self.url} did not answer: {type(exc).__name__}") from None
        if answer.status_code in (401, 403):
            raise TrafficLogError(f"{self.url} refuses the operator token ({answer.status_code})")
        if answer.status_code != 200:
            raise TrafficLogError(f"{self.url}: {answer.status_code} {answer.text[:200]}")
        found = answer.json()
        if not isinstance(found, list):
            raise TrafficLogError(f"{self.url}: not a list of calls")
        return [e for e in found if isinstance(e, dict)]

    async def ids(self) -> set[str]:
        return {str(e.get("id")) for e in await self.entries()}

    async def find(self, before: set[str], method: str, host: str) -> dict[str, Any] | None:
        new = [e for e in await self.entries() if str(e.get("id")) not in before and e.get("method") == method
               and str(e.get("host", "")).lower() == host.lower()]
        return new[-1] if new else None


@dataclass
class CallResult:
    file: str
    line: int
    name: str
    passed: bool
    failures: list[str] = field(default_factory=list)
    status: int | None = None
    decided_by: str = ""
    steps: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    calls: int = 0


class ConsumerError(Exception):
    pass


def _one(response: httpx.Response, what: str) -> dict[str, Any]:
    if response.status_code >= 300:
        raise ConsumerError(f"{what}: {response.status_code} {sensitive.cut(response.text, 300)}")
    body = response.json()
    return body[0] if isinstance(body, list) else body  # type: ignore[no-any-return]


# the kind keys are issued for (plans) and its parent's (packages): a consumer names its plan
# by both, as a package key's body does
_PLAN = kinds.ROLES.keys_for
_PACKAGE = kinds.get(str(_PLAN.parent))
PACKAGE_FIELD, PLAN_FIELD, PLANS = _PACKAGE.name, _PLAN.name, _PLAN.manifest_key


async def _plans(target: Target) -> dict[tuple[str, str], tuple[str, str]]:
    fields = f"id,{_PACKAGE.identity},{PLANS}.id,{PLANS}.{_PLAN.identity}"  # named at every level (§10.10.8)
    packages = await target.management.get(_PACKAGE.path, params={"fields": fields, "limit": "1000"})
    if packages.status_code >= 300:
        raise ConsumerError(f"reading the packages: {packages.status_code} {sensitive.cut(packages.text, 300)}")
    return {(p["name"], plan["name"]): (p["id"], plan["id"]) for p in packages.json() for plan in p.get(PLANS) or []}


async def create_consumers(target: Target, consumers: list[dict[str, Any]], members: list[str]) -> dict[str, str]:
    """name -> key value of each consumer; the ids of the members created go to ``members``
    (also those of a run that fails half-way, so that they can be deleted)."""
    if not consumers:
        return {}
    plans = await _plans(target)
    keys: dict[str, str] = {}
    api = target.management
    for consumer in consumers:
        found = plans.get((consumer[PACKAGE_FIELD], consumer[PLAN_FIELD]))
        if found is None:
            raise ConsumerError(f"consumer {consumer['name']!r}: no plan {consumer[PLAN_FIELD]!r} in package "
                                f"{consumer[PACKAGE_FIELD]!r} in the area")
        username = re.sub(r"[^A-Za-z0-9_.-]", "-", consumer["name"])[:40] + "-" + secrets.token_hex(4)
        member = _one(await api.post("/members", json={
            "username": username, "email": f"{username}@example.com", "displayName": consumer["name"],
            "externalId": username, "passwdNew": secrets.token_urlsafe(16)}), f"consumer {consumer['name']!r}: member")
        members.append(member["id"])
        app = _one(await api.post(f"/members/{member['id']}/applications",
                                  json={"name": f"{consumer['name']} application", "username": username}),
                   f"consumer {consumer['name']!r}: application")
        body: dict[str, Any] = {PACKAGE_FIELD: {"id": found[0]}, PLAN_FIELD: {"id": found[1]}}
        body |= {k: consumer[k] for k in ("apikey", "status", "qpsLimitCeiling", "qpsLimitExempt",
                                          "rateLimitCeiling", "rateLimitExempt") if k in consumer}
        key = _one(await api.post(f"/applications/{app['id']}/packageKeys", json=body),
                   f"consumer {consumer['name']!r}: key")
        keys[consumer["name"]] = str(key["apikey"])
    return keys


def default_start() -> float:
    today = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    return today.timestamp()


def _body(value: Any) -> tuple[bytes, list[tuple[str, str]]]:
    if value is None:
        return b"", []
    if isinstance(value, str):
        return value.encode(), []
    return json.dumps(value).encode(), [("Content-Type", "application/json")]


async def _send(target: Target, call: dict[str, Any], keys: dict[str, str]) -> httpx.Response:
    headers = [(str(k), _text(v)) for k, v in (call.get("headers") or {}).items()]
    body, extra = _body(call.get("body"))
    headers += [h for h in extra if not any(n.lower() == h[0].lower() for n, _ in headers)]
    if "origin" in call:
        headers.append(("Origin", call["origin"]))
    full = str(call["url"])
    method = call.get("method", "GET").upper()
    if "key" in call:
        value = keys[call["key"]]
        if target.place_key is not None:
            full, headers, body = target.place_key(method, full, headers, body, value)
        else:
            full = str(httpx.URL(full).copy_merge_params({"api_key": value}))
    parts = urlsplit(full)
    headers += [("Host", parts.netloc), ("X-Forwarded-Proto", parts.scheme)]
    if target.send is not None:
        return await target.send(method, full, headers, body)
    target_path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return await target.traffic.request(method, target_path, headers=headers, content=body)


def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


NO_DECISIONS = "give --operator-token to read the decisions of a running server (its /operator/traffic)"


def check(expect: dict[str, Any], response: httpx.Response, entry: dict[str, Any] | None,
          missing: str = NO_DECISIONS) -> list[str]:
    """What of ``expect`` the answer does not meet (empty: all of it); ``entry``: the call's
    decisions, ``missing`` why there are none."""
    failures: list[str] = []
    status = expect.get("status")
    if status is not None:
        wanted = status if isinstance(status, list) else [status]
        if response.status_code not in wanted:
            failures.append(f"status: expected {' or '.join(map(str, wanted))}, got {response.status_code}")
    if "decidedBy" in expect:
        got = entry.get("decidedBy") if entry else None
        if entry is None:
            failures.append(f"decidedBy: {missing}")
        elif got != expect["decidedBy"]:
            failures.append(f"decidedBy: expected {expect['decidedBy']}, got {got}")
    for name, rule in (expect.get("headers") or {}).items():
        failures += _header(name, rule, response.headers.get(name))
    failures += _body_checks(expect.get("body") or {}, response.text)
    return failures


def _header(name: str, rule: Any, value: str | None) -> list[str]:
    rule = rule if isinstance(rule, dict) else {"equals": rule}
    shown = None if value is None else sensitive.scrub(value)  # what a failure may quote
    if rule.get("present") and value is None:
        return [f"header {name}: expected present, absent"]
    if rule.get("absent") and value is not None:
        return [f"header {name}: expected absent, got {shown!r}"]
    if "equals" in rule and value != _text(rule["equals"]):
        return [f"header {name}: expected {_text(rule['equals'])!r}, got {shown!r}"]
    if "matches" in rule:
        try:
            found = value is not None and patterns.search(rule["matches"], value)
        except patterns.PatternTimeout as exc:
            return [f"header {name}: {exc}"]
        if not found:
            return [f"header {name}: expected to match {rule['matches']!r}, got {shown!r}"]
    return []


def _body_checks(rules: dict[str, Any], text: str) -> list[str]:
    failures: list[str] = []
    shown = sensitive.cut(text, 203, "...")  # scrubbed before it is cut
    parsed: Any = None
    if "json" in rules or ("equals" in rules and not isinstance(rules["equals"], str)):
        try:
            parsed = json.loads(text)
        except ValueError:
            return [f"body: expected JSON, got {shown!r}"]
    if "equals" in rules:
        expected = rules["equals"]
        if (text != expected) if isinstance(expected, str) else (parsed != expected):
            failures.append(f"body: expected {json.dumps(expected)[:200]}, got {shown!r}")
    contains = rules.get("contains")
    for piece in [contains] if isinstance(contains, str) else contains or []:
        if piece not in text:
            failures.append(f"body: expected to contain {piece!r}, got {shown!r}")
    absent = rules.get("notContains")
    for piece in [absent] if isinstance(absent, str) else absent or []:
        if piece in text:
            failures.append(f"body: expected not to contain {piece!r}, got {shown!r}")
    for query, expected in (rules.get("json") or {}).items():
        node = jsonpath_rfc9535.find_one(query, parsed)
        if node is None:
            failures.append(f"body {query}: no match in {shown!r}")
        elif node.value != expected:
            failures.append(f"body {query}: expected {json.dumps(expected)}, got {json.dumps(node.value)}")
    return failures


async def _seen(log: TrafficLog) -> tuple[set[str] | None, str]:
    """The calls in the log before a call is made (``None``, and why, when it cannot be read)."""
    try:
        return await log.ids(), NO_DECISIONS
    except TrafficLogError as exc:
        return None, f"reading the decisions: {exc}"


async def _logged(log: TrafficLog, before: set[str], call: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The log entry of a call just made on a running server, or why there is none."""
    try:
        entry = await log.find(before, call.get("method", "GET").upper(), urlsplit(str(call["url"])).netloc)
    except TrafficLogError as exc:
        return None, f"reading the decisions: {exc}"
    return entry, "" if entry else f"the call is not in {log.url}"


async def _run_call(target: Target, test_file: TestFile, index: int, call: dict[str, Any],
                    keys: dict[str, str]) -> CallResult:
    line = test_file.position("calls", index).line
    result = CallResult(test_file.path, line, call["name"], False)
    if "at" in call and target.clock is None:
        result.failures.append("at: a call at a given time needs the embedded emulator (a virtual clock)")
        return result
    try:
        if "at" in call and target.clock is not None:
            target.clock.set(parse_instant(call["at"]) or 0.0)
        if call.get("after") and target.clock is not None:
            target.clock.advance(float(call["after"]))
    except ClockError as exc:
        result.failures.append(f"{'after' if call.get('after') else 'at'}: {exc}")
        return result
    if call.get("after") and target.clock is None:
        await asyncio.sleep(float(call["after"]))
    started = time.perf_counter()
    response: httpx.Response | None = None
    repeat = int(call.get("repeat", 1))
    before: set[str] | None = None
    missing = NO_DECISIONS
    try:
        for i in range(repeat):
            if target.traffic_log is not None and i == repeat - 1:
                before, missing = await _seen(target.traffic_log)
            response = await _send(target, call, keys)
            result.calls += 1
    except httpx.HTTPError as exc:
        result.failures.append(f"the traffic listener did not answer: {type(exc).__name__}: {exc}")
        return result
    result.seconds = time.perf_counter() - started
    assert response is not None
    entry = target.last_call() if target.last_call else None
    if target.traffic_log is not None and before is not None:
        entry, missing = await _logged(target.traffic_log, before, call)
    result.status = response.status_code
    if entry:
        result.decided_by, result.steps = str(entry.get("decidedBy", "")), list(entry.get("steps", []))
    result.failures = check(call["expect"], response, entry, missing)
    if result.failures and result.steps:
        last = result.steps[-1]
        result.failures.append(f"decided by {last['step']}: {last['decision']}")
    result.passed = not result.failures
    return result


async def run_file(target: Target, test_file: TestFile) -> list[CallResult]:
    doc = test_file.doc
    if target.reset:
        target.reset()
    if target.clock is not None:
        target.clock.set(parse_instant(doc["start"]) if "start" in doc else default_start())  # type: ignore[arg-type]
    stubs = stubs_of(doc.get("backends") or [])
    if target.backends is not None:
        target.backends.stubs = {s.address: s for s in stubs}
    elif stubs:
        return [CallResult(test_file.path, test_file.position("backends").line, c["name"], False,
                           ["backends: stub back ends need the embedded emulator (a running server calls its own)"])
                for c in doc["calls"]]
    members: list[str] = []
    try:
        keys = await create_consumers(target, doc.get("consumers") or [], members)
        return [await _run_call(target, test_file, i, call, keys) for i, call in enumerate(doc["calls"])]
    except (ConsumerError, httpx.HTTPError) as exc:
        why = str(exc) if isinstance(exc, ConsumerError) else f"the management API did not answer: {type(exc).__name__}"
        return [CallResult(test_file.path, test_file.position("calls", i).line, c["name"], False, [why])
                for i, c in enumerate(doc["calls"])]
    finally:
        if target.cleanup:
            for member in members:
                with contextlib.suppress(httpx.HTTPError):
                    await target.management.delete(f"/members/{member}")
