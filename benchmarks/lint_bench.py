"""Benchmark: ``apimctl lint`` of 10,000 endpoints with the recommended ruleset.

Generates the manifests of ``validate_bench`` (100 services x 100 endpoints in 101 files, with
CORS, cache, methods, an error set and a plan) in a temporary directory, twice: as generated,
where every endpoint breaks two recommended rules (no ``inboundSslRequired``, no
``highSecurity``: 20,000 findings to locate), and "clean", where they keep every rule. For
each it prints the time to run the rules (the engine: JSONPath queries, functions, locating
every finding, inline disables), the whole of ``lint_paths`` (loading and validating the
manifests included), and ``apimctl lint`` as a new process. The goal is 2 s for the rules
on 10,000 endpoints; this script reports, it does not assert.

    .venv/bin/python benchmarks/lint_bench.py [--services 100] [--endpoints 100]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from validate_bench import common_file, service_file

from apimctl.lint import RECOMMENDED, lint_manifest, lint_paths, load_rulesets
from apimctl.manifests import validate
from apimctl.manifests.variables import LenientEnv

GOAL_SECONDS = 2.0
SAFE = "        requestProtocol: rest\n        inboundSslRequired: true\n        highSecurity: true\n"


def generate(folder: Path, services: int, endpoints: int, *, clean: bool) -> None:
    for s in range(services):
        text = service_file(s, endpoints)
        if clean:
            text = text.replace("        requestProtocol: rest\n", SAFE)
        (folder / f"service-{s:03d}.yaml").write_text(text, encoding="utf-8")
    (folder / "common.yaml").write_text(common_file(services).replace(
        "rateLimitCeiling: 1000", "rateLimitCeiling: 1000\n        qpsLimitCeiling: 10"), encoding="utf-8")


def measure(folder: Path, label: str, endpoints: int) -> None:
    ruleset = load_rulesets([RECOMMENDED])
    manifest = validate([str(folder)], env=LenientEnv()).manifest
    assert manifest is not None
    lint_manifest(manifest, ruleset)  # warm-up: compiled validators, imports
    started, cpu = time.perf_counter(), time.process_time()
    report = lint_manifest(manifest, ruleset)
    rules, rules_cpu = time.perf_counter() - started, time.process_time() - cpu
    started, cpu = time.perf_counter(), time.process_time()
    whole = lint_paths([str(folder)], env={})
    total, total_cpu = time.perf_counter() - started, time.process_time() - cpu
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "apimctl", "lint", str(folder), "--format", "json"],
                          capture_output=True, check=False, env=dict(os.environ, BENCH_SECRET=""))
    process = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    process_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    verdict = "within" if rules < GOAL_SECONDS else "OVER"
    print(f"{label}: {endpoints} endpoints, {len(report.rules)} rules, {len(report.findings)} findings")
    print(f"  rules (engine, locating, inline disables): {rules:.2f} s ({rules_cpu:.2f} s CPU); "
          f"goal {GOAL_SECONDS:.0f} s: {verdict}")
    print(f"  lint_paths (load + validate + rules): {total:.2f} s ({total_cpu:.2f} s CPU), "
          f"{len(whole.findings)} findings")
    print(f"  apimctl lint (new process): {process:.2f} s ({process_cpu:.2f} s CPU), exit {done.returncode}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=100)
    parser.add_argument("--endpoints", type=int, default=100)
    args = parser.parse_args()
    total = args.services * args.endpoints
    for clean in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            generate(Path(tmp), args.services, args.endpoints, clean=clean)
            measure(Path(tmp), "clean" if clean else "every endpoint breaking two rules", total)


if __name__ == "__main__":
    main()
