"""Calls per second through the traffic emulator, and `apimctl test` of 1,000 calls.

Three processes, as a deployment has them: the local back end (a minimal keep-alive HTTP/1.1
server on 127.0.0.1 answering a fixed JSON body), the emulator (``apimctl serve
--traffic-port``, its management API populated over HTTP) and the load generator (a few
keep-alive connections, each sending its next call when the last one is answered). Every
step is on: route, transport, maintenance, key in a header, method entitlement, QPS and rate
limits with a ceiling high enough not to refuse, CORS (an allowed origin), forward with
forwarded and returned headers. Printed per path:

calls/s of wall time and calls per CPU second of the emulator process (its user and system
time from ``/proc``, read just before and after the calls: the "one core" measure), as the
range over a few rounds, for:

- the back end alone, from the same load generator (what the hop costs at most);
1. the listener path: the load generator -> ``apimctl serve --traffic-port`` -> the back end;
2. the in-process path: calls handed to the traffic manager in this process, as many at a
   time as there are connections, forwarded over HTTP to the same back end (this process's
   CPU time), and the same with an in-process stub back end (the emulator's steps alone);
3. ``apimctl test`` of a file with 1,000 calls (a stub back end, 8 calls a virtual second)
   against the weather example applied to the embedded area: wall and CPU time (goal: under
   5 s), process start and the apply included.

    python benchmarks/traffic_bench.py                 # 3 rounds of 5,000 calls, 8 connections
    python benchmarks/traffic_bench.py --calls 2000 --connections 4 --rounds 5
Numbers are printed, not asserted. On a shared, loaded machine the wall time says more about
the neighbours than about the emulator: read the CPU seconds.
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

from apimctl import kinds
from apimctl.calltests.backends import BackendTransport, Stub
from apimctl.kinds.dialects import dialect_of, translate
from apimctl.server import ServerConfig, create_app
from apimctl.server.traffic import create_traffic_app
from apimctl.server.traffic.model import Call

HOST = "api.example.com"
KEY = "bench-key-0123456789"
ORIGIN = "https://app.example.com"
PATH = "/v1/forecast?m=daily"

BACKEND = r"""
import asyncio, sys
try:
    import uvloop
except ImportError:
    uvloop = None
BODY = b'{"ok": true}'
ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY)) + BODY

class Answerer(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport, self.buffer = transport, b""

    def data_received(self, data):
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head, length = self.buffer[:end].lower(), 0
            at = head.find(b"\r\ncontent-length:")
            if at >= 0:
                stop = head.find(b"\r\n", at + 2)
                length = int(head[at + 17:stop if stop >= 0 else len(head)])
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length:]
            self.transport.write(ANSWER)

async def main(port):
    server = await asyncio.get_running_loop().create_server(Answerer, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()

(uvloop.run if uvloop else asyncio.run)(main(int(sys.argv[1])))
"""

LOAD = r"""
import asyncio, json, sys, time
try:
    import uvloop
except ImportError:
    uvloop = None
port, calls, connections, request = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].encode()

async def exchange(reader, writer):
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    low = head.lower()
    at = low.find(b"\r\ncontent-length:")
    await reader.readexactly(int(low[at + 17:low.find(b"\r\n", at + 2)]))
    return int(head[9:12])

async def client(count, go, statuses):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    statuses.append(await exchange(reader, writer))  # warm up, outside the measure
    await go.wait()
    for _ in range(count):
        statuses.append(await exchange(reader, writer))
    writer.close()

