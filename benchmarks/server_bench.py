"""Benchmark of the reference server: load a large area, then read it back in one call.

Builds ``--services`` services with ``--endpoints`` endpoints each through the real HTTP API
(one nested ``POST /services`` per service, in-process over the ASGI app) into a temporary
database, then times ``GET /services?limit=1000&fields=...,endpoints.*`` and prints the
figures. Run: ``python benchmarks/server_bench.py [--services 1000] [--endpoints 10]``.
It prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=1000)
    parser.add_argument("--endpoints", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = ServerConfig(db_path=str(Path(tmp) / "bench.db"), tokens={"bench": "bench"},
                              auto_approve_domains=True)
        app = create_app(config)
        with TestClient(app, headers={"Authorization": "Bearer bench"}) as http:
            for domain in ("example.com", "example.net"):
                http.post("/v3/rest/domains", json={"domain": domain}).raise_for_status()
            started = time.perf_counter()
            for i in range(args.services):
                http.post("/v3/rest/services", json=service_body(i, args.endpoints)).raise_for_status()
            load = time.perf_counter() - started
            timings = []
            for _ in range(3):
                started = time.perf_counter()
                resp = http.get("/v3/rest/services", params={"limit": 1000, "fields": FIELDS})
                resp.raise_for_status()
                timings.append(time.perf_counter() - started)
            items = resp.json()
        app.state.server.store.close()
    count = sum(len(s["endpoints"]) for s in items)
    print(f"services x endpoints      : {args.services} x {args.endpoints}")
    print(f"load (nested POSTs)      : {load:.2f} s total, {1000 * load / max(1, args.services):.1f} ms per service")
    print(f"list limit=1000 endpoints.*: best {min(timings):.3f} s, worst {max(timings):.3f} s")
    print(f"response                 : {len(resp.content) / 1e6:.1f} MB, {len(items)} services, {count} endpoints")


if __name__ == "__main__":
    main()
