"""Benchmark: ``apimctl validate`` of 10,000 endpoints spread over 100 files.

Generates the manifests in a temporary directory (100 services, 100 endpoints each, with
CORS, cache, methods, an error set and a plan entitled to every service), validates them with
:func:`apimctl.manifests.validate` and prints the figures, then times ``apimctl validate`` as a
user runs it (a new process). The budget is 3 s for load, schema and checks together; this
script reports, it does not assert.

    .venv/bin/python benchmarks/validate_bench.py [--services 100] [--endpoints 100]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from apimctl.manifests import validate


def service_file(s: int, endpoints: int) -> str:
    """One manifest file: a service with ``endpoints`` endpoints."""
    lines = [
        "services:",
        f"  - name: Service {s}",
        '    version: "1"',
        "    errorSets:",
        "      - name: JSON errors",
        "        type: application/json",
        "        errorMessages:",
        "          - {id: ERR_403_DEVELOPER_OVER_QPS, status: Too Many Requests}",
        "    endpoints:",
    ]
    for e in range(endpoints):
        lines += [
            f"      - name: Endpoint {e}",
            f"        requestPathAlias: /s{s}/e{e}",
            f"        trafficManagerDomain: api{s % 7}.example.com",
            f"        publicDomains: [api{s % 7}.example.com]",
            "        systemDomains: [backend.example.net]",
            "        supportedHttpMethods: [get, post]",
            "        errorSet: JSON errors",
            "        connectionTimeoutForSystemDomainRequest: 10",
            "        requestProtocol: rest",
            "        systemDomainCredentialSecret: ${BENCH_SECRET:-}",
            "        cors: {allDomainsEnabled: false, maxAge: 60, domainsAllowed: ['https://app.example.com']}",
            "        cache: {cacheTtlOverride: 30, contentCacheKeyHeaders: [accept]}",
            "        methods:",
            "          - {name: getThing, sampleJsonResponse: '{}'}",
        ]
    return "\n".join(lines) + "\n"


def common_file(services: int) -> str:
    """Domains and a package whose plan is entitled to every service."""
    lines = ["domains: [example.com, example.net]", "packages:", "  - name: Everything", "    plans:",
             "      - name: Gold", "        rateLimitCeiling: 1000", "        services:"]
    lines += [f"          - name: Service {s}" for s in range(services)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=100)
    parser.add_argument("--endpoints", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for s in range(args.services):
            with open(os.path.join(tmp, f"service-{s:03d}.yaml"), "w", encoding="utf-8") as fh:
                fh.write(service_file(s, args.endpoints))
        with open(os.path.join(tmp, "common.yaml"), "w", encoding="utf-8") as fh:
            fh.write(common_file(args.services))
        size = sum(os.path.getsize(os.path.join(tmp, n)) for n in os.listdir(tmp))
        validate([tmp], env={})  # warm-up: compiles the validators once, as a CLI run does
        started, cpu = time.perf_counter(), time.process_time()
        result = validate([tmp], env={})
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        cli_wall, cli_cpu, cli_rss, cli_exit = cli_run(tmp)
    total = args.services * args.endpoints
    print(f"validate: {total} endpoints in {len(result.files)} files ({size / 1e6:.1f} MB): "
          f"{elapsed:.2f} s ({cpu:.2f} s CPU), {result.objects} objects, {result.errors} errors, {result.warnings} warnings "
          f"(budget 3 s)")
    print(f"apimctl validate (new process: start-up, imports, schema compilation included): "
          f"{cli_wall:.2f} s ({cli_cpu:.2f} s CPU), peak RSS {cli_rss:.0f} MB, exit {cli_exit}")


def cli_run(directory: str) -> tuple[float, float, float, int]:
    """Wall and CPU seconds and peak RSS (MB) of ``apimctl validate DIRECTORY`` in a fresh
    interpreter (``os.wait4``), and its exit code."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "apimctl", "validate", directory], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=dict(os.environ, BENCH_SECRET=""))
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


if __name__ == "__main__":
    main()
