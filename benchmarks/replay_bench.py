"""Replayed calls per second and the peak memory of ``plan --replay``, in both dialects.

For each dialect, ``apimctl serve`` is started on a throw-away database and its area built
through the management API: one service of 20 endpoints (keys in the query, a header or the
path; one behind https), a package of two plans (rate and QPS limits, method lists), 200
keys. A call log of ``--calls`` records in the platform's call-log shape is written, gzip'd
(every endpoint, every key, a few unknown keys and unrouted paths, two calls a second), and
replayed against the area as it is and as a plan would leave it (one plan's rate ceiling
lowered to 10 an hour, one endpoint made https-only): both configurations decided for every call, as
``plan --replay`` does. Printed: calls per CPU second of this process (the "one core"
measure; goal 2,000), wall time, and the peak resident memory of the process (goal: under
200 MB for a million calls, the log streamed).

    python benchmarks/replay_bench.py                    # 100,000 calls
    python benchmarks/replay_bench.py --calls 1000000
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gzip
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from apimctl.api.client import ApiClient
from apimctl.replay.compare import replay
from apimctl.replay.config import read_documents
from apimctl.replay.decide import Side
from apimctl.replay.records import read
from apimctl.server.dialects import dialect_of
from apimctl.server.traffic.area import area_of

HOST = "api.example.com"
TOKEN = "bench-token"
ENDPOINTS = 20
KEYS = 200


def _one(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code < 300, answer.text[:300]
    body = answer.json()
    return body[0] if isinstance(body, list) else body  # type: ignore[no-any-return]


def _endpoint(n: int) -> dict[str, Any]:
    where = [{"apiKeyValueLocations": ["request-parameters"], "apiKeyValueLocationKey": "api_key"},
             {"apiKeyValueLocations": ["request-header"], "apiKeyValueLocationKey": "X-Key"},
             {"apiKeyValueLocations": ["request-path"], "apiKeyValueLocationKey": "2"}][n % 3]
    return {"name": f"E{n}", "requestPathAlias": f"/e{n}", "supportedHttpMethods": ["get", "post"],
            "trafficManagerDomain": HOST, "publicDomains": [{"address": HOST}],
            "systemDomains": [{"address": "backend.example.net"}], **where}


def populate(api: httpx.Client) -> list[str]:
    for domain in ("example.com", "example.net"):
        _one(api.post("/domains", json={"domain": domain}))
    service = _one(api.post("/services", json={"name": "Bench"}))
    for n in range(ENDPOINTS):
        _one(api.post(f"/services/{service['id']}/endpoints", json=_endpoint(n)))
    eps = _one(api.get(f"/services/{service['id']}", params={"fields": "id,endpoints"}))["endpoints"]
    entitled = [{"id": service["id"], "endpoints": [{"id": e["id"]} for e in eps]}]
    package = _one(api.post("/packages", json={"name": "P", "plans": [
        {"name": "Gold", "services": entitled, "qpsLimitCeiling": 50, "rateLimitCeiling": 100000,
         "rateLimitPeriod": "day", "maxNumKeysAllowed": 1000},
        {"name": "Basic", "services": entitled, "qpsLimitCeiling": 5, "rateLimitCeiling": 1000,
         "rateLimitPeriod": "hour", "maxNumKeysAllowed": 1000}]}))
    package = _one(api.get(f"/packages/{package['id']}", params={"fields": "id,plans"}))
    plans = [p["id"] for p in package["plans"]]
    keys = [f"bench-key-{n:08d}-abcdef" for n in range(KEYS)]
    _one(api.post("/members", json={
        "username": "b", "email": "b@example.com", "displayName": "B", "externalId": "b", "passwdNew": "pw-b-1234567",
        "applications": [{"name": "A", "username": "b", "packageKeys": [
            {"apikey": k, "package": {"id": package["id"]}, "plan": {"id": plans[n % 2]}}
            for n, k in enumerate(keys)]}]}))
    return keys


def write_log(path: Path, calls: int, keys: list[str]) -> None:
    start = datetime(2026, 1, 5, tzinfo=UTC).timestamp()
    with gzip.open(path, "wt") as out:
        for n in range(calls):
            key = keys[n % len(keys)] if n % 97 else "unknown-key-000000000"
            ep = n % (ENDPOINTS + 1)
            uri = f"/e{ep}/{key if ep % 3 == 2 else 'x'}/item?q={n % 7}" if ep < ENDPOINTS else "/nowhere"
            when = datetime.fromtimestamp(start + n // 2, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.write(json.dumps({
                "request_time": when, "request_host_name": HOST, "http_method": "GET", "uri": uri,
                "api_key": key, "ssl_enabled": "1" if n % 5 else "0", "http_status_code": "200",
                "traffic_manager_error_code": "-", "oauth_access_token": "-"}) + "\n")


def planned(docs: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    after = copy.deepcopy(docs)
    for package in after["package"]:
        for plan in package.get("plans") or []:
            if plan.get("name") == "Basic":
                plan["rateLimitCeiling"] = 10
    after["service"][0]["endpoints"][1]["inboundSslRequired"] = True
    return after


async def read_area(url: str) -> dict[str, list[dict[str, Any]]]:
    async with ApiClient(f"{url}/v3/rest", token=TOKEN, qps=None) as client:
        return await read_documents(client)


def bench(dialect: str, calls: int, folder: Path) -> None:
    log_file = folder / f"{dialect}.log"
    with log_file.open("w") as log:
        process = subprocess.Popen([sys.executable, "-m", "apimctl", "serve", "--port", "0", "--db",
                                    str(folder / f"{dialect}.db"), "--dialect", dialect, "--auto-approve-domains",
                                    "--token", f"{TOKEN}=bench"], stderr=log)
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"(http://127\.0\.0\.1:\d+)/v3/rest", log_file.read_text())):
            assert process.poll() is None and time.monotonic() < deadline, log_file.read_text()
            time.sleep(0.05)
        url = found.group(1)
        with httpx.Client(base_url=f"{url}/v3/rest", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as api:
            keys = populate(api)
        docs = asyncio.run(read_area(url))
    finally:
        process.terminate()
        process.wait(timeout=15)
    calllog = folder / f"{dialect}.jsonl.gz"
    write_log(calllog, calls, keys)
    dialect_doc = dialect_of(dialect)
    before = Side([area_of("bench", docs)], dialect_doc)
    after = Side([area_of("bench", planned(docs))], dialect_doc)
    cpu, wall = time.process_time(), time.perf_counter()
    found = replay(read(str(calllog)), before, after, {"plan:P/Basic", "endpoint:Bench/E1"})
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{dialect:8} {found.calls:>9,} calls  {found.calls / cpu:>8,.0f} calls/CPU s  {wall:6.1f} s wall  "
          f"peak {peak:5.0f} MB  changed {found.changed:,} in {len(found.groups)} group(s), "
          f"unknown keys {found.unknown_keys:,}, unmatched {found.unmatched:,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--dialect", choices=("spec", "mashery"), action="append")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as folder:
        for dialect in args.dialect or ("spec", "mashery"):
            bench(dialect, args.calls, Path(folder))


if __name__ == "__main__":
    main()