async def main():
    go, statuses = asyncio.Event(), []
    shares = [calls // connections + (i < calls % connections) for i in range(connections)]
    tasks = [asyncio.create_task(client(share, go, statuses)) for share in shares]
    while len(statuses) < connections:
        await asyncio.sleep(0.01)
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    started = time.perf_counter()
    go.set()
    await asyncio.gather(*tasks)
    print(json.dumps({"wall": time.perf_counter() - started,
                      "refused": sum(1 for s in statuses if s != 200)}), flush=True)

(uvloop.run if uvloop else asyncio.run)(main())
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User and system time of process ``pid`` (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(port: int, process: subprocess.Popen[Any]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on port {port}") from None
            time.sleep(0.1)


@contextmanager
def process(args: list[str], port: int) -> Iterator[subprocess.Popen[Any]]:
    child = subprocess.Popen(args, stderr=subprocess.DEVNULL)
    try:
        wait_for(port, child)
        yield child
    finally:
        child.terminate()
        child.wait(timeout=10)


def load(port: int, calls: int, connections: int, host: str, path: str, measured: int | None) -> tuple[float, float | None]:
    """Wall seconds of ``calls`` calls on ``connections`` keep-alive connections to ``port``,
    and the CPU seconds process ``measured`` spent meanwhile."""
    request = (f"GET {path} HTTP/1.1\r\nHost: {host}\r\nX-Key: {KEY}\r\nOrigin: {ORIGIN}\r\n"
               "Accept: */*\r\nUser-Agent: traffic-bench\r\n\r\n")
    generator = subprocess.Popen([sys.executable, "-c", LOAD, str(port), str(calls), str(connections), request],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert generator.stdin is not None and generator.stdout is not None
    if generator.stdout.readline().strip() != "ready":
        raise RuntimeError("the load generator did not start")
    before = cpu_seconds(measured) if measured else 0.0
    generator.stdin.write("go\n")
    generator.stdin.flush()
    result = json.loads(generator.stdout.readline())
    cpu = cpu_seconds(measured) - before if measured else None
    generator.wait()
    if result["refused"]:
        raise RuntimeError(f"{result['refused']} calls were not answered 200")
    return float(result["wall"]), cpu


def _one(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.json()
    return body[0] if isinstance(body, list) else body  # type: ignore[no-any-return]


def populate(api: httpx.Client, address: str, dialect: str) -> None:
    """The area of the benchmark, its system domain ``address``, in the ``dialect``'s
    vocabulary."""
    for domain in ("example.com", "127.0.0.1"):
        _one(api.post("/domains", json={"domain": domain}))
    endpoint = {"name": "Forecast", "requestPathAlias": "/v1/forecast", "trafficManagerDomain": HOST,
                "publicDomains": [{"address": HOST}], "supportedHttpMethods": ["get"],
                "outboundTransportProtocol": "http", "apiKeyValueLocations": ["request-header"],
                "apiKeyValueLocationKey": "X-Key", "apiMethodDetectionLocations": ["request-parameters"],
                "apiMethodDetectionKey": "m", "methods": [{"name": "daily"}],
                "forwardedHeaders": ["svc-host", "svc-message-id"], "returnedHeaders": ["svc-message-id"],
                "cors": {"domainsAllowed": [ORIGIN], "headersExposed": ["X-Svc-Message-ID"]},
                "systemDomains": [{"address": address}]}
    translate(kinds.ENDPOINT, endpoint, dialect_of(dialect))
    created = _one(api.post("/services", json={"name": "Weather", "endpoints": [endpoint]}))
    service = _one(api.get(f"/services/{created['id']}", params={"fields": "id,endpoints.id,endpoints.methods.id"}))
    ep = service["endpoints"][0]
    package = _one(api.post("/packages", json={"name": "P", "plans": [{
        "name": "Gold", "qpsLimitCeiling": 1_000_000, "rateLimitCeiling": 100_000_000, "rateLimitPeriod": "day",
        "services": [{"id": service["id"], "endpoints": [{"id": ep["id"], "methods": [{"id": ep["methods"][0]["id"]}]}]}]}]}))
    package = _one(api.get(f"/packages/{package['id']}", params={"fields": "id,plans.id"}))
    _one(api.post("/members", json={"username": "b", "email": "b@example.com", "displayName": "B", "externalId": "b",
                                    "passwdNew": "pw-bench-123", "applications": [{"name": "A", "username": "b",
                                    "packageKeys": [{"apikey": KEY, "package": {"id": package["id"]},
                                                     "plan": {"id": package["plans"][0]["id"]}}]}]}))


def _call() -> Call:
    return Call("GET", "http", HOST, "/v1/forecast", [("m", "daily")],
                [("Host", HOST), ("X-Key", KEY), ("Origin", ORIGIN), ("Accept", "*/*")], b"", time.time())


async def direct(manager: Any, calls: int, concurrency: int) -> tuple[float, float]:
    """Wall and CPU seconds of ``calls`` calls handed to ``manager``, ``concurrency`` at a time."""
    async def worker(count: int) -> None:
        for _ in range(count):
            answer, _ = await manager.handle(_call())
            assert answer.status == 200, (answer.status, answer.body)

    await asyncio.gather(*(worker(1) for _ in range(concurrency)))  # connections opened
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker(calls // concurrency + (i < calls % concurrency)) for i in range(concurrency)))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    await manager.aclose()
    return wall, cpu


def rates(calls: int, wall: float, cpu: float | None) -> str:
    shown = f"{calls / wall:,.0f} calls/s"
    return shown + (f" ({calls / cpu:,.0f} per CPU second of the emulator)" if cpu else "")


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


def spread(label: str, calls: int, runs: list[tuple[float, float | None]]) -> str:
    """One line per measure: the range over the rounds of calls/s and calls per CPU second."""
    walls = sorted(calls / wall for wall, _ in runs)
    cpus = sorted(calls / cpu for _, cpu in runs if cpu)
    shown = f"{label}: {walls[0]:,.0f}-{walls[-1]:,.0f} calls/s"
    return shown + (f", {cpus[0]:,.0f}-{cpus[-1]:,.0f} per CPU second of the emulator" if cpus else "")


def installed(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5000, help="calls per round")
    parser.add_argument("--connections", type=int, default=8, help="keep-alive connections of the load generator")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each measure (ranges are printed)")
    parser.add_argument("--dialect", choices=("spec", "mashery"), default="spec",
                        help="the dialect of the emulator's area (apimctl serve --dialect)")
    args = parser.parse_args()
    calls, connections, rounds = args.calls, args.connections, range(args.rounds)
    parts = [name for name in ("httptools", "uvloop") if installed(name)]
    print(f"{calls:,} calls a round, {args.rounds} rounds, {connections} keep-alive connections, "
          f"dialect {args.dialect}, every step on "
          f"(the listener on {' and '.join(parts) if parts else 'h11 and asyncio'})")
    backend_port, api_port, traffic_port = free_port(), free_port(), free_port()
    with tempfile.TemporaryDirectory() as folder, \
            process([sys.executable, "-c", BACKEND, str(backend_port)], backend_port) as backend:
        address = f"127.0.0.1:{backend_port}"
        runs = [load(backend_port, calls, connections, address, PATH, backend.pid) for _ in rounds]
        print(spread("the back end alone", calls, [(wall, None) for wall, _ in runs]))
        db = str(Path(folder) / "s.db")
        serve = [sys.executable, "-m", "apimctl", "serve", "--db", db, "--port", str(api_port), "--token", "t=a",
                 "--auto-approve-domains", "--traffic-port", str(traffic_port), "--dialect", args.dialect]
        with process(serve, api_port) as emulator:
            with httpx.Client(base_url=f"http://127.0.0.1:{api_port}/v3/rest",
                              headers={"Authorization": "Bearer t"}) as api:
                populate(api, address, args.dialect)
            load(traffic_port, 200, connections, HOST, PATH, None)  # warm up
            runs = [load(traffic_port, calls, connections, HOST, PATH, emulator.pid) for _ in rounds]
        for wall, cpu in runs:
            print(f"   round: {rates(calls, wall, cpu)}")
        print(spread("1. through the traffic listener (apimctl serve --traffic-port), forwarded over HTTP", calls, runs))
        app = create_app(ServerConfig(db_path=db, tokens={"t": "a"}, dialect=args.dialect))
        runs = [asyncio.run(direct(create_traffic_app(app).manager, calls, connections)) for _ in rounds]
        print(spread("2. in-process, forwarded over HTTP", calls, runs))
        stub = BackendTransport([Stub(address, body=b'{"ok": true}')])
        runs = [asyncio.run(direct(create_traffic_app(app, transport=stub).manager, calls, connections))
                for _ in rounds]
        print(spread("   in-process, stub back end (the steps alone)", calls, runs))
        app.state.server.store.close()
    elapsed, cpu, summary = apimctl_test(Path(__file__).resolve().parents[1])
    print(f"3. apimctl test, 1,000 calls (process start and apply included): {elapsed:.2f} s, {cpu:.2f} CPU s "
          f"({summary})")


if __name__ == "__main__":
    main()
