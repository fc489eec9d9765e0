"""The recent calls of the traffic manager, for ``GET /operator/traffic``.

The management listener serves the list (behind the operator token, like
``/operator/events``): newest last, each call with its time, method, host, path, status, the
step that decided it and every step's decision (the call's keys masked in the path and the
decisions, :meth:`~apimctl.server.traffic.model.Trace.masked`). ``?id=<message id>`` narrows it to one call
(``apimctl call`` reads its own call that way). At most :data:`KEPT` calls are kept.

``?format=calllog`` answers the same calls in the platform's call-log shape (SUPPLEMENT §12),
one record per line (``application/x-ndjson``), so that an emulator run and a real area's
log are replayed alike (``apimctl plan --replay``): every value a string, ``-`` when absent,
the key the traffic manager found in ``api_key`` and blanked in the query, as the platform
logs it; a bearer token is never kept (``oauth_access_token`` is ``(token)`` when the call
carried one).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from apimctl.server.traffic.maintenance import iso
from apimctl.server.traffic.model import Answer, Call, Trace
from apimctl.server.traffic.transport import scheme_of

ERROR_CODE_HEADERS = ("x-svc-error-code", "x-mashery-error-code")

KEPT = 1000


class CallLog:
    def __init__(self) -> None:
        self._calls: deque[dict[str, Any]] = deque(maxlen=KEPT)
        self._records: deque[dict[str, str]] = deque(maxlen=KEPT)  # the same calls, call-log shaped
        self._lock = threading.Lock()

    def record(self, call: Call, trace: Trace, answer: Answer) -> dict[str, Any]:
        entry = {
            "id": trace.message_id, "time": iso(call.time), "method": call.method, "host": call.host,
            "path": trace.masked(call.path), "status": answer.status, "decidedBy": trace.deciding,
            "service": (trace.service or {}).get("name"), "endpoint": (trace.endpoint or {}).get("name"),
            "steps": [{"step": d.step, "decision": trace.masked(d.text)} for d in trace.decisions],
        }
        record = calllog_record(call, trace, answer)
        with self._lock:
            self._calls.append(entry)
            self._records.append(record)
        return entry

    def records(self) -> list[dict[str, str]]:
        with self._lock:
            return list(self._records)

    def last(self) -> dict[str, Any] | None:
        with self._lock:
            return self._calls[-1] if self._calls else None

    def entries(self, message_id: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self._calls if message_id is None or e["id"] == message_id]


def calllog_record(call: Call, trace: Trace, answer: Answer) -> dict[str, str]:
    """The call in the platform's call-log shape (SUPPLEMENT §12)."""
    key = trace.key
    query = [(name, "" if key and value == key else value) for name, value in call.query]
    error = next((v for n, v in answer.headers if n.lower() in ERROR_CODE_HEADERS), "-")
    service, endpoint = trace.service or {}, trace.endpoint or {}
    bearer = (call.header("authorization") or "").lower().startswith("bearer ")
    return {
        "request_time": iso(call.time), "request_host_name": call.host, "http_method": call.method,
        "uri": call.path + ("?" + urlencode(query) if query else ""), "api_key": key,
        "oauth_access_token": "(token)" if bearer else "-", "ssl_enabled": "1" if scheme_of(call) == "https" else "0",
        "service_name": str(service.get("name") or ""), "endpoint_name": str(endpoint.get("name") or ""),
        "service_definition_endpoint_uuid": str(endpoint.get("id") or ""),
        "http_status_code": str(answer.status), "traffic_manager_error_code": error,
        "request_uuid": trace.message_id,
    }


def traffic_log_endpoint(log: CallLog) -> Any:
    async def endpoint(request: Request) -> Response:
        if request.query_params.get("format") == "calllog":
            lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in log.records())
            return Response(lines, media_type="application/x-ndjson")
        return JSONResponse(log.entries(request.query_params.get("id")))

    return endpoint
