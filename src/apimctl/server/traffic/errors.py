"""Error answers of the traffic manager, rendered through the endpoint's error set
(SUPPLEMENT §11, "Error answers").

The set is the endpoint's ``errorSet``, else the service's first set, else the catalog's
defaults of the dialect. The message gives the status code (``code``), the body
(``responseBody``; empty: ``<h1>Developer Over Qps</h1>`` built from the message id, or a
small JSON object when the set's type is JSON), ``X-Error-Detail-Header`` when its
``detailHeader`` is not empty, and the error-code header of the dialect; the
``Content-Type`` is the set's ``type``. With ``jsonp`` and the endpoint's
``jsonpCallbackParameter`` in the call's query, the answer is 200 with the body wrapped in
the callback (the parameter's value, else the endpoint's ``jsonpCallbackParameterValue``,
else the set's ``jsonpType``); a callback name that is not a JavaScript identifier path
(``cb``, ``app.on_error``) is refused with a plain 400, never written into the answer. The
reason phrase is the message's ``status`` (the listener of ``apimctl serve --traffic-port``
sends it on the status line, :mod:`~apimctl.server.traffic.listener`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from apimctl.platform import ERROR_CATALOG
from apimctl.server.dialects import Dialect
from apimctl.server.traffic.listener import usable
from apimctl.server.traffic.model import Answer, Call, Refused

DETAIL_HEADER = "X-Error-Detail-Header"
CALLBACK = re.compile(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*", re.ASCII)


def error_set(service: dict[str, Any] | None, endpoint: dict[str, Any] | None) -> dict[str, Any] | None:
    sets = [s for s in (service or {}).get("errorSets") or [] if isinstance(s, dict)]
    ref = (endpoint or {}).get("errorSet")
    if isinstance(ref, dict):
        named = next((s for s in sets if s.get("id") == ref.get("id")), None)
        if named is not None:
            return named
    return sets[0] if sets else None


def message_of(chosen: dict[str, Any] | None, message_id: str, dialect: Dialect) -> dict[str, Any]:
    for message in (chosen or {}).get("errorMessages") or []:
        if isinstance(message, dict) and message.get("id") == message_id:
            return message
    return dialect.message(message_id) if message_id in ERROR_CATALOG else {
        "id": message_id, "code": 500, "status": "Internal Server Error", "detailHeader": "", "responseBody": ""}


def title(message_id: str) -> str:
    """``ERR_403_DEVELOPER_OVER_QPS`` -> ``Developer Over Qps``."""
    words = message_id.split("_")[2:]
    return " ".join(w.capitalize() for w in words) or message_id


def render(refused: Refused, service: dict[str, Any] | None, endpoint: dict[str, Any] | None, call: Call,
           dialect: Dialect) -> Answer:
    chosen = error_set(service, endpoint)
    message = message_of(chosen, refused.message_id, dialect)
    kind = str((chosen or {}).get("type") or "text/xml")
    body = str(message.get("responseBody") or "")
    if not body:
        body = (json.dumps({"errorCode": refused.message_id, "errorMessage": message.get("status") or title(refused.message_id)})
                if "json" in kind else f"<h1>{title(refused.message_id)}</h1>")
    code = message.get("code")
    if not isinstance(code, int):
        code = ERROR_CATALOG.get(refused.message_id, (500, ""))[0]
    headers = [(dialect.error_code_header, refused.message_id)]
    if message.get("detailHeader"):
        headers.append((DETAIL_HEADER, str(message["detailHeader"])))
    headers += refused.headers
    parameter = str((endpoint or {}).get("jsonpCallbackParameter") or "")
    if (chosen or {}).get("jsonp") is True and parameter and parameter in call.params:
        callback = (call.params.get(parameter) or str((endpoint or {}).get("jsonpCallbackParameterValue") or "")
                    or str((chosen or {}).get("jsonpType") or "callback"))
        if not CALLBACK.fullmatch(callback):
            return Answer(400, [("Content-Type", "text/plain")],
                          f"the {parameter} parameter must name a JavaScript function (such as app.onError)".encode())
        headers.append(("Content-Type", "application/javascript"))
        return Answer(200, headers, f"{callback}({body})".encode())
    headers.append(("Content-Type", kind))
    status = str(message.get("status") or "")
    return Answer(code, headers, body.encode(), reason=status if usable(status) else "")
