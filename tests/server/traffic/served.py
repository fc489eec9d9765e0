"""``apimctl serve --traffic-port`` in a subprocess, an area built through its management API,
a back end on 127.0.0.1 that answers what it received as it came (the raw path and query),
and a client that writes request lines as they are (``..``, ``%2e``, ``%00``, CR/LF and bytes
no HTTP client would send).

Two areas: ``first`` (token ``first-token``) holds the service of :func:`_populate`; the
token ``second-token`` names the area ``another`` (before ``first`` in the areas' order),
empty, for tests of what one area may take from the other.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from receiver import serve_in_thread
from starlette.types import Receive, Scope, Send

HOST = "api.example.com"
FIRST, SECOND, OPERATOR = "first-token", "second-token", "operator-token"


@dataclass
class Seen:
    """What the back end received, in order: (raw path, raw query)."""

    calls: list[tuple[str, str]] = field(default_factory=list)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        raw = (scope["raw_path"].decode("latin-1"), scope["query_string"].decode("latin-1"))
        self.calls.append(raw)
        body = json.dumps({"path": raw[0], "query": raw[1]}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


@dataclass
class Reply:
    status: int
    reason: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Served:
    dialect: str
    api: str
    traffic_port: int
    seen: Seen
    keys: dict[str, str]
    log_file: Path

    def raw(self, target: str | bytes, *, host: str = HOST, headers: bytes = b"") -> Reply:
        """One request, its request line and headers written as given (``Connection: close``)."""
        line = target if isinstance(target, bytes) else target.encode("latin-1")
        request = b"GET " + line + b" HTTP/1.1\r\nHost: " + host.encode() + b"\r\n" + headers + \
            b"Connection: close\r\n\r\n"
        with socket.create_connection(("127.0.0.1", self.traffic_port), timeout=10) as sock:
            sock.sendall(request)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        _, code, reason = [*status_line.split(" ", 2), ""][:3]
        fields = {n.strip().lower(): v.strip() for n, _, v in (h.partition(":") for h in lines)}
        return Reply(int(code), reason, fields, body)

    def manage(self, method: str, path: str, token: str = FIRST, **kwargs: Any) -> httpx.Response:
        return httpx.request(method, f"{self.api}/v3/rest{path}", headers={"Authorization": f"Bearer {token}"},
                             timeout=10, **kwargs)

    def traffic_log(self) -> list[dict[str, Any]]:
        answer = httpx.get(f"{self.api}/operator/traffic", headers={"Authorization": f"Bearer {OPERATOR}"})
        assert answer.status_code == 200, answer.text
        return answer.json()  # type: ignore[no-any-return]

    def server_log(self) -> str:
        return self.log_file.read_text("utf-8", "replace")


def _one(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.json()
    return body[0] if isinstance(body, list) else body  # type: ignore[no-any-return]


def endpoint(name: str, alias: str, backend: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "requestPathAlias": alias, "supportedHttpMethods": ["get"], "trafficManagerDomain": HOST,
            "publicDomains": [{"address": HOST}], "systemDomains": [{"address": backend}],
            "outboundTransportProtocol": "http", **extra}


def _populate(served: Served, backend: str) -> None:
    for domain in ("example.com", "127.0.0.1"):
        _one(served.manage("POST", "/domains", json={"domain": domain}))
    errors = [{"name": "Plain", "type": "text/plain", "errorMessages": [
        {"id": "ERR_403_NOT_AUTHORIZED", "code": 403, "status": "Key Please", "responseBody": "no key"}]},
        {"name": "JSONP", "type": "application/json", "jsonp": True, "jsonpType": "cb"}]
    service = _one(served.manage("POST", "/services", json={"name": "Weather", "errorSets": errors}))
    sets = {s["name"]: s["id"] for s in service.get("errorSets") or _one(served.manage(
        "GET", f"/services/{service['id']}", params={"fields": "errorSets"}))["errorSets"]}
    eps = [endpoint("Forecast", "/v2/forecast", backend, errorSet={"id": sets["Plain"]}),
           endpoint("Other", "/other", backend),
           endpoint("Open", "/p", backend, allowMissingApiKey=True),
           endpoint("Path Key", "/pk", backend, apiKeyValueLocations=["request-path"], apiKeyValueLocationKey="2"),
           endpoint("Jsonp", "/jsonp", backend, jsonpCallbackParameter="callback", errorSet={"id": sets["JSONP"]})]
    for ep in eps:
        _one(served.manage("POST", f"/services/{service['id']}/endpoints", json=ep))
    service = _one(served.manage("GET", f"/services/{service['id']}", params={"fields": "id,endpoints"}))
    ids = {e["name"]: e["id"] for e in service["endpoints"]}

    def plan(name: str, names: list[str]) -> dict[str, Any]:
        return {"name": name, "services": [{"id": service["id"], "endpoints": [{"id": ids[n]} for n in names]}]}

    package = _one(served.manage("POST", "/packages", json={"name": "P", "plans": [
        plan("All", list(ids)), plan("Basic", ["Other", "Open", "Path Key"])]}))
    package = _one(served.manage("GET", f"/packages/{package['id']}", params={"fields": "id,plans"}))
    plans = {p["name"]: p["id"] for p in package["plans"]}
    keys = {"all": "all-key-0123456789", "basic": "basic-key-0123456789", "noapikey": "noapikey"}
    _one(served.manage("POST", "/members", json={
        "username": "u", "email": "u@example.com", "displayName": "U", "externalId": "u", "passwdNew": "pw-u-1234567",
        "applications": [{"name": "A", "username": "u", "packageKeys": [
            {"apikey": value, "package": {"id": package["id"]}, "plan": {"id": plans["Basic" if n == "basic" else "All"]}}
            for n, value in keys.items()]}]}))
    served.keys.update(keys)


@contextmanager
def serve(tmp: Path, dialect: str) -> Iterator[Served]:
    seen = Seen()
    log_file = tmp / "serve.log"
    with serve_in_thread(seen) as backend_url, log_file.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "apimctl", "serve", "--port", "0", "--traffic-port", "0", "--db", str(tmp / "s.db"),
             "--dialect", dialect, "--auto-approve-domains", "--operator-token", OPERATOR,
             "--token", f"{FIRST}=first", "--token", f"{SECOND}=another"], stderr=log)
        try:
            deadline = time.monotonic() + 30
            while not (found := re.search(r"traffic manager on http://127\.0\.0\.1:(\d+)", log_file.read_text())):
                assert process.poll() is None and time.monotonic() < deadline, log_file.read_text()
                time.sleep(0.05)
            api = re.search(r"(http://127\.0\.0\.1:\d+)/v3/rest", log_file.read_text())
            assert api is not None
            served = Served(dialect, api.group(1), int(found.group(1)), seen, {}, log_file)
            _populate(served, backend_url.removeprefix("http://"))
            yield served
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=15)
