"""A real ``apimctl apply`` stopped with SIGSTOP past its lease's lifetime (a frozen CI runner),
taken over by another apply, then resumed: it writes nothing more (not even its lease), exits 3
and lists what it did; the area holds no duplicate.

One scenario per dialect (``apimctl serve`` and ``apimctl serve --dialect mashery``), both run
side by side (each against its own server) so that their waits overlap; the apply that takes
over runs in this process. The lease lives
:data:`LIFETIME` seconds here (the hidden ``APIMCTL_LEASE_LIFETIME``).
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

import pytest

from apimctl.kinds.role import LEASE_NAME

from .apply_support import Runs, Server, apimctl_env, server
from .conftest import DIALECTS
from .test_lease_fencing import events_in, events_manifest

LIFETIME = 2.0  # seconds the lease lives without renewal
EVENTS = 24


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
            env=apimctl_env(self.srv, self.token, {"APIMCTL_LEASE_LIFETIME": str(LIFETIME)}),
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
            srv = stack.enter_context(server(tmp, *options, areas=1))
            out.append(Scenario(dialect, srv, srv.fresh_token(), events_manifest(tmp / "m", EVENTS)))
        yield out
        for one in out:
            if one.holder is not None and one.holder.poll() is None:
                one.holder.send_signal(signal.SIGCONT)
                one.holder.kill()
                one.holder.wait()


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    stdout, stderr = proc.communicate(timeout=60)
    return proc.returncode, stdout, stderr


def test_a_paused_holder_writes_nothing_after_the_takeover(scenarios: list[Scenario]) -> None:
    for one in scenarios:  # slow enough to be stopped half-way: 20 calls a second, one at a time
        one.holder = one.start("--qps", "20", "--parallelism", "1")
    deadline = time.monotonic() + 60
    while any(not one.stopped for one in scenarios) and time.monotonic() < deadline:
        for one in scenarios:
            assert one.holder is not None
            if not one.stopped and one.written() >= 3:
                one.holder.send_signal(signal.SIGSTOP)  # a frozen runner
                one.stopped = time.monotonic()
            assert one.holder.poll() is None, finish(one.holder)
        time.sleep(0.01)
    for one in scenarios:
        assert one.stopped and 3 <= one.written() < EVENTS, one.dialect
    time.sleep(max(0.0, max(one.stopped for one in scenarios) + LIFETIME + 0.5 - time.monotonic()))
    for one in scenarios:  # the lease has expired: another apply (in this process) takes it over
        taker = Runs().run(one.srv, "apply", "--auto-approve", str(one.folder), token=one.token,
                           env={"APIMCTL_LEASE_LIFETIME": str(LIFETIME)})
        one.outputs["taker"] = (taker.returncode, taker.stdout, taker.stderr)
        one.writes = one.srv.writes()
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
    assert one.srv.writes() == one.writes, (one.dialect, stderr)  # nothing more, not even its lease
    assert code == 3 and "Traceback" not in stderr, (one.dialect, stdout, stderr)
    assert "the apply lease was lost" in stderr, stderr
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["exit_code"] == 3 and "apply lease was lost" in summary["stopped"]
    assert summary["summary"]["done"] >= 3  # what it did is listed
    assert events_in(one.srv, one.token) == Counter({f"Upgrade {i}": 1 for i in range(EVENTS)}), one.dialect
    assert LEASE_NAME not in [r["name"] for r in one.srv.get("/roles", {"limit": "1000"}, one.token)]
