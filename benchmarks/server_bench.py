"""Benchmark of the reference server: load a large area, then read it back page by page.

Builds ``--services`` services with ``--endpoints`` endpoints each through the real HTTP API
(one nested ``POST /services`` per service, in-process over the ASGI app) into a temporary
database. Then it starts ``apimctl serve`` on that database as a separate process on
127.0.0.1 and times ``GET /services?limit=1000&offset=K&fields=...,endpoints.*`` for every
page, reporting the server process's peak resident memory (``VmHWM``, Linux) as well.
Run: ``python benchmarks/server_bench.py [--services 1000] [--endpoints 10]``.
It prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import httpx

from apimctl.server import ServerConfig, create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

FIELDS = (
    "id,name,version,description,revisionNumber,updated,qpsLimitOverall,rfc3986Encode,cache,"
    "securityProfile,roles,errorSets.*,endpoints.*,endpoints.methods.*,"
    "endpoints.methods.responseFilters.*,endpoints.cors.*,endpoints.cache.*,endpoints.processor.*,"
    "endpoints.systemDomainAuthentication.*,endpoints.errorSet"
)
PAGE = 1000


def service_body(i: int, endpoints: int) -> dict[str, Any]:
    return {
        "name": f"Service {i:05d}",
        "version": "1",
        "description": f"Benchmark service {i}",
        "endpoints": [
            {
                "name": f"Endpoint {j}",
                "requestPathAlias": f"/s{i}/e{j}",
                "trafficManagerDomain": "api.example.com",
                "publicDomains": [{"address": "api.example.com"}],
                "systemDomains": [{"address": "backend.example.net"}],
                "supportedHttpMethods": ["get", "post"],
                "cors": {"allDomainsEnabled": False, "domainsAllowed": ["https://app.example.com"], "maxAge": 60},
                "methods": [{"name": "read"}],
            }
            for j in range(endpoints)
        ],
    }


def load(db: str, services: int, endpoints: int) -> float:
    """Create the area through nested POSTs (in-process); answers the seconds it took."""
    config = ServerConfig(db_path=db, tokens={"bench": "bench"}, auto_approve_domains=True)
    app = create_app(config)
    with TestClient(app, headers={"Authorization": "Bearer bench"}) as http:
        for domain in ("example.com", "example.net"):
            http.post("/v3/rest/domains", json={"domain": domain}).raise_for_status()
        started = time.perf_counter()
        for i in range(services):
            http.post("/v3/rest/services", json=service_body(i, endpoints)).raise_for_status()
        seconds = time.perf_counter() - started
    app.state.server.store.close()
    return seconds


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def peak_rss_mb(pid: int) -> float | None:
    """Peak resident memory of a process (Linux ``/proc``); None elsewhere."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def read_pages(db: str, services: int) -> None:
    port = free_port()
    cmd = [sys.executable, "-m", "apimctl", "serve", "--port", str(port), "--db", db,
           "--token", "bench=bench"]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        base = f"http://127.0.0.1:{port}/v3/rest"
        headers = {"Authorization": "Bearer bench"}
        with httpx.Client(base_url=base, headers=headers, timeout=120) as http:
            deadline = time.monotonic() + 20
            while True:
                try:
                    http.head("/services")
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            idle = peak_rss_mb(server.pid)
            timings, size, count = [], 0, 0
            for k in range((services + PAGE - 1) // PAGE):
                started = time.perf_counter()
                resp = http.get("/services", params={"limit": PAGE, "offset": k * PAGE, "fields": FIELDS})
                resp.raise_for_status()
                timings.append(time.perf_counter() - started)
                size += len(resp.content)
                count += sum(len(s["endpoints"]) for s in resp.json())
            peak = peak_rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"pages of {PAGE} (endpoints.*) : {len(timings)} pages, best {min(timings):.3f} s, "
          f"worst {max(timings):.3f} s, total {sum(timings):.2f} s")
    print(f"response                    : {size / 1e6:.1f} MB in all, {count} endpoints")
    if peak is not None:
        print(f"server peak memory (VmHWM)  : {peak:.0f} MB (after start-up: {idle:.0f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=1000)
    parser.add_argument("--endpoints", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.db")
        seconds = load(db, args.services, args.endpoints)
        print(f"services x endpoints        : {args.services} x {args.endpoints}")
        print(f"load (nested POSTs)         : {seconds:.2f} s total, "
              f"{1000 * seconds / max(1, args.services):.1f} ms per service")
        read_pages(db, args.services)


if __name__ == "__main__":
    main()
