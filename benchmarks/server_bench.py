"""Benchmark of the reference server: load a large area, then read it back page by page.

Builds ``--services`` services (a comma-separated list of sizes, default ``1000,5000``) with
``--endpoints`` endpoints each through the real HTTP API (one nested ``POST /services`` per
service, in-process over the ASGI app) into a temporary database (or reuses one kept in
``--keep DIR``; a kept database is copied before use, so an older version's file stays as it
was and is migrated on every run). Then it serves that database from a separate process on
127.0.0.1 (the server package under uvicorn, as ``apimctl serve`` runs it) and measures,
for each size:

- the server's peak RSS growth (``VmHWM`` after resetting it through ``clear_refs``) while it
  answers one page of 1,000 services with ``fields=...,endpoints.*`` (about 22 MB);
- the median time of the first and of the last such page (``--repeat`` times each, taken
  alternately), and of every page once;
- the median time of ``filter=name:X`` answering one service.

The last lines print each figure beside its goal (issue "Performance at 50,000 endpoints").
The machine may be shared: repeat, read medians. It prints numbers; it asserts nothing.
Run: ``python benchmarks/server_bench.py [--services 1000,5000] [--endpoints 10] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
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
SERVE = """
import sys, uvicorn
from apimctl.server import UVICORN_OPTIONS, ServerConfig, create_app
app = create_app(ServerConfig(db_path=sys.argv[2], tokens={"bench": "bench"}))
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", **UVICORN_OPTIONS)
"""


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


def reset_peak(pid: int) -> bool:
    """Reset a process's ``VmHWM`` to its current RSS (Linux ``clear_refs``)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def median_get(http: httpx.Client, params: dict[str, Any], repeat: int) -> tuple[float, httpx.Response]:
    timings, resp = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        resp = http.get("/services", params=params)
        timings.append(time.perf_counter() - started)
        resp.raise_for_status()
    assert resp is not None
    return statistics.median(timings), resp


def read_pages(db: str, services: int, repeat: int) -> dict[str, Any]:
    port = free_port()
    # the server package under uvicorn as ``apimctl serve`` runs it, without importing the CLI
    cmd = [sys.executable, "-c", SERVE, str(port), db]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    log = Path(db).with_suffix(".log").open("wb")
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    out: dict[str, Any] = {"services": services}
    try:
        base = f"http://127.0.0.1:{port}/v3/rest"
        headers = {"Authorization": "Bearer bench"}
        with httpx.Client(base_url=base, headers=headers, timeout=300) as http:
            deadline = time.monotonic() + 60
            while True:
                try:
                    http.head("/services")
                    break
                except httpx.TransportError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        log.close()
                        raise SystemExit("apimctl serve did not start:\n"
                                         + Path(db).with_suffix(".log").read_text(errors="replace")) from None
                    time.sleep(0.1)
            # memory first, on a fresh process: a tiny page to warm up, then one full page
            http.get("/services", params={"limit": 1, "fields": FIELDS}).raise_for_status()
            out["idle"] = peak_rss_mb(server.pid)
            out["peak_reset"] = reset_peak(server.pid)
            before = peak_rss_mb(server.pid)
            resp = http.get("/services", params={"limit": PAGE, "offset": 0, "fields": FIELDS})
            resp.raise_for_status()
            after = peak_rss_mb(server.pid)
            out["page_mb"] = len(resp.content) / 1e6
            out["page_rss"] = None if after is None or before is None else after - before
            del resp
            pages = (services + PAGE - 1) // PAGE
            first: dict[str, Any] = {"limit": PAGE, "offset": 0, "fields": FIELDS}
            # first and last page alternately, so that the load of a shared machine weighs on both
            firsts, lasts = [], []
            for _ in range(repeat):
                firsts.append(median_get(http, first, 1)[0])
                lasts.append(median_get(http, {**first, "offset": (pages - 1) * PAGE}, 1)[0])
            out["first"], out["last"] = statistics.median(firsts), statistics.median(lasts)
            timings, size, count = [], 0, 0
            for k in range(pages):
                started = time.perf_counter()
                resp = http.get("/services", params={**first, "offset": k * PAGE})
                resp.raise_for_status()
                timings.append(time.perf_counter() - started)
                size += len(resp.content)
                count += sum(len(s["endpoints"]) for s in resp.json())
            out["pages"] = timings
            name = f"Service {services // 2:05d}"
            out["filter"], resp = median_get(http, {"filter": f"name:{name}"}, max(repeat, 5))
            out["filter_n"] = len(resp.json())
            out["peak"] = peak_rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()
    timings = out["pages"]
    print(f"pages of {PAGE} (endpoints.*) : {len(timings)} pages, best {min(timings):.3f} s, "
          f"worst {max(timings):.3f} s, total {sum(timings):.2f} s")
    print(f"response                    : {size / 1e6:.1f} MB in all, {count} endpoints")
    print(f"first / last page (median)  : {out['first']:.3f} s / {out['last']:.3f} s")
    print(f"filter=name:X (median)      : {1000 * out['filter']:.1f} ms ({out['filter_n']} object)")
    if out["page_rss"] is not None:
        print(f"server peak memory (VmHWM)  : {out['peak']:.0f} MB (after start-up: {out['idle']:.0f} MB); "
              f"growth for one {out['page_mb']:.1f} MB page: {out['page_rss']:.0f} MB"
              f"{'' if out['peak_reset'] else ' (VmHWM not reset)'}")
    return out


