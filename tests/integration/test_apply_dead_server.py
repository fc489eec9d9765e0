"""`apimctl apply` against a server that dies mid-apply, or is not there at all: the client's
breaker opens after a few connection failures in a row, the apply starts no further step and
ends in seconds with exit 3 and the usual summary (before: every step retried on its own, for
minutes and over a thousand calls).

A reference server subprocess on 127.0.0.1, killed with SIGKILL after some writes, in either
dialect (``apimctl serve`` and ``apimctl serve --dialect mashery``, the ``dialect`` fixture).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from apimctl import kinds

from .apply_support import (
    TOKEN,
    Runs,
    Server,
    apimctl_env,
    apply_summary,
    count_calls,
    free_port,
    server,
    write_manifest,
)

SAFETY = 120  # seconds: only a guard against a hang; the assertions are on calls and outcomes


def test_apply_stops_within_seconds_when_the_server_dies(tmp_path: Path, dialect_options: tuple[str, ...]) -> None:
    folder = write_manifest(tmp_path / "m", services=8)
    with server(tmp_path, *dialect_options) as srv:
        proc = subprocess.Popen(
            [sys.executable, "-m", "apimctl", "apply", "--auto-approve", "--qps", "6", "--parallelism", "2",
             "--format", "json", str(folder)],
            env=apimctl_env(srv, TOKEN), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + SAFETY
        while srv.writes() < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        seen = count_calls(srv.calls(), ("GET", "POST", "PUT", "DELETE"))  # every call before its death
        assert srv.proc is not None
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(10)
        died = time.monotonic()
        stdout, stderr = proc.communicate(timeout=SAFETY)
        took = time.monotonic() - died
    assert proc.returncode == 3, stdout + stderr
    assert "Traceback" not in stderr
    result = apply_summary(stdout)
    assert result["done"] and result["skipped"], result  # the usual summary: done / failed / not started
    assert "127.0.0.1" in result["stopped"] and "unreachable" in result["stopped"], result["stopped"]
    assert any(s["reason"].startswith("not started") for s in result["skipped"])
    assert result["non_converged"] == []  # nothing is read back from a dead server
    # the apply's calls (the Calls total counts every call): those the server saw before its
    # death, and a handful after it
    after_death = result["calls"]["total"] - seen
    assert after_death <= 12, (after_death, result["calls"], seen)
    assert "could not release the apply lease" in stderr and "apimctl unlock" in stderr
    print(f"dead server: {after_death} calls after its death, {took:.1f} s, {result['calls']}")
    assert took < 60, took  # seconds, not minutes (a generous bound; typically ~2 s)


def test_a_server_that_is_not_there_fails_fast(tmp_path: Path) -> None:
    folder = write_manifest(tmp_path / "m", services=1)
    gone = Server(tmp_path, port=free_port())  # nothing listens there
    started = time.monotonic()
    proc = Runs().run(gone, "apply", "--auto-approve", str(folder))
    assert proc.returncode == 1
    assert f"127.0.0.1:{gone.port} is unreachable" in proc.stderr
    # the first read asks for every kind's first page at once: those attempts fail together,
    # and nothing is sent after them
    attempts = re.search(r"\((\d+) connection attempts in a row failed", proc.stderr)
    assert attempts is not None, proc.stderr
    assert 3 <= int(attempts.group(1)) <= len(kinds.TOP_LEVEL) + 1, proc.stderr
    assert time.monotonic() - started < SAFETY
