"""Several areas: wall time and peak memory of `apimctl diff` of two large areas and of
`apimctl export --area ... --into DIR` of three, against `apimctl serve` in either dialect.

Each area is a token of one `apimctl serve` process (``--token tN=areaN``), reached through a
profile of its own; the areas are generated (``generated.area``: N/10 services of 10
endpoints, N/100 packages of 5 plans) and loaded through the API; the second and third areas
have 1% of their objects changed (``generated.one_percent_change``), the third a service of
its own too. The commands run as child processes; their peak RSS comes from ``wait4``.

Budget (the issue): `diff` of two 50,000-endpoint areas under 12 s and 600 MB peak; `export`
of three 10,000-endpoint areas into base and overlays under 30 s.

    python benchmarks/areas_bench.py                            # both dialects, full size
    python benchmarks/areas_bench.py --diff-endpoints 5000 --export-endpoints 2000 --dialect spec
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from generated import area, endpoint, one_percent_change
from plan_bench import load

from apimctl.api.client import ApiClient

OPERATOR = "areas-bench-operator"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Serve:
    """`apimctl serve` with ``areas`` areas, token ``tN`` for area ``N``."""

    def __init__(self, folder: Path, dialect: str, areas: int) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v3/rest"
        tokens = [a for n in range(1, areas + 1) for a in ("--token", f"t{n}=area{n}")]
        self.log = (folder / "serve.log").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "apimctl", "serve", "--host", "127.0.0.1", "--port", str(self.port),
             "--db", str(folder / "areas.db"), "--dialect", dialect, "--auto-approve-domains",
             "--operator-token", OPERATOR, *tokens], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{self.port}/operator/calls", timeout=1,
                          headers={"Authorization": f"Bearer {OPERATOR}"})
                return
            except httpx.TransportError:
                time.sleep(0.1)
        raise SystemExit("apimctl serve did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(15)
        self.log.close()


async def seed(url: str, token: str, doc: dict[str, Any]) -> None:
    async with ApiClient(url, token=token, qps=None, parallelism=16, timeout=120) as client:
        await load(client, doc)


def timed(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """Run ``apimctl ARGS``: (seconds, peak RSS in MB, exit code)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "apimctl", *args], env=env, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 2):
        assert proc.stderr is not None
        sys.stderr.write(proc.stderr.read().decode())
    return seconds, usage.ru_maxrss / 1024, proc.returncode


def environment(folder: Path, serve: Serve, areas: int) -> dict[str, str]:
    config = folder / "home" / "apimctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("".join(f'[profiles.a{n}]\nurl = "{serve.url}"\ntoken = "${{AREA_TOKEN_{n}}}"\nqps = 0\n\n'
                              for n in range(1, areas + 1)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("APIMCTL_")}
    env.update({f"AREA_TOKEN_{n}": f"t{n}" for n in range(1, areas + 1)})
    env["XDG_CONFIG_HOME"] = str(folder / "home")
    return env


def copies(endpoints: int, count: int) -> list[dict[str, Any]]:
    services = max(1, endpoints // 10)
    doc = area(services, max(1, services // 10))
    out = [doc]
    for n in range(1, count):
        changed, _ = one_percent_change(doc)
        if n == 2:
            changed = copy.deepcopy(changed)
            changed["services"].append({"name": "only-in-3", "endpoints": [endpoint(services, 0)]})
        out.append(changed)
    return out


def bench(dialect: str, diff_endpoints: int, export_endpoints: int) -> None:
    with tempfile.TemporaryDirectory(prefix="apimctl-areas-") as tmp:
        folder = Path(tmp)
        serve = Serve(folder, dialect, 5)
        try:
            env = environment(folder, serve, 5)
            started = time.perf_counter()
            big = copies(diff_endpoints, 2)
            small = copies(export_endpoints, 3)
            for n, doc in enumerate([*big, *small], start=1):
                asyncio.run(seed(serve.url, f"t{n}", doc))
            print(f"[{dialect}] seeded 2 x {diff_endpoints} and 3 x {export_endpoints} endpoints "
                  f"in {time.perf_counter() - started:.0f} s")
            seconds, mb, code = timed(["diff", "a1", "a2", "--format", "json"], env, folder)
            print(f"[{dialect}] diff of two {diff_endpoints}-endpoint areas: {seconds:.1f} s, "
                  f"peak {mb:.0f} MB (exit {code})")
            seconds, mb, code = timed(["export", "--area", "a3=a3", "--area", "a4=a4", "--area", "a5=a5",
                                       "--into", str(folder / "repo")], env, folder)
            print(f"[{dialect}] export of three {export_endpoints}-endpoint areas into base and overlays: "
                  f"{seconds:.1f} s, peak {mb:.0f} MB (exit {code})")
        finally:
            serve.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--diff-endpoints", type=int, default=50_000)
    parser.add_argument("--export-endpoints", type=int, default=10_000)
    parser.add_argument("--dialect", choices=("spec", "mashery", "both"), default="both")
    args = parser.parse_args()
    for dialect in ("spec", "mashery") if args.dialect == "both" else (args.dialect,):
        bench(dialect, args.diff_endpoints, args.export_endpoints)


if __name__ == "__main__":
    main()
