"""A real ``apimctl apply`` stopped with SIGSTOP past its lease's lifetime (a frozen CI runner),
taken over by another apply, then resumed: it writes nothing more, exits 3 and lists what it
did; the area holds no duplicate. And ``plan --detailed-exitcode`` exits 2 while an area holds
duplicates, saying how to repair them.

One scenario per dialect (``apimctl serve`` and ``apimctl serve --dialect mashery``), both run
side by side (each against its own server) so that their waits overlap; the apply that takes
over runs in this process. The lease lives
:data:`LIFETIME` seconds here (the hidden ``APIMCTL_APPLY_LEASE_LIFETIME``).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from apimctl.kinds.role import LEASE_NAME

from .apply_support import Runs, Server, apimctl_env, count_calls, server
from .conftest import DIALECTS
from .test_lease_fencing import events_in, events_manifest

LIFETIME = 2.0  # seconds the lease lives without renewal
EVENTS = 24  # enough for the holder to be caught half-way on a busy machine
QPS = 10  # the holder's calls a second (its lease renewals take some of them)


@dataclass
class Scenario:
    """One dialect's server, its area, and the runs against it."""

    dialect: str
    srv: Server
    token: str
    folder: Path
    holder: subprocess.Popen[str] | None = None
    stopped: float = 0.0  # when the holder was stopped (monotonic)
    writes: int = 0  # the server's writes once the taker was done
    outputs: dict[str, tuple[int, str, str]] = field(default_factory=dict)

    def start(self, *extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "apimctl", "apply", "--auto-approve", "--format", "json", *extra,
             str(self.folder)],
            env=apimctl_env(self.srv, self.token, {"APIMCTL_APPLY_LEASE_LIFETIME": str(LIFETIME)}),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)

    def written(self) -> int:
        return sum(events_in(self.srv, self.token).values())


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Scenario]]:
    with ExitStack() as stack:
        out = []
        for dialect in DIALECTS:
            tmp = tmp_path_factory.mktemp(f"paused-{dialect}")
            options = () if dialect == "spec" else ("--dialect", dialect)
            srv = stack.enter_context(server(tmp, *options, areas=2))
            out.append(Scenario(dialect, srv, srv.fresh_token(), events_manifest(tmp / "m", EVENTS)))
        yield out
        for one in out:
            if one.holder is not None and one.holder.poll() is None:
                one.holder.send_signal(signal.SIGCONT)
                one.holder.kill()
                one.holder.wait()


def settled_writes(srv: Server) -> int:
    """The server's successful writes once their count is settled (a call is counted after its
    answer). A write refused changes nothing: a renewal of the lease already on the wire when
    the holder was stopped may reach the server afterwards, and find the role gone."""
    count = count_calls(srv.calls(), ("POST", "PUT", "DELETE"), "200")
    while True:
        time.sleep(0.1)
        again = count_calls(srv.calls(), ("POST", "PUT", "DELETE"), "200")
        if again == count:
            return count
        count = again


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    stdout, stderr = proc.communicate(timeout=60)
    return proc.returncode, stdout, stderr


def test_a_paused_holder_writes_nothing_after_the_takeover(scenarios: list[Scenario]) -> None:
    for one in scenarios:  # one call at a time, at a steady rate: stopped between two of them
        one.holder = one.start("--qps", str(QPS), "--parallelism", "1")
    seen = {one.dialect: 0 for one in scenarios}
    stop_at: dict[str, float] = {}
    deadline = time.monotonic() + 60
    while any(not one.stopped for one in scenarios) and time.monotonic() < deadline:
        for one in scenarios:
            assert one.holder is not None
            if one.stopped:
                continue
            if one.dialect in stop_at:
                if time.monotonic() >= stop_at[one.dialect]:
                    one.holder.send_signal(signal.SIGSTOP)  # a frozen runner
                    one.stopped = time.monotonic()
                continue
            written = one.written()
            if written > seen[one.dialect] >= 2:  # a write was just answered: the next is a slot away
                stop_at[one.dialect] = time.monotonic() + 0.35 / QPS
            seen[one.dialect] = written
            assert one.holder.poll() is None, finish(one.holder)
        time.sleep(0.005)
    for one in scenarios:
        assert one.stopped and 3 <= one.written() < EVENTS, one.dialect
    time.sleep(max(0.0, max(one.stopped for one in scenarios) + LIFETIME + 0.5 - time.monotonic()))
    for one in scenarios:  # the lease has expired: another apply (in this process) takes it over
        taker = Runs().run(one.srv, "apply", "--auto-approve", str(one.folder), token=one.token,
                           env={"APIMCTL_APPLY_LEASE_LIFETIME": str(LIFETIME)})
        one.outputs["taker"] = (taker.returncode, taker.stdout, taker.stderr)
        one.writes = settled_writes(one.srv)
    for one in scenarios:
        assert one.holder is not None
        one.holder.send_signal(signal.SIGCONT)
    for one in scenarios:
        assert one.holder is not None
        one.outputs["holder"] = finish(one.holder)
    for one in scenarios:
        check(one)


def check(one: Scenario) -> None:
    code, _, stderr = one.outputs["taker"]
    assert code == 0 and "taking over a stale apply lease" in stderr, (one.dialect, stderr)
    code, stdout, stderr = one.outputs["holder"]
    assert settled_writes(one.srv) == one.writes, (one.dialect, stderr)  # nothing more
    assert code == 3 and "Traceback" not in stderr, (one.dialect, stdout, stderr)
    assert "the apply lease was lost" in stderr, stderr
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["exit_code"] == 3 and "apply lease was lost" in summary["stopped"]
    assert summary["summary"]["done"] >= 3  # what it did is listed
    assert events_in(one.srv, one.token) == Counter({f"Upgrade {i}": 1 for i in range(EVENTS)}), one.dialect
    assert LEASE_NAME not in [r["name"] for r in one.srv.get("/roles", {"limit": "1000"}, one.token)]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_plan_counts_duplicates_as_changes_until_they_are_repaired(
        scenarios: list[Scenario], tmp_path: Path, dialect: str) -> None:
    srv = next(one.srv for one in scenarios if one.dialect == dialect)
    token = srv.fresh_token()
    folder = events_manifest(tmp_path / "m", 1)
    runs = Runs()
    assert runs.run(srv, "apply", "--auto-approve", str(folder), token=token).returncode == 0
    copy = {"name": "Upgrade 0", "startDateTime": "2026-12-01T02:00:00Z", "endDateTime": "2026-12-01T04:00:00Z"}
    reply = httpx.post(f"{srv.url}/scheduledMaintenanceEvents", json=copy, timeout=5,
                       headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 200, reply.text
    for fmt in ("text", "markdown"):
        held = runs.run(srv, "plan", "--detailed-exitcode", "--format", fmt, str(folder), token=token)
        assert held.returncode == 2, held.stdout + held.stderr
        assert "--repair-duplicates" in held.stdout
    assert runs.run(srv, "plan", str(folder), token=token).returncode == 0  # without the flag: 0
    repaired = runs.run(srv, "apply", "--auto-approve", "--repair-duplicates", str(folder), token=token)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert events_in(srv, token) == Counter({"Upgrade 0": 1})
    assert runs.run(srv, "plan", "--detailed-exitcode", str(folder), token=token).returncode == 0
