"""`apimctl apply` against a hostile server: injected faults, throttling, an exhausted daily
quota, and the apply process killed with SIGKILL. After each, a rerun converges with no
duplicate objects and nothing lost. Each test runs against ``apimctl serve`` and ``apimctl
serve --dialect mashery`` (the ``dialect`` fixture), whose throttling and quota replies
differ (SUPPLEMENT §6, §10.1).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from apimctl import kinds

from .apply_support import (
    OVER_QPS,
    OVER_RATE,
    TOKEN,
    TOKEN_B,
    Runs,
    Server,
    apimctl_env,
    apply_summary,
    count_calls,
    error_code,
    expected_objects,
    inventory,
    server,
    throttled_reply,
    write_manifest,
)

pytestmark = pytest.mark.slow  # every test runs a server and apimctl as processes


def assert_converged(srv_inventory: dict[str, int], services: int) -> None:
    duplicates = {k: n for k, n in srv_inventory.items() if n > 1}
    assert not duplicates, duplicates
    assert set(srv_inventory) == expected_objects(services)


def test_fault_rate_reruns_converge_without_duplicates(tmp_path: Path, dialect_options: tuple[str, ...]) -> None:
    folder = write_manifest(tmp_path / "m", services=4)
    with server(tmp_path, *dialect_options, "--fault-rate", "0.2", "--fault-seed", "7") as srv:
        runs = Runs()
        codes = []
        for _ in range(8):
            proc = runs.run(srv, "apply", "--auto-approve", "--timeout", "1", str(folder), timeout=90)
            codes.append(proc.returncode)
            assert proc.returncode in (0, 1, 3), proc.stderr
            assert "Traceback" not in proc.stderr
            if proc.returncode == 0:
                break
        assert codes[-1] == 0, (codes, proc.stdout, proc.stderr)
        assert srv.calls()["faults"], "the server injected no fault"
        found = inventory(srv)
        assert_converged(found, 4)
        assert sum(found.values()) == len(expected_objects(4)) == 26  # nothing lost, nothing doubled
        runs.assert_no_secrets()


def test_throttled_apply_succeeds_honouring_retry_after(tmp_path: Path, dialect: str,
                                                       dialect_options: tuple[str, ...]) -> None:
    """Over-QPS replies are retried after a wait: the server's ``Retry-After`` (``spec``), or
    about a second where the reply has none (``mashery``, which names the code in
    ``X-Mashery-Error-Code``)."""
    folder = write_manifest(tmp_path / "m", services=2)
    with server(tmp_path, *dialect_options, "--qps", "3") as srv:
        reply = throttled_reply(srv, TOKEN_B)  # the limit is per token: the apply's is untouched
        assert error_code(reply) == OVER_QPS
        assert "Retry-After" in reply.headers, dict(reply.headers)  # both (SUPPLEMENT §10.10.6)
        wait = reply.headers.get("Retry-After", "1")  # the client's wait where none is said
        refused = count_calls(srv.calls(), ("GET", "POST", "PUT", "DELETE"), status="403")
        runs = Runs()
        proc = runs.run(srv, "apply", "-v", "--auto-approve", "--qps", "10", "--format", "json", str(folder),
                        timeout=90)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        calls = srv.calls()
        assert count_calls(calls, ("GET", "POST", "PUT", "DELETE"), status="403") > refused  # it was throttled
        assert f"throttled by the server ({OVER_QPS}); every call waits {wait} s" in proc.stderr, proc.stderr
        assert apply_summary(proc.stdout)["summary"]["failed"] == 0
        assert_converged(inventory(srv), 2)


def test_daily_quota_stops_cleanly_and_a_rerun_converges(tmp_path: Path, dialect_options: tuple[str, ...]) -> None:
    folder = write_manifest(tmp_path / "m", services=4)
    # planning an empty area: one list call per top-level kind, and the dialect probe
    reads = len(kinds.TOP_LEVEL) + 1
    # enough for the plan's reads and a few writes, not for everything
    with server(tmp_path, *dialect_options, "--daily-quota", str(reads + 2), db="quota.db") as srv:
        runs = Runs()
        # --no-lock: the quota is counted for the plan's calls alone (and a lease the exhausted
        # quota cannot release would hold up the rerun below for its two minutes)
        proc = runs.run(srv, "apply", "--auto-approve", "--no-lock", "--format", "json", str(folder))
        assert proc.returncode == 3, proc.stdout + proc.stderr
        result = apply_summary(proc.stdout)
        assert result["done"] and result["stopped"]
        assert "quota" in result["stopped"].lower()
        assert all("not started" in o["reason"] or "did not complete" in o["reason"] for o in result["skipped"])
        assert result["non_converged"] == []  # the writes that succeeded are not "not converged"
        refused = httpx.get(srv.url + "/domains", timeout=5, headers={"Authorization": f"Bearer {TOKEN}"})
        assert refused.status_code == 403 and error_code(refused) == OVER_RATE, refused.text
        text = runs.run(srv, "apply", "--auto-approve", str(folder))  # still exhausted: a clear error
        assert text.returncode == 1 and "quota" in (text.stdout + text.stderr).lower()
        assert "Traceback" not in text.stderr
    # the next day (the same data, a fresh quota) the rerun converges
    with server(tmp_path, *dialect_options, db="quota.db") as srv:
        again = runs.run(srv, "apply", "--auto-approve", str(folder))
        assert again.returncode == 0, again.stdout + again.stderr
        assert_converged(inventory(srv), 4)
        runs.assert_no_secrets()


def wait_for_writes(srv: Server, at_least: int, proc: subprocess.Popen[bytes], limit: float = 30) -> None:
    deadline = time.monotonic() + limit
    while srv.writes() < at_least and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)


def test_sigkill_at_several_points_then_rerun_converges(tmp_path: Path, dialect_options: tuple[str, ...]) -> None:
    folder = write_manifest(tmp_path / "m", services=4)
    with server(tmp_path, *dialect_options) as srv:
        runs = Runs()
        env = apimctl_env(srv, TOKEN)
        sizes = []
        for writes in (0, 1, 4):  # killed while reading, then after 1 and 4 writes in all
            proc = subprocess.Popen(
                [sys.executable, "-m", "apimctl", "apply", "--auto-approve", "--qps", "8", "--parallelism", "2",
                 "--no-lock", str(folder)],  # the lease a killed run leaves: test_apply_concurrency
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            if writes:
                wait_for_writes(srv, writes, proc)
            else:
                time.sleep(1.0)
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            found = inventory(srv)
            assert not {k: n for k, n in found.items() if n > 1}, found
            sizes.append(len(found))
        assert any(0 < n < len(expected_objects(4)) for n in sizes), sizes  # killed mid-apply
        final = runs.run(srv, "apply", "--auto-approve", "--format", "json", str(folder))
        assert final.returncode == 0, final.stdout + final.stderr
        assert_converged(inventory(srv), 4)
        assert runs.run(srv, "plan", "--detailed-exitcode", str(folder)).returncode == 0


def test_interrupt_exits_130_and_a_rerun_converges(tmp_path: Path, dialect_options: tuple[str, ...]) -> None:
    folder = write_manifest(tmp_path / "m", services=3)
    with server(tmp_path, *dialect_options) as srv:
        proc = subprocess.Popen(
            [sys.executable, "-m", "apimctl", "apply", "--auto-approve", "--qps", "4", str(folder)],
            env=apimctl_env(srv, TOKEN), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        wait_for_writes(srv, 1, proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 130, err
        assert b"Traceback" not in err
        runs = Runs()
        again = runs.run(srv, "apply", "--auto-approve", str(folder))
        assert again.returncode == 0, again.stdout + again.stderr
        assert_converged(inventory(srv), 3)
