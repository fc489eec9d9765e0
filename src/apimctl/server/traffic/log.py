"""The recent calls of the traffic manager, for ``GET /operator/traffic``.

The management listener serves the list (behind the operator token, like
``/operator/events``): newest last, each call with its time, method, host, path, status, the
step that decided it and every step's decision (the call's keys masked in the path and the
decisions, :meth:`~apimctl.server.traffic.model.Trace.masked`). ``?id=<message id>`` narrows it to one call
(``apimctl call`` reads its own call that way). At most :data:`KEPT` calls are kept.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from apimctl.server.traffic.maintenance import iso
from apimctl.server.traffic.model import Answer, Call, Trace

KEPT = 1000


class CallLog:
    def __init__(self) -> None:
        self._calls: deque[dict[str, Any]] = deque(maxlen=KEPT)
        self._lock = threading.Lock()

    def record(self, call: Call, trace: Trace, answer: Answer) -> dict[str, Any]:
        entry = {
            "id": trace.message_id, "time": iso(call.time), "method": call.method, "host": call.host,
            "path": trace.masked(call.path), "status": answer.status, "decidedBy": trace.deciding,
            "service": (trace.service or {}).get("name"), "endpoint": (trace.endpoint or {}).get("name"),
            "steps": [{"step": d.step, "decision": trace.masked(d.text)} for d in trace.decisions],
        }
        with self._lock:
            self._calls.append(entry)
        return entry

    def last(self) -> dict[str, Any] | None:
        with self._lock:
            return self._calls[-1] if self._calls else None

    def entries(self, message_id: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self._calls if message_id is None or e["id"] == message_id]


def traffic_log_endpoint(log: CallLog) -> Any:
    async def endpoint(request: Request) -> Response:
        return JSONResponse(log.entries(request.query_params.get("id")))

    return endpoint
