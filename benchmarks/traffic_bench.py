"""Calls per second through the traffic emulator, and `apimctl test` of 1,000 calls.

1. The traffic manager of the reference server (in this process) handles calls with every
   step on (route, transport, maintenance, key in a header, method entitlement, QPS and rate
   limits with a ceiling high enough not to refuse, CORS, forward with forwarded and
   returned headers) and forwards each over HTTP to a local back end (uvicorn on 127.0.0.1,
   in a thread of this process). The endpoint's system domain is ``127.0.0.1:PORT`` where the
   server accepts an address with a port (SUPPLEMENT §10.10.2), else ``localhost`` mapped to
   the port by the back-end transport (as ``apimctl test`` does for a back end with a
   ``url``). Printed: calls per second of the emulator alone (calls handed to it directly),
   and through its HTTP listener (uvicorn, a real socket, one keep-alive client).
2. ``apimctl test`` of a file with 1,000 calls (``repeat: 1000``, a stub back end) against
   manifests applied to the embedded area: wall time (goal: under 5 s).

    python benchmarks/traffic_bench.py                 # 5,000 calls
    python benchmarks/traffic_bench.py --calls 1000
Numbers are printed, not asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from apimctl.calltests.backends import BackendTransport, Stub
from apimctl.server import ServerConfig, create_app
from apimctl.server.traffic import create_traffic_app
from apimctl.server.traffic.model import Call

HOST = "api.example.com"
KEY = "bench-key-0123456789"


@contextmanager
def serve(app: Any) -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield int(sock.getsockname()[1])
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


async def _backend(request: Request) -> Response:
    return Response(b'{"ok": true}', media_type="application/json")


def _one(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.json()
    return body[0] if isinstance(body, list) else body  # type: ignore[no-any-return]


def populate(api: httpx.Client, port: int) -> str:
    """The area of the benchmark; answers the system domain used."""
    for domain in ("example.com", "localhost", "127.0.0.1"):
        _one(api.post("/domains", json={"domain": domain}))
    endpoint = {"name": "Forecast", "requestPathAlias": "/v1/forecast", "trafficManagerDomain": HOST,
                "publicDomains": [{"address": HOST}], "supportedHttpMethods": ["get"],
                "outboundTransportProtocol": "http", "apiKeyValueLocations": ["request-header"],
                "apiKeyValueLocationKey": "X-Key", "apiMethodDetectionLocations": ["request-parameters"],
                "apiMethodDetectionKey": "m", "methods": [{"name": "daily"}],
                "forwardedHeaders": ["svc-host", "svc-message-id"], "returnedHeaders": ["svc-message-id"],
                "cors": {"domainsAllowed": ["https://app.example.com"], "headersExposed": ["X-Svc-Message-ID"]}}
    address = f"127.0.0.1:{port}"
    created = api.post("/services", json={"name": "Weather", "endpoints": [{**endpoint,
                                                                           "systemDomains": [{"address": address}]}]})
    if created.status_code == 400:
        address = "localhost"
        created = api.post("/services", json={"name": "Weather", "endpoints": [{**endpoint,
                                                                               "systemDomains": [{"address": address}]}]})
    service = _one(api.get(f"/services/{_one(created)['id']}", params={"fields": "id,endpoints.*"}))
    ep = service["endpoints"][0]
    package = _one(api.post("/packages", json={"name": "P", "plans": [{
        "name": "Gold", "qpsLimitCeiling": 1_000_000, "rateLimitCeiling": 100_000_000, "rateLimitPeriod": "day",
        "services": [{"id": service["id"], "endpoints": [{"id": ep["id"], "methods": [{"id": ep["methods"][0]["id"]}]}]}]}]}))
    package = _one(api.get(f"/packages/{package['id']}", params={"fields": "id,plans"}))
    _one(api.post("/members", json={"username": "b", "email": "b@example.com", "displayName": "B", "externalId": "b",
                                    "passwdNew": "pw-bench-123", "applications": [{"name": "A", "username": "b",
                                    "packageKeys": [{"apikey": KEY, "package": {"id": package["id"]},
                                                     "plan": {"id": package["plans"][0]["id"]}}]}]}))
    return address


def _call() -> Call:
    return Call("GET", "http", HOST, "/v1/forecast", [("m", "daily")],
                [("Host", HOST), ("X-Key", KEY), ("Origin", "https://app.example.com")], b"", time.time())


async def direct(manager: Any, calls: int) -> float:
    answer, _ = await manager.handle(_call())
    assert answer.status == 200, (answer.status, answer.body)
    started = time.perf_counter()
    for _ in range(calls):
        answer, _ = await manager.handle(_call())
    elapsed = time.perf_counter() - started
    assert answer.status == 200
    await manager.aclose()
    return calls / elapsed


def over_http(port: int, calls: int) -> float:
    headers = {"Host": HOST, "X-Key": KEY, "Origin": "https://app.example.com"}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        assert client.get("/v1/forecast?m=daily", headers=headers).status_code == 200
        started = time.perf_counter()
        for _ in range(calls):
            response = client.get("/v1/forecast?m=daily", headers=headers)
        elapsed = time.perf_counter() - started
        assert response.status_code == 200
    return calls / elapsed


TEST_FILE = """
consumers: [{name: c, package: Weather Partners, plan: Gold}]
backends: [{address: backend.example.net, body: {ok: true}}]
calls:
""" + "".join(f"""  - name: call {i}
    url: https://api.example.com/v2/forecast
    key: c
    after: 0.125
    expect: {{status: 200, body: {{json: {{$.ok: true}}}}}}
""" for i in range(1000))


def apimctl_test(root: Path) -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "many.test.yaml"
        path.write_text(TEST_FILE)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "apimctl", "test", str(path), "--manifests",
                               str(root / "examples" / "weather"), "--format", "json"],
                              capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - started
    return elapsed, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    backend = Starlette(routes=[Route("/{path:path}", _backend)])
    with tempfile.TemporaryDirectory() as folder, serve(backend) as port:
        app = create_app(ServerConfig(db_path=str(Path(folder) / "s.db"), tokens={"t": "a"}, auto_approve_domains=True))
        from starlette.testclient import TestClient

        with TestClient(app, base_url="http://testserver/v3/rest", headers={"Authorization": "Bearer t"}) as api:
            address = populate(api, port)
        transport = BackendTransport([Stub("localhost", url=f"http://127.0.0.1:{port}")])
        print(f"system domain: {address}" + ("" if ":" in address else f" (mapped to 127.0.0.1:{port})"))
        rate = asyncio.run(direct(create_traffic_app(app, transport=transport).manager, args.calls))
        print(f"emulator, calls handed to it directly: {rate:,.0f} calls/s ({args.calls:,} calls, every step on, "
              "forwarded over HTTP)")
        with serve(create_traffic_app(app, transport=BackendTransport(
                [Stub("localhost", url=f"http://127.0.0.1:{port}")]))) as traffic_port:
            rate = over_http(traffic_port, args.calls)
        print(f"through the traffic listener (uvicorn, one client): {rate:,.0f} calls/s")
        app.state.server.store.close()
    elapsed, summary = apimctl_test(Path(__file__).resolve().parents[1])
    print(f"apimctl test, 1,000 calls (manifests applied first, process start included): {elapsed:.2f} s ({summary})")


if __name__ == "__main__":
    main()
