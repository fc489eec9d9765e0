"""Event triggers of the reference server: callbacks around member, application and key writes.

The management-API resources for members, applications and package keys call an
``EventDispatcher`` around every create, update and delete: ``pre`` inside the request before
the write (its reply may enrich or veto the write), ``post`` after the commit (its failures are
only recorded). The configuration is the ``--events-config`` YAML of ``apimctl serve``
(spec/SUPPLEMENT.md section 8), parsed by ``load_events_config`` / ``parse_events_config``.
The operator reads the log of recent calls through ``GET /operator/events``
(``event_log_endpoint``).

Wire format (the specification's "Events" section): ``POST {url}/v1/<object>`` for pre-create,
``PUT {url}/v1/<object>/<id>`` for post-create and both update events, ``DELETE`` with no body
for the delete events; query ``event=<name>&txn=<32 hex digits>``; headers ``Accept``,
``Content-Type`` and the object's agent header. Bodies are the snake_case payloads built by
``member_payload``, ``application_payload`` and ``key_payload``. With ``encoding: form`` nested
objects and arrays are sent as JSON text in their form field, booleans as ``true``/``false``
and nulls as empty strings.

Secrets (a key's ``secret``) travel to the configured receiver, which is part of the protocol,
but never appear in the event log.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import jsonschema  # type: ignore[import-untyped]
import yaml
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from apimctl.errors import ApimctlError
from apimctl.server.keys import limits_of

AGENT = "Svc Event Trigger 1.0"
DEFAULT_TIMEOUT = 10.0
LOG_SIZE = 1000
SENSITIVE = "(sensitive)"

OBJECTS: dict[str, str] = {"member": "User-Agent", "application": "Application-Agent", "key": "Key-Agent"}
METHODS: dict[str, str] = {
    "pre-create": "POST",
    "post-create": "PUT",
    "pre-update": "PUT",
    "post-update": "PUT",
    "pre-delete": "DELETE",
    "post-delete": "DELETE",
}
CONTENT_TYPES = {"json": "application/json", "form": "application/x-www-form-urlencoded"}

# Payload fields a pre event may change with ``proceed_with_changes`` (snake_case).
WRITABLE: dict[str, frozenset[str]] = {
    "member": frozenset({
        "username", "email", "display_name", "external_id", "uri", "blog", "im", "imsvc",
        "phone", "company", "address1", "address2", "locality", "region", "postal_code",
        "country_code", "first_name", "last_name", "area_status",
    }),
    "application": frozenset({
        "name", "description", "type", "ads_system", "usage_model", "tags", "notes",
        "how_did_you_hear", "preferred_protocol", "preferred_output", "external_id", "uri",
        "commercial", "ads",
    }),
    "key": frozenset({
        "apikey", "secret", "status", "qps_limit_ceiling", "qps_limit_exempt",
        "rate_limit_ceiling", "rate_limit_exempt",
    }),
}
_SECRET_FIELDS = frozenset({"secret", "password", "passwd_new", "passwdNew"})

_AREA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["url"],
    "additionalProperties": False,
    "properties": {
        "url": {"type": "string", "pattern": "^https?://[^/?#]+"},
        "encoding": {"enum": list(CONTENT_TYPES)},
        "timeout": {"type": "number", "exclusiveMinimum": 0},
        "events": {
            "type": ["object", "null"],
            "additionalProperties": False,
            "properties": {
                obj: {"type": ["array", "null"], "items": {"enum": list(METHODS)}}
                for obj in OBJECTS
            },
        },
    },
}
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["areas"],
    "additionalProperties": False,
    "properties": {"areas": {"type": ["object", "null"], "additionalProperties": _AREA_SCHEMA}},
}


class EventVeto(Exception):
    """A pre event refused the write: ``items`` is the body of the 400 answer."""

    def __init__(self, items: list[dict[str, str]]) -> None:
        self.items = items
        super().__init__("; ".join(f"{i['property'] or '-'}: {i['message']}" for i in items))


@dataclass(frozen=True)
class AreaEvents:
    """The event-trigger settings of one area."""

    url: str
    encoding: str = "json"
    timeout: float = DEFAULT_TIMEOUT
    events: frozenset[tuple[str, str]] = frozenset()


# --- configuration -------------------------------------------------------------------------


def load_events_config(path: str) -> dict[str, Any]:
    """Read and check an ``--events-config`` file; every problem is reported with where it is."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        raw = yaml.safe_load(text)
        tree = yaml.compose(text)
    except OSError as exc:
        raise ApimctlError(f"{path}: cannot read events config: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ApimctlError(f"{path}: cannot read events config: not UTF-8 text ({exc.reason})") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        raise ApimctlError(f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from exc
    if raw is None:  # an empty file: no area has event triggers
        return {"areas": {}}
    parse_events_config(raw, source=path, tree=tree)
    return raw if isinstance(raw, dict) else {}


def parse_events_config(raw: Any, source: str = "events config", tree: yaml.Node | None = None
                        ) -> dict[str, AreaEvents]:
    """Validate the parsed YAML against ``CONFIG_SCHEMA`` and return the settings per area.

    With ``tree`` (the composed YAML of the file) every problem names its line and column.
    """
    if raw is None:
        return {}
    validator = jsonschema.Draft202012Validator(CONFIG_SCHEMA)
    errors = sorted(validator.iter_errors(raw), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        lines = [f"{_where(source, tree, e.absolute_path)}: {_dotted(e.absolute_path) or '(top)'}: {_message(e)}"
                 for e in errors]
        raise ApimctlError("\n".join(lines))
    return {str(name): _area(spec) for name, spec in (raw.get("areas") or {}).items()}


def _where(source: str, tree: yaml.Node | None, path: Any) -> str:
    """``file:line:col`` of the YAML node at ``path`` (the file alone without a tree)."""
    node = tree
    for step in path:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == str(step)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        else:
            node = None
    if node is None:
        return source
    return f"{source}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def _area(spec: Mapping[str, Any]) -> AreaEvents:
    enabled = frozenset(
        (obj, event) for obj, events in (spec.get("events") or {}).items() for event in events or ()
    )
    return AreaEvents(
        url=str(spec["url"]).rstrip("/"),
        encoding=str(spec.get("encoding", "json")),
        timeout=float(spec.get("timeout", DEFAULT_TIMEOUT)),
        events=enabled,
    )


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "pattern":
        return f"{error.instance!r} is not an http:// or https:// URL"
    return str(error.message)


def _dotted(path: Any) -> str:
    return ".".join(str(p) for p in path)


# --- payloads ------------------------------------------------------------------------------


def snake_to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_MEMBER_STRINGS = (
    "region", "external_id", "phone", "address1", "address2", "area_status", "blog", "im",
    "country_code", "uri", "first_name", "display_name", "username", "email", "postal_code",
    "company", "last_name", "locality", "imsvc",
)
_APPLICATION_STRINGS = (
    "preferred_protocol", "tags", "external_id", "ads_system", "type", "uri", "username",
    "preferred_output", "how_did_you_hear", "description", "usage_model", "name", "notes",
)


def _strings(obj: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        value = obj.get(snake_to_camel(name))
        out[name] = "" if value is None else value
    return out


def member_payload(member: Mapping[str, Any]) -> dict[str, Any]:
    """A stored (camelCase) member as the snake_case member object of the callbacks."""
    payload = _strings(member, _MEMBER_STRINGS)
    payload.update(
        registration_ipaddr=member.get("registrationIpaddr") or "",
        object_type="member",
        created=member.get("created"),
        updated=member.get("updated"),
    )
    return payload


def application_payload(app: Mapping[str, Any], member: Mapping[str, Any]) -> dict[str, Any]:
    """An application and its owner as the callbacks' application object (no ``id`` before it has one)."""
    payload: dict[str, Any] = {"member": member_payload(member)}
    payload.update(_strings(app, _APPLICATION_STRINGS))
    payload["username"] = app.get("username") or member.get("username") or ""
    payload.update(
        status=app.get("status") or "active",
        object_type="application",
        created=app.get("created"),
        updated=app.get("updated"),
        ads=bool(app.get("ads", False)),
        commercial=bool(app.get("commercial", False)),
    )
    if app.get("id") is not None:
        payload["id"] = app["id"]
    return payload


def key_payload(
    key: Mapping[str, Any],
    app: Mapping[str, Any],
    member: Mapping[str, Any],
    package: Mapping[str, Any],
    plan: Mapping[str, Any],
) -> dict[str, Any]:
    """A package key as the callbacks' key object.

    The platform's ``service`` of a key is the plan it is issued under: ``service_key`` is the
    plan id. ``limits`` lists the effective per-period and per-second ceilings, each with its
    source (``key`` when the key sets it, else ``plan``); exempt limits are left out.
    """
    limits = limits_of(key, plan)
    return {
        "member": member_payload(member),
        "application": application_payload(app, member),
        "service": {
            "service_key": plan.get("id"),
            "name": plan.get("name") or package.get("name") or "",
            "created": plan.get("created"),
            "updated": plan.get("updated"),
            "limits": limits,
        },
        "limits": limits,
        "oauth_rate_limit_ceiling": 0,
        "oauth_rate_limit_exempt": False,
        "oauth_qps_limit_ceiling": 0,
        "oauth_qps_limit_exempt": False,
        "oauth_user_limits": [],
        "qps_limit_ceiling": key.get("qpsLimitCeiling"),
        "qps_limit_exempt": bool(key.get("qpsLimitExempt", False)),
        "rate_limit_ceiling": key.get("rateLimitCeiling"),
        "rate_limit_exempt": bool(key.get("rateLimitExempt", False)),
        "status": key.get("status") or "active",
        "group_id": None,
        "apikey": key.get("apikey"),
        "secret": key.get("secret"),
        "service_key": plan.get("id"),
        "object_type": "key",
        "username": member.get("username") or "",
        "protected_methods": False,
        "required_referer": "",
        "created": key.get("created"),
        "updated": key.get("updated"),
    }


def apply_changes(obj: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a stored (camelCase) object with snake_case ``changes`` applied."""
    out = dict(obj)
    for name, value in changes.items():
        out[snake_to_camel(name)] = value
    return out


def redact(value: Any) -> Any:
    """A copy with every secret field replaced by ``(sensitive)``, for logs."""
    if isinstance(value, dict):
        return {k: SENSITIVE if k in _SECRET_FIELDS and v else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


# --- the dispatcher ------------------------------------------------------------------------


@dataclass
class _Call:
    """One callback to make, and what became of it."""

    area: str
    obj: str
    event: str
    txn: str
    url: str
    headers: dict[str, str]
    payload: dict[str, Any] | None
    body: bytes = b""
    status: int | None = None
    reply: Any = None
    outcome: str = ""
    error: str = ""
    duration_ms: float = 0.0


class EventDispatcher:
    """Calls the configured receivers and keeps a bounded log of the calls made.

    Thread-safe: route handlers may call it from Starlette's thread pool.
    """

    def __init__(self, config: dict[str, Any] | None, *, log_size: int = LOG_SIZE) -> None:
        self.areas = parse_events_config(config)
        self._log: deque[dict[str, Any]] = deque(maxlen=log_size)
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None

    def enabled(self, area: str, obj: str, event: str) -> bool:
        settings = self.areas.get(area)
        return settings is not None and (obj, event) in settings.events

    def new_txn(self) -> str:
        return secrets.token_hex(16)

    def pre(
        self,
        area: str,
        obj: str,
        event: str,
        payload: dict[str, Any] | None,
        obj_id: str | None,
        txn: str,
    ) -> dict[str, Any]:
        """Ask the receiver about a write; the snake_case changes to apply, or ``EventVeto``."""
        if not self.enabled(area, obj, event):
            return {}
        call = self._send(area, obj, event, payload, obj_id, txn)
        try:
            changes = _pre_outcome(call)
        except EventVeto as veto:
            call.outcome = call.outcome or "failed"
            call.error = call.error or str(veto)
            raise
        finally:
            self._record(call)
        return changes

    def post(
        self,
        area: str,
        obj: str,
        event: str,
        payload: dict[str, Any] | None,
        obj_id: str | None,
        txn: str,
    ) -> None:
        """Tell the receiver about a committed write; failures are only recorded."""
        if not self.enabled(area, obj, event):
            return
        try:
            call = self._send(area, obj, event, payload, obj_id, txn)
        except ValueError as exc:  # a caller's mistake must not break a committed write
            call = _Call(area, obj, event, txn, "", {}, None, outcome="failed", error=str(exc))
        if not call.outcome:
            call.outcome = "ok" if call.status == 200 else "failed"
            if call.status != 200:
                call.error = f"receiver answered HTTP {call.status}"
        self._record(call)

    def log(self, area: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """Recent calls, newest last."""
        with self._lock:
            entries = [e for e in self._log if area is None or e["area"] == area]
        if limit is None:
            return entries
        return entries[-limit:] if limit > 0 else []

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # -- one call ---------------------------------------------------------------------------

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                # trust_env off: callbacks go straight to the configured URL, never via a proxy
                self._client = httpx.Client(headers={"User-Agent": "apimctl-reference-server"}, trust_env=False)
            return self._client

    def _send(
        self,
        area: str,
        obj: str,
        event: str,
        payload: dict[str, Any] | None,
        obj_id: str | None,
        txn: str,
    ) -> _Call:
        settings = self.areas[area]
        call = _build_call(settings, area, obj, event, payload, obj_id, txn)
        started = time.perf_counter()
        try:
            response = self._http().request(
                METHODS[event], call.url, headers=call.headers, content=call.body or None,
                timeout=settings.timeout,
            )
        except httpx.TimeoutException:
            call.outcome, call.error = "timeout", f"no reply within {settings.timeout:g} s"
        except httpx.HTTPError as exc:
            call.outcome, call.error = "failed", f"cannot reach the receiver: {type(exc).__name__}"
        else:
            call.status = response.status_code
            call.reply = _reply_body(response)
        call.duration_ms = round((time.perf_counter() - started) * 1000, 1)
        if call.status is not None and call.duration_ms > settings.timeout * 1000:
            call.outcome, call.error = "timeout", f"no reply within {settings.timeout:g} s"
        return call

    def _record(self, call: _Call) -> None:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "area": call.area,
            "object": call.obj,
            "event": call.event,
            "txn": call.txn,
            "request": {
                "method": METHODS[call.event],
                "url": call.url,
                "headers": call.headers,
                "body": redact(call.payload),
            },
            "status": call.status,
            "reply": redact(call.reply),
            "outcome": call.outcome,
            "error": call.error,
            "duration_ms": call.duration_ms,
        }
        with self._lock:
            self._log.append(entry)


def _build_call(
    settings: AreaEvents,
    area: str,
    obj: str,
    event: str,
    payload: dict[str, Any] | None,
    obj_id: str | None,
    txn: str,
) -> _Call:
    if obj not in OBJECTS or event not in METHODS:
        raise ValueError(f"unknown event {obj}/{event}")
    path = f"/v1/{obj}"
    if event != "pre-create":
        if not obj_id:
            raise ValueError(f"{obj} {event} needs the object's id")
        path += "/" + quote(str(obj_id), safe="")
    url = f"{settings.url}{path}?{urlencode({'event': event, 'txn': txn})}"
    headers = {
        "Accept": "application/json",
        "Content-Type": CONTENT_TYPES[settings.encoding],
        OBJECTS[obj]: AGENT,
    }
    body_payload = None if event.endswith("-delete") else (payload or {})
    body = _encode(body_payload, settings.encoding) if body_payload is not None else b""
    return _Call(area, obj, event, txn, url, headers, body_payload, body)


def _encode(payload: dict[str, Any], encoding: str) -> bytes:
    if encoding == "json":
        return json.dumps(payload, separators=(",", ":")).encode()
    return urlencode([(k, _form_value(v)) for k, v in payload.items()]).encode()


def _form_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _reply_body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text[:2000]


# --- reading a pre event's reply -----------------------------------------------------------


def _pre_outcome(call: _Call) -> dict[str, Any]:
    """Decide a pre event from its reply (spec "Response to a pre event")."""
    what = f"event trigger {call.event} for {call.obj}"
    if call.outcome == "timeout":
        raise EventVeto([{"property": "", "message": f"{what} timed out ({call.error})"}])
    if call.status is None:
        raise EventVeto([{"property": "", "message": f"{what} failed: {call.error}"}])
    reply = call.reply if isinstance(call.reply, dict) else {}
    kind = reply.get("type")
    if call.status == 200 and kind == "proceed":
        call.outcome = "proceed"
        return {}
    if call.status == 200 and kind == "proceed_with_changes":
        changes = _changes(call.obj, reply.get("params"))
        call.outcome = "proceed_with_changes"
        return changes
    if call.status == 400 and kind == "stop":
        call.outcome = "stop"
        raise EventVeto(_stop_items(call.obj, reply.get("error")))
    detail = f"HTTP {call.status}" if isinstance(call.reply, dict) else f"HTTP {call.status}, not a JSON object"
    call.error = f"unexpected reply ({detail})"
    raise EventVeto([{"property": "", "message": f"{what} failed: {call.error}"}])


def _changes(obj: str, params: Any) -> dict[str, Any]:
    """Merge ``params`` (``[{field: value}, ...]``) into one snake_case dict of allowed fields."""
    if isinstance(params, dict):
        params = [params]
    if params is None:
        params = []
    if not isinstance(params, list) or not all(isinstance(p, dict) for p in params):
        raise EventVeto([{"property": "", "message": "event trigger failed: params must be a list of objects"}])
    changes: dict[str, Any] = {}
    for item in params:
        changes.update(item)
    refused = sorted(set(changes) - WRITABLE[obj])
    if refused:
        raise EventVeto([
            {"property": name, "message": f"event trigger failed: proceed_with_changes cannot set {name!r} of a {obj}"}
            for name in refused
        ])
    return changes


def _stop_items(obj: str, error: Any) -> list[dict[str, str]]:
    error = error if isinstance(error, dict) else {}
    message = str(error.get("message") or "refused by the event trigger")
    items = []
    for entry in error.get("data") or []:
        if isinstance(entry, dict):
            name = str(entry.get("field") or "")
            prop = snake_to_camel(name) if name in WRITABLE[obj] else name
            items.append({"property": prop, "message": str(entry.get("message") or message)})
    return items or [{"property": "", "message": message}]


# --- operator view -------------------------------------------------------------------------


def event_log_endpoint(dispatcher: EventDispatcher) -> Callable[[Request], Awaitable[Response]]:
    """A Starlette endpoint for ``GET /operator/events`` (``?area=`` and ``?limit=`` optional).

    Operator authentication is the caller's job (the route is mounted behind it).
    """

    async def endpoint(request: Request) -> Response:
        area = request.query_params.get("area")
        raw_limit = request.query_params.get("limit", "")
        if raw_limit and not raw_limit.isdigit():
            return JSONResponse([{"property": "limit", "message": "must be a non-negative integer"}], status_code=400)
        return JSONResponse(dispatcher.log(area, int(raw_limit) if raw_limit else None))

    return endpoint
