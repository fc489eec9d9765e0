"""How the cost of `plan` grows: read calls, wall time, local CPU time and peak memory.

Generates N services x 10 endpoints and N/10 packages x 5 plans, loads them into an in-process
reference server through the API, changes 1% of the objects in the manifests, then plans and
prints

- read calls made against the lower bound (Σ ⌈N/1000⌉ list calls over top-level kinds),
- wall time of reading the live state (the in-process server's work included),
- CPU time of translating the raw lists into the live model (``from_raw``: manifest shape,
  the packed documents and the normal forms of the live side, which planning compares by
  digest) and the memory that model keeps,
- CPU time of the local work (normalise + diff + order, i.e. ``build_plan``),
- peak memory of the local work (tracemalloc, in a separate run so it does not skew timing),
  and the process's peak RSS (which includes the in-process server and the live state).

Budget (DESIGN.md): local work under 2 s and 300 MB at 10,000 endpoints, growing linearly
(issue 13: ``build_plan`` under 0.5 s at 10,000 endpoints).

    python benchmarks/plan_bench.py                 # 1,000 and 5,000 services
    python benchmarks/plan_bench.py --services 200  # a quick run
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
from generated import ENDPOINTS_PER_SERVICE, PLANS_PER_PACKAGE, Manifest, area, one_percent_change

from apimctl.api.client import ApiClient
from apimctl.planning import build_plan
from apimctl.server import ServerConfig, create_app
from apimctl.state.live import from_raw, read_call_bound, read_live, read_raw

TOKEN = "bench-token"

def api_endpoint(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "publicDomains": [{"address": d} for d in doc["publicDomains"]],
            "systemDomains": [{"address": d} for d in doc["systemDomains"]]}


async def load(client: ApiClient, doc: dict[str, Any]) -> None:
    """Create everything through the API (nested writes, 16 at a time)."""
    await client.post("/domains", {"domain": "example.com"})
    gate = asyncio.Semaphore(16)

    async def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        async with gate:
            return await client.post(path, body)

    created = await asyncio.gather(*(post("/services", {**svc, "endpoints": [
        api_endpoint(e) for e in svc["endpoints"]]}) for svc in doc["services"]))
    ids = {c["name"]: c["id"] for c in created}
    live = await read_live(client)
    endpoint_ids = {o.key: o.id for o in live.of("endpoint")}
    await asyncio.gather(*(post("/packages", {"name": pkg["name"], "plans": [
        {**{k: v for k, v in plan.items() if k != "services"}, "services": [
            {"id": ids[s["name"]], "endpoints": [
                {"id": endpoint_ids[f"{s['name']}/{e['name']}"], "undefinedMethodsAllowed": True}
                for e in s["endpoints"]]} for s in plan["services"]]}
        for plan in pkg["plans"]]}) for pkg in doc["packages"]))


async def measure(services: int) -> dict[str, Any]:
    doc = area(services, services // 10)
    with tempfile.TemporaryDirectory() as tmp:
        config = ServerConfig(db_path=str(Path(tmp) / "bench.db"), tokens={TOKEN: "bench"},
                              auto_approve_domains=True)
        transport = httpx.ASGITransport(app=create_app(config))
        base = "http://bench/v3/rest"
        async with ApiClient(base, token=TOKEN, qps=None, transport=transport) as client:
            started = time.perf_counter()
            await load(client, doc)
            load_s = time.perf_counter() - started
        doc, changed = one_percent_change(doc)
        async with ApiClient(base, token=TOKEN, qps=None, transport=transport) as client:
            started = time.perf_counter()
            live = await read_live(client)
            read_s = time.perf_counter() - started
            reads = client.stats.reads()
            raw = await read_raw(client)
    translate_cpu_s, live_mb = translation(raw)
    manifest = Manifest(doc)
    gc.collect()
    cpu = time.process_time()
    wall = time.perf_counter()
    plan = build_plan(manifest, live)
    cpu_s, local_wall_s = time.process_time() - cpu, time.perf_counter() - wall
    gc.collect()
    tracemalloc.start()
    build_plan(manifest, live)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"services": services, "endpoints": services * ENDPOINTS_PER_SERVICE,
            "plans": services // 10 * PLANS_PER_PACKAGE, "load_s": load_s, "changed": changed,
            "steps": len(plan.steps), "reads": reads, "bound": read_call_bound(live),
            "read_s": read_s, "translate_cpu_s": translate_cpu_s, "live_mb": live_mb,
            "local_cpu_s": cpu_s, "local_wall_s": local_wall_s,
            "peak_mb": peak / 2**20,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def translation(raw: dict[str, list[dict[str, Any]]]) -> tuple[float, float]:
    """CPU seconds of ``from_raw`` (best of three) and the MB the live model keeps."""
    times = []
    for _ in range(3):
        gc.collect()
        cpu = time.process_time()
        from_raw(raw)
        times.append(time.process_time() - cpu)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    live = from_raw(raw)
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del live
    return min(times), kept / 2**20


def report(row: dict[str, Any]) -> None:
    print(f"{row['services']:>6} services, {row['endpoints']:>6} endpoints, {row['plans']:>5} plans "
          f"(loaded in {row['load_s']:.1f} s); {row['changed']} changed -> {row['steps']} steps")
    print(f"       read calls {row['reads']} (lower bound {row['bound']}), read wall {row['read_s']:.2f} s")
    print(f"       translation into the live model (normal forms included): CPU "
          f"{row['translate_cpu_s']:.2f} s; the model keeps {row['live_mb']:.1f} MB")
    print(f"       local work (normalise + diff + order): CPU {row['local_cpu_s']:.2f} s, "
          f"wall {row['local_wall_s']:.2f} s, peak {row['peak_mb']:.0f} MB allocated "
          f"(process peak RSS so far, server included: {row['rss_mb']:.0f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, nargs="+", default=[1000, 5000])
    args = parser.parse_args()
    rows = []
    for n in args.services:
        row = asyncio.run(measure(n))
        report(row)
        rows.append(row)
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        scale = last["endpoints"] / first["endpoints"]
        print(f"growth x{scale:.0f} in size: CPU x{last['local_cpu_s'] / max(first['local_cpu_s'], 1e-9):.1f}, "
              f"memory x{last['peak_mb'] / max(first['peak_mb'], 1e-9):.1f}")


if __name__ == "__main__":
    main()