def goals(results: list[dict[str, Any]]) -> None:
    """Each figure beside its goal."""
    print()
    print("goal                                               measured")
    for r in results:
        ratio = r["last"] / r["first"] if r["first"] else float("nan")
        print(f"page cost last vs first page, {r['services']:>5} services: first {r['first']:.3f} s, "
              f"last {r['last']:.3f} s, last/first {ratio:.2f}  (goal: within 20%)")
    if len(results) > 1:
        small, big = results[0], results[-1]
        print(f"page cost {small['services']} vs {big['services']} services (first page): "
              f"{small['first']:.3f} s vs {big['first']:.3f} s, ratio {big['first'] / small['first']:.2f}  "
              "(goal: independent of the area's size)")
    for r in results:
        print(f"filter=name:X answering one object, {r['services']:>5} services: {1000 * r['filter']:.1f} ms  "
              "(goal at 5,000 services: under 20 ms)")
    for r in results:
        if r["page_rss"] is not None:
            print(f"server memory for one {r['page_mb']:.1f} MB page, {r['services']:>5} services: "
                  f"+{r['page_rss']:.0f} MB = {r['page_rss'] / r['page_mb']:.2f}x the page  (goal: under 2x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", default="1000,5000", help="comma-separated sizes (services)")
    parser.add_argument("--endpoints", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5, help="repetitions of each timed GET (median)")
    parser.add_argument("--keep", type=Path, help="keep loaded databases here and reuse them")
    args = parser.parse_args()
    sizes = [int(s) for s in str(args.services).split(",") if s.strip()]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for services in sizes:
            db = str(Path(tmp) / f"bench-{services}.db")
            kept = args.keep / f"bench-{services}x{args.endpoints}.db" if args.keep else None
            print(f"services x endpoints        : {services} x {args.endpoints}")
            if kept is not None and kept.exists():
                shutil.copyfile(kept, db)
                print(f"load                        : reused {kept}")
            else:
                seconds = load(db, services, args.endpoints)
                print(f"load (nested POSTs)         : {seconds:.2f} s total, "
                      f"{1000 * seconds / max(1, services):.1f} ms per service")
                if kept is not None:
                    kept.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(db, kept)
            results.append(read_pages(db, services, args.repeat))
            print()
    goals(results)


if __name__ == "__main__":
    main()
