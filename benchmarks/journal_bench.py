"""What the journal of an apply costs: its own work against the time of the apply it records.

Plans the generated area (``generated.area``: 5,000 services x 10 endpoints = 50,000
endpoints, 500 packages x 5 plans) from empty, as ``apply`` would, then times everything the
journal does for that run, through :class:`apimctl.applying.journal.Journal` on a real file:
the header (the run and its whole plan), a ``start`` and an ``end`` line per unit of writes
(flushed each), and the closing line. The journal is written while the writes wait for the
API, on the event loop, so its time adds to the apply's at most.

It then applies the same plan against the reference server (``apimctl serve``, no rate
limit) without and with the journal, unless ``--no-apply``, and prints both wall times: the
journal's share of the apply must stay under 5%.

    python benchmarks/journal_bench.py                    # 50,000 endpoints
    python benchmarks/journal_bench.py --services 500     # a quick run
    python benchmarks/journal_bench.py --no-apply         # the journal's own work only
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from generated import Manifest, area

from apimctl.api.client import ApiClient
from apimctl.applying import reading
from apimctl.applying.journal import Journal
from apimctl.applying.run import ApplyOptions, apply_plan
from apimctl.applying.units import group_units
from apimctl.planning import build_plan
from apimctl.plans.model import Plan
from apimctl.plans.result import ApplyResult
from apimctl.state.live import LiveState

TOKEN = "bench-token"
GOAL = 0.05  # the journal's time over the apply's, at most


def journal_work(plan: Plan, folder: Path) -> tuple[float, int]:
    """Seconds the journal's work for ``plan`` takes, and the bytes it writes."""
    units = group_units(plan)
    started = time.perf_counter()
    log = Journal(folder / "bench.jsonl", "bench")
    log.begin(plan, area="bench")
    for unit in units:
        log.started(unit)
        log.ended(unit, "done", {s.address: "00000000-0000-0000-0000-000000000000" for s in unit.steps
                                 if s.action == "create"})
    log.finish(ApplyResult(plan=plan))
    return time.perf_counter() - started, (folder / "bench.jsonl").stat().st_size


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    proc = subprocess.Popen([sys.executable, "-m", "apimctl", "serve", "--port", str(port), "--db",
                             str(folder / "bench.db"), "--token", f"{TOKEN}=bench", "--auto-approve-domains"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    import httpx

    for _ in range(200):
        try:
            httpx.get(f"{base}/v3/rest/domains", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=1)
            return proc, base
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


async def timed_apply(doc: dict[str, object], folder: Path, journaled: bool) -> float:
    """Wall seconds of planning and applying ``doc`` to an empty area of a fresh server."""
    server, base = start_server(folder)
    try:
        async with ApiClient(f"{base}/v3/rest", token=TOKEN, qps=0, parallelism=8, timeout=120) as client:
            started = time.perf_counter()
            state, kept = await reading.read(client)
            plan = build_plan(Manifest(doc), state)
            del state
            log = Journal(folder / "apply.jsonl", "bench") if journaled else None
            if log is not None:
                log.begin(plan, area="bench")
            result = await apply_plan(client, plan, ApplyOptions(journal=log, verify=False), index=kept.index)
            if log is not None:
                log.finish(result)
            return time.perf_counter() - started
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--services", type=int, default=5000)
    parser.add_argument("--no-apply", action="store_true", help="time the journal's own work only")
    args = parser.parse_args()
    doc = area(args.services, max(1, args.services // 10))
    plan = build_plan(Manifest(doc), LiveState())
    units = len(group_units(plan))
    with tempfile.TemporaryDirectory() as tmp:
        seconds, size = journal_work(plan, Path(tmp))
        print(f"{len(plan.steps)} steps in {units} units: the journal's work {seconds:.2f} s, "
              f"{size / 1e6:.1f} MB written")
        if args.no_apply:
            return
        for name in ("bare", "kept"):
            (Path(tmp) / name).mkdir()
        bare = asyncio.run(timed_apply(doc, Path(tmp) / "bare", journaled=False))
        kept = asyncio.run(timed_apply(doc, Path(tmp) / "kept", journaled=True))
        print(f"apply without the journal {bare:.1f} s, with it {kept:.1f} s; the journal's own work is "
              f"{100 * seconds / bare:.1f}% of the apply (goal < {100 * GOAL:.0f}%)")


if __name__ == "__main__":
    main()
