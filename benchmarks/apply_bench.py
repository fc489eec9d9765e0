"""How `apply` uses its call budget: write calls per object, achieved calls/s, wall time.

Starts the reference server (``apimctl serve``, uvicorn on 127.0.0.1) with a server-side
``--qps`` limit, then applies from empty N services x 10 endpoints and N/10 packages x 5 plans
with a client limited to the same ``--qps``, and prints

- write calls against objects created (nested writes: one POST per service tree, one per
  package with its plans),
- achieved calls per second while the apply runs, against the limit (target: at least 90%),
- calls the server throttled, and wall time;

then changes 1% of the objects (the endpoints of 1% of the services, 1% of the service
descriptions, 1% of the plans) and applies again: calls and time.

    python benchmarks/apply_bench.py                       # 1,000 services, --qps 20
    python benchmarks/apply_bench.py --services 100        # a quick run
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from generated import (
    ENDPOINTS_PER_SERVICE,
    PLANS_PER_PACKAGE,
    Manifest,
    area,
    objects_in,
    one_percent_change,
)

from apimctl.api.client import ApiClient
from apimctl.applying import reading
from apimctl.applying.run import ApplyOptions, ApplyResult, apply_plan
from apimctl.planning import build_plan
from apimctl.plans.model import Plan
from apimctl.plans.progress import ProgressEvent

TOKEN = "bench-token"
OPERATOR = "bench-operator"

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(folder: Path, qps: float) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "apimctl", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--db", str(folder / "bench.db"), "--token", f"{TOKEN}=bench", "--auto-approve-domains",
         "--operator-token", OPERATOR, "--qps", str(qps)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            httpx.get(f"{base}/operator/calls", headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=1)
            return proc, base
        except httpx.TransportError:
            time.sleep(0.05)
    raise SystemExit("the reference server did not start")


def throttled(base: str) -> int:
    data = httpx.get(f"{base}/operator/calls", headers={"Authorization": f"Bearer {OPERATOR}"}).json()
    return sum(c.get("statuses", {}).get("403", 0) for c in data.get("calls", []))


class WritePhase:
    """Calls and time from the first step started to the last step finished (the part of
    the apply where work remains and the API should be kept busy)."""

    def __init__(self, client: ApiClient) -> None:
        self.client = client
        self.first: tuple[float, int] | None = None
        self.last: tuple[float, int] | None = None

    def __call__(self, event: ProgressEvent) -> None:
        mark = (time.monotonic(), self.client.stats.total())
        if event.kind == "start" and self.first is None:
            self.first = mark
        elif event.kind in ("done", "failed", "skipped"):
            self.last = mark

    def rate(self) -> tuple[int, float]:
        if self.first is None or self.last is None:
            return 0, 0.0
        return self.last[1] - self.first[1], self.last[0] - self.first[0]


async def plan_and_apply(client: ApiClient, doc: dict[str, Any], parallelism: int
                         ) -> tuple[Plan, ApplyResult, float, WritePhase]:
    """Plan from one read of the area and apply, as ``apimctl apply`` does (without the lease):
    of the live state only the ids are kept for the writes."""
    started = time.monotonic()
    state, kept = await reading.read(client)
    plan = build_plan(Manifest(doc), state)
    del state
    phase = WritePhase(client)
    result = await apply_plan(client, plan, ApplyOptions(parallelism=parallelism, progress=phase),
                              index=kept.index)
    return plan, result, time.monotonic() - started, phase


def report(title: str, plan: Plan, result: ApplyResult, seconds: float, qps: float, objects: int,
           throttled_calls: int, phase: WritePhase) -> None:
    calls, busy = phase.rate()
    rate = calls / busy if busy else 0.0
    print(f"\n{title}")
    print(f"  steps {len(plan.steps)} ({objects} objects), exit code {result.exit_code}, "
          f"not converged {len(result.non_converged)}")
    print(f"  write calls {result.write_calls} for {objects} objects "
          f"({result.write_calls / max(1, objects):.3f} calls per object)")
    print(f"  while steps ran: {calls} calls in {busy:.1f} s = {rate:.1f} calls/s against --qps {qps:g} "
          f"({100 * rate / qps:.0f}% of the limit)")
    print(f"  apply: {result.calls} calls ({result.read_calls} reads: the convergence check, which "
          f"reads again only the touched objects) in {result.seconds:.1f} s; plan + apply wall time "
          f"{seconds:.1f} s; throttled by the server: {throttled_calls}")


async def run(args: argparse.Namespace) -> None:
    packages = args.packages if args.packages is not None else max(1, args.services // 10)
    doc = area(args.services, packages)
    with tempfile.TemporaryDirectory() as tmp:
        server, base = start_server(Path(tmp), args.qps)
        try:
            async with ApiClient(f"{base}/v3/rest", token=TOKEN, qps=args.qps,
                                 parallelism=args.parallelism, timeout=60) as client:
                before = throttled(base)
                plan, result, seconds, phase = await plan_and_apply(client, doc, args.parallelism)
                report(f"apply from empty: {args.services} services x {ENDPOINTS_PER_SERVICE} endpoints, "
                       f"{packages} packages x {PLANS_PER_PACKAGE} plans",
                       plan, result, seconds, args.qps, objects_in(doc), throttled(base) - before, phase)
                changed_doc, changed = one_percent_change(doc)
                before = throttled(base)
                plan, result, seconds, phase = await plan_and_apply(client, changed_doc, args.parallelism)
                report(f"1% change ({changed} objects)", plan, result, seconds, args.qps, changed,
                       throttled(base) - before, phase)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--services", type=int, default=1000)
    parser.add_argument("--packages", type=int, default=None, help="default: services / 10")
    parser.add_argument("--qps", type=float, default=20.0, help="server and client limit")
    parser.add_argument("--parallelism", type=int, default=8)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
