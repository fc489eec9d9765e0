"""What the caller impact adds to `plan`: extra read calls, wall time and memory.

Loads N services x 10 endpoints and N/10 packages x 5 plans into an in-process reference
server through the API (as ``plan_bench.py`` does) and reads it, then plans a change that
governs calls on top of it and measures :func:`apimctl.planning.impact.attach_impact` alone:

- ``limits``: every plan's ``rateLimitCeiling`` halved (the keys are read from
  ``/packageKeys``);
- ``owners``: that, and one entitlement removed from every plan (owners are needed, so the
  keys are read nested in ``/applications``, 2 keys an application).

The K package keys are not made through the API (100,000 POSTs would take the run): the two
lists are served page by page, by page index, as the API sends them (JSON text, decoded per
page like the client does), spread over every plan, a third with a ceiling of their own.

Goal (issue 23): at 50,000 endpoints and 100,000 keys, extra read calls = ⌈keys/1000⌉ (or
⌈applications/1000⌉), under 2 s and 50 MB on top of plan.

    python benchmarks/impact_bench.py                          # 200 services, 10,000 keys
    python benchmarks/impact_bench.py --services 5000 --keys 100000
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import math
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import msgspec
from generated import ENDPOINTS_PER_SERVICE, Manifest, area
from plan_bench import TOKEN, load

from apimctl.api.client import ApiClient
from apimctl.planning import build_plan
from apimctl.planning.impact import attach_impact
from apimctl.state.keys import APPLICATIONS_PATH, KEYS_PATH
from apimctl.state.live import LiveState, read_live


class Keys:
    """The ``/packageKeys`` and ``/applications`` lists of ``count`` keys over ``plan_ids``."""

    def __init__(self, count: int, plan_ids: list[str]) -> None:
        keys = [{"id": f"key-{i:06d}", "status": "active",
                 "rateLimitCeiling": 500 if i % 3 == 0 else None, "rateLimitExempt": False,
                 "qpsLimitCeiling": None, "qpsLimitExempt": False,
                 "plan": {"id": plan_ids[i % len(plan_ids)]}, "package": {"id": "p"}}
                for i in range(count)]
        apps = [{"id": f"app-{i:06d}", "username": f"dev-{i % 997}", "packageKeys": keys[2 * i: 2 * i + 2]}
                for i in range(math.ceil(count / 2))]
        encode = msgspec.json.encode
        self.pages = {path: [encode(items[i: i + 1000]) for i in range(0, len(items), 1000)]
                      for path, items in ((KEYS_PATH, keys), (APPLICATIONS_PATH, apps))}
        self.totals = {KEYS_PATH: len(keys), APPLICATIONS_PATH: len(apps)}
        self.calls = 0

    async def list_page(self, path: str, params: Any = None, *, size: int = 1000,
                        offset: int = 0) -> tuple[list[dict[str, Any]], int | None]:
        self.calls += 1
        pages = self.pages[path]
        body = pages[offset] if offset < len(pages) else b"[]"
        await asyncio.sleep(0)
        return msgspec.json.decode(body), self.totals[path]


async def live_area(services: int) -> tuple[dict[str, Any], LiveState]:
    doc = area(services, services // 10)
    with tempfile.TemporaryDirectory() as tmp:
        from apimctl.server import ServerConfig, create_app

        config = ServerConfig(db_path=str(Path(tmp) / "bench.db"), tokens={TOKEN: "bench"},
                              auto_approve_domains=True)
        transport = httpx.ASGITransport(app=create_app(config))
        async with ApiClient("http://bench/v3/rest", token=TOKEN, qps=None, transport=transport) as client:
            await load(client, doc)
            return doc, await read_live(client)


def changed(doc: dict[str, Any], owners: bool) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    for pkg in doc["packages"]:
        for plan in pkg["plans"]:
            plan["rateLimitCeiling"] //= 2
            if owners:
                plan["services"][0]["endpoints"] = plan["services"][0]["endpoints"][:1]
    return doc


async def measure(doc: dict[str, Any], live: LiveState, keys: int, owners: bool) -> dict[str, Any]:
    plan_ids = [o.id for o in live.of("plan")]
    made = build_plan(Manifest(changed(doc, owners)), live)
    lister = Keys(keys, plan_ids)
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    await attach_impact(lister, made, live, "auto")
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    lines = sum(len(s.impact) for s in made.steps)
    again = build_plan(Manifest(changed(doc, owners)), live)
    gc.collect()
    tracemalloc.start()
    await attach_impact(lister, again, live, "auto")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert made.impact is not None
    return {"mode": "owners" if owners else "limits", "calls": made.impact.calls,
            "expected": math.ceil((math.ceil(keys / 2) if owners else keys) / 1000),
            "wall_s": wall, "cpu_s": cpu, "peak_mb": peak / 2**20, "steps": len(made.steps), "lines": lines,
            "affected": made.affected_keys()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=200, help="services (10 endpoints each)")
    parser.add_argument("--keys", type=int, nargs="+", default=[10_000], help="package keys")
    args = parser.parse_args()
    doc, live = asyncio.run(live_area(args.services))
    plans = len(live.of("plan"))
    print(f"{args.services} services, {args.services * ENDPOINTS_PER_SERVICE} endpoints, {plans} plans")
    for keys in args.keys:
        for owners in (False, True):
            row = asyncio.run(measure(doc, live, keys, owners))
            print(f"  {keys:>7} keys, {row['mode']:<6}: {row['steps']} steps, {row['lines']} impact "
                  f"lines, {row['affected']} keys cut off or tightened; extra read calls "
                  f"{row['calls']} (expected {row['expected']}), extra wall {row['wall_s']:.2f} s "
                  f"(CPU {row['cpu_s']:.2f} s), "
                  f"extra peak {row['peak_mb']:.1f} MB allocated")


if __name__ == "__main__":
    main()
