"""N `apimctl apply` runs of the same manifests at once against one area: duplicates (must be 0).

Starts the reference server (``apimctl serve`` on 127.0.0.1), then, per trial and on a fresh
area, starts N ``python -m apimctl apply --auto-approve`` processes at the same moment and waits
for them. It prints each trial's exit codes and the duplicates found in the area afterwards
(two top-level objects of one kind with one name, two endpoints of one name in a service, two
methods of one name in an endpoint, ...), then the total time. Two modes:

- ``refuse`` (the default ``--lock-timeout 0``): one apply holds the area's lease, the others
  are refused at once (exit 1, naming the holder) or find nothing left to do (exit 0);
- ``wait`` (``--lock-timeout 60``): the applies take turns; all exit 0.

``--no-lock`` adds a third mode without the lease, to show what it prevents (its duplicates
are reported, not counted as a failure). Exit status 1 when a locked mode left a duplicate.

    python benchmarks/concurrent_applies.py                 # 4 applies, 3 trials per mode
    python benchmarks/concurrent_applies.py -n 8 --trials 5 --services 4
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

OPERATOR = "bench-operator"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(folder: Path, areas: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-m", "apimctl", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--db", str(folder / "bench.db"), "--auto-approve-domains", "--operator-token", OPERATOR]
    for i in range(areas):
        cmd += ["--token", f"token-{i}=area-{i}"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            httpx.get(f"{base}/operator/calls", headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=1)
            return proc, base
        except httpx.TransportError:
            time.sleep(0.05)
    raise SystemExit("the reference server did not start")


def write_manifest(folder: Path, services: int, events: int) -> Path:
    """A domain, a role, ``services`` services of 2 endpoints with methods, a package with a
    plan, and ``events`` maintenance events."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["domains: [example.com]", "roles: [Partners]", "services:"]
    for i in range(services):
        lines += [f"  - name: Svc{i}", "    endpoints:"]
        for name in ("Forecast", "Alerts"):
            lines += [
                f"      - name: {name}",
                f"        requestPathAlias: /s{i}/{name.lower()}",
                "        trafficManagerDomain: api.example.com",
                "        publicDomains: [api.example.com]",
                "        systemDomains: [backend.example.com]",
                "        methods: [{name: getIt}, {name: postIt}]",
            ]
    lines += ["packages:", "  - name: Partners", "    plans:", "      - name: Gold",
              "        services: [{name: Svc0}]", "scheduledMaintenanceEvents:"]
    for i in range(events):
        lines += [f"  - name: Window {i}", f'    startDateTime: "2026-12-0{i % 9 + 1}T02:00:00Z"',
                  f'    endDateTime: "2026-12-0{i % 9 + 1}T04:00:00Z"',
                  "    endpoints: [{service: Svc0, endpoint: Alerts}]"]
    (folder / "main.yaml").write_text("\n".join(lines) + "\n")
    return folder


def listed(base: str, token: str, path: str, fields: str | None = None) -> list[dict[str, Any]]:
    params = {"limit": "1000", **({"fields": fields} if fields else {})}
    reply = httpx.get(f"{base}/v3/rest{path}", params=params, timeout=10,
                      headers={"Authorization": f"Bearer {token}"})
    reply.raise_for_status()
    data = reply.json()
    return data if isinstance(data, list) else [data]


def duplicates(base: str, token: str) -> dict[str, int]:
    """Every object of the area by its natural key, those found more than once."""
    found: Counter[str] = Counter()
    for svc in listed(base, token, "/services", "id,name,endpoints.name,endpoints.methods.name"):
        found[f"service:{svc['name']}"] += 1
        for ep in svc.get("endpoints") or []:
            found[f"endpoint:{svc['name']}/{ep['name']}"] += 1
            for method in ep.get("methods") or []:
                found[f"method:{svc['name']}/{ep['name']}/{method['name']}"] += 1
    for pkg in listed(base, token, "/packages", "id,name,plans.name"):
        found[f"package:{pkg['name']}"] += 1
        for plan in pkg.get("plans") or []:
            found[f"plan:{pkg['name']}/{plan['name']}"] += 1
    for role in listed(base, token, "/roles"):
        found[f"role:{role['name']}"] += 1
    for dom in listed(base, token, "/domains"):
        found[f"domain:{dom['domain']}"] += 1
    for event in listed(base, token, "/scheduledMaintenanceEvents"):
        found[f"maintenanceEvent:{event['name']}"] += 1
    return {key: n for key, n in found.items() if n > 1}


def trial(base: str, token: str, folder: Path, n: int, extra: list[str]) -> tuple[list[int], dict[str, int]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("APIMCTL_")}
    env.update({"APIMCTL_URL": f"{base}/v3/rest", "APIMCTL_TOKEN": token, "NO_COLOR": "1"})
    cmd = [sys.executable, "-m", "apimctl", "apply", "--auto-approve", "--qps", "10", *extra, str(folder)]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL) for _ in range(n)]
    codes = [proc.wait(600) for proc in procs]
    return codes, duplicates(base, token)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--applies", type=int, default=4, help="concurrent applies per trial")
    parser.add_argument("--trials", type=int, default=3, help="trials per mode")
    parser.add_argument("--services", type=int, default=3)
    parser.add_argument("--events", type=int, default=4)
    parser.add_argument("--no-lock", action="store_true", help="also run the applies without the lease")
    args = parser.parse_args()
    modes: list[tuple[str, list[str]]] = [("refuse", []), ("wait", ["--lock-timeout", "60"])]
    if args.no_lock:
        modes.append(("no-lock", ["--no-lock"]))
    started = time.monotonic()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_manifest(Path(tmp) / "m", args.services, args.events)
        proc, base = start_server(Path(tmp), len(modes) * args.trials)
        try:
            area = 0
            for mode, extra in modes:
                for number in range(1, args.trials + 1):
                    began = time.monotonic()
                    codes, dupes = trial(base, f"token-{area}", folder, args.applies, extra)
                    area += 1
                    failed |= bool(dupes) and mode != "no-lock"
                    shown = ", ".join(f"{k} x{n}" for k, n in sorted(dupes.items())[:5]) or "-"
                    print(f"{mode:8} trial {number}: exit codes {codes}  duplicates {len(dupes)}  "
                          f"({time.monotonic() - began:.1f} s)  {shown}")
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)
    print(f"total {time.monotonic() - started:.1f} s; duplicates with the lease: "
          f"{'FOUND' if failed else '0'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
