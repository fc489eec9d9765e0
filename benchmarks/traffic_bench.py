"""Calls per second through the traffic emulator, and `apimctl test` of 1,000 calls.

1. The traffic manager of the reference server (in this process) handles calls with every
   step on (route, transport, maintenance, key in a header, method entitlement, QPS and rate
   limits with a ceiling high enough not to refuse, CORS, forward with forwarded and
   returned headers), calls handed to it directly, one after the other:
   a. to an in-process stub back end (the emulator's own cost);
   b. over HTTP to a local back end (uvicorn on 127.0.0.1, in a process of its own). The
      endpoint's system domain is ``127.0.0.1:PORT`` where the server accepts an address with
      a port (SUPPLEMENT §10.10.2), else ``localhost`` mapped to the port by the back-end
      transport (as ``apimctl test`` does for a back end with a ``url``);
   c. as b, through the traffic listener (uvicorn in a process of its own on the same
      database, one keep-alive client in another). The rate of that back end alone (the same client) is printed for
      comparison.
2. ``apimctl test`` of a file with 1,000 calls (a stub back end, 8 calls a virtual second)
   against the weather example applied to the embedded area: wall and CPU time (goal: under
   5 s), process start and the apply included.

    python benchmarks/traffic_bench.py                 # 5,000 calls
    python benchmarks/traffic_bench.py --calls 1000
Numbers are printed, not asserted. CPU seconds are printed beside wall time: on a loaded
machine the wall time says more about the neighbours than about the emulator.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from apimctl.calltests.backends import BackendTransport, Stub
from apimctl.server import ServerConfig, create_app
from apimctl.server.traffic import create_traffic_app
from apimctl.server.traffic.model import Call

HOST = "api.example.com"
KEY = "bench-key-0123456789"


BACKEND = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
async def answer(request):
    return Response(b'{"ok": true}', media_type="application/json")
uvicorn.run(Starlette(routes=[Route("/{path:path}", answer)]), host="127.0.0.1", port=int(sys.argv[1]),
            log_level="warning", access_log=False)
"""


LISTENER = """
import sys, uvicorn
from apimctl.calltests.backends import BackendTransport, Stub
from apimctl.server import ServerConfig, create_app
from apimctl.server.traffic import create_traffic_app
app = create_app(ServerConfig(db_path=sys.argv[1], tokens={"t": "a"}))
transport = BackendTransport([Stub("localhost", url=sys.argv[2])])
uvicorn.run(create_traffic_app(app, transport=transport), host="127.0.0.1", port=int(sys.argv[3]),
            log_level="warning", access_log=False)
"""


@contextmanager
def listener_process(db: str, backend: str) -> Iterator[int]:
    """The traffic listener of the database ``db`` (uvicorn, a process of its own), its back
    end mapped as in this process."""
    with _process(LISTENER, db, backend) as port:
        yield port


@contextmanager
def backend_process() -> Iterator[int]:
    """A back end on 127.0.0.1 in a process of its own (uvicorn in a thread of a process that
    also runs the client answers a few dozen calls a second: keep servers in processes)."""
    with _process(BACKEND) as port:
        yield port


@contextmanager
def _process(script: str, *args: str) -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    process = subprocess.Popen([sys.executable, "-c", script, *args, str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", headers={"Host": HOST}, timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


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


def _rates(calls: int, wall: float, cpu: float) -> str:
    return f"{calls / wall:,.0f} calls/s ({calls / cpu:,.0f} per CPU second)"


async def direct(manager: Any, calls: int) -> str:
    answer, _ = await manager.handle(_call())
    assert answer.status == 200, (answer.status, answer.body)
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        answer, _ = await manager.handle(_call())
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert answer.status == 200
    await manager.aclose()
    return _rates(calls, wall, cpu)


CLIENT = """
import json, sys, time, httpx
url, path, calls, headers = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
with httpx.Client(base_url=url) as client:
    assert client.get(path, headers=headers).status_code == 200
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        response = client.get(path, headers=headers)
    assert response.status_code == 200, response.status_code
    print(json.dumps([time.perf_counter() - started, time.process_time() - cpu]))
"""


def over_http(url: str, calls: int, path: str = "/v1/forecast?m=daily") -> str:
    """Calls from a client in a process of its own (the server under test keeps this one)."""
    headers = {"Host": HOST, "X-Key": KEY, "Origin": "https://app.example.com"}
    done = subprocess.run([sys.executable, "-c", CLIENT, url, path, str(calls), json.dumps(headers)],
                          capture_output=True, text=True, check=True)
    wall, _ = json.loads(done.stdout)
    return f"{calls / wall:,.0f} calls/s"


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


def apimctl_test(root: Path) -> tuple[float, float, str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "many.test.yaml"
        path.write_text(TEST_FILE)
        started = time.perf_counter()
        before = os.times()
        done = subprocess.run([sys.executable, "-m", "apimctl", "test", str(path), "--manifests",
                               str(root / "examples" / "weather"), "--format", "json"],
                              capture_output=True, text=True, check=False)
        after = os.times()
        elapsed = time.perf_counter() - started
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return elapsed, cpu, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    from starlette.testclient import TestClient

    with tempfile.TemporaryDirectory() as folder, backend_process() as port:
        backend = f"http://127.0.0.1:{port}"
        print(f"the back end alone (one client): {over_http(backend, args.calls, '/')}")
        app = create_app(ServerConfig(db_path=str(Path(folder) / "s.db"), tokens={"t": "a"}, auto_approve_domains=True))
        with TestClient(app, base_url="http://testserver/v3/rest", headers={"Authorization": "Bearer t"}) as api:
            address = populate(api, port)
        print(f"system domain: {address}" + ("" if ":" in address else f" (mapped to 127.0.0.1:{port})"))
        stub = BackendTransport([Stub(address.lower(), body=b'{"ok": true}')])
        rate = asyncio.run(direct(create_traffic_app(app, transport=stub).manager, args.calls))
        print(f"emulator, every step on, stub back end in-process: {rate}")
        mapped = BackendTransport([Stub("localhost", url=backend)])
        rate = asyncio.run(direct(create_traffic_app(app, transport=mapped).manager, args.calls))
        print(f"emulator, every step on, forwarded over HTTP: {rate}")
        with listener_process(str(Path(folder) / "s.db"), backend) as traffic_port:
            rate = over_http(f"http://127.0.0.1:{traffic_port}", args.calls)
        print(f"through the traffic listener (uvicorn, one client), forwarded over HTTP: {rate}")
        app.state.server.store.close()
    elapsed, cpu, summary = apimctl_test(Path(__file__).resolve().parents[1])
    print(f"apimctl test, 1,000 calls (process start and apply included): {elapsed:.2f} s, "
          f"{cpu:.2f} CPU s ({summary})")


if __name__ == "__main__":
    main()
