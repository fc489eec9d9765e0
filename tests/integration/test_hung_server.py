"""A server that accepts connections and answers nothing, or drips its reply a byte at a time,
cannot stall a command: every call has a total deadline (``--timeout``) that counts for the
breaker like a refused connection, ``--deadline`` bounds a whole command, and SIGTERM ends
one within seconds (exit 130).

Two tiny TCP servers on 127.0.0.1 (module-scoped): one reads requests and never answers,
one answers ``200`` headers and then one byte of the body per half second. The commands
run in-process through the real entry point, and once as a subprocess for SIGTERM. A server
that answers nothing tells no dialect: each test names one (``--dialect``), both are used.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from apimctl.cli import cli
from apimctl.cli.common import run_guarded

from .apply_support import write_manifest

SAFETY = 60  # seconds: a guard against a hang only


class Silent:
    """Accepts connections on 127.0.0.1; ``drip``: answers a 200 whose body comes one byte
    every half second, else never answers. ``accepted`` counts connections."""

    def __init__(self, drip: bool) -> None:
        self.drip = drip
        self.accepted = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v3/rest"

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                if self.drip:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: 100000\r\n\r\n[")
                while not self.stop.wait(0.5):
                    if self.drip:
                        conn.sendall(b" ")
            except OSError:
                pass

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture(scope="module")
def silent() -> Iterator[Silent]:
    srv = Silent(drip=False)
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def dripping() -> Iterator[Silent]:
    srv = Silent(drip=True)
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def manifests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_manifest(tmp_path_factory.mktemp("hung") / "m", services=1, secrets=False)


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, float]:
    monkeypatch.setattr(sys, "argv", ["apimctl", *args])
    started = time.monotonic()
    code = run_guarded(cli)
    took = time.monotonic() - started
    out = capsys.readouterr()
    return code, out.out + out.err, took


def connection(srv: Silent, dialect: str, timeout: str) -> list[str]:
    return ["--url", srv.url, "--token", "tok-hung-1234", "--qps", "0", "--timeout", timeout,
            "--dialect", dialect]


@pytest.mark.parametrize(("which", "dialect"), [("silent", "spec"), ("dripping", "mashery")])
def test_plan_gives_up_on_a_server_that_answers_nothing(which: str, dialect: str,
                                                        request: pytest.FixtureRequest, manifests: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Each call ends at its deadline, however the server drips; three in a row open the
    breaker: seconds, not minutes."""
    srv: Silent = request.getfixturevalue(which)
    code, text, took = run(monkeypatch, capsys, "plan", *connection(srv, dialect, "1"), str(manifests))
    assert code == 1, text
    assert f"127.0.0.1:{srv.port} is unreachable" in text and "no complete reply within 1 s" in text, text
    assert "Traceback" not in text
    assert took < 8, took


@pytest.mark.parametrize(("command", "dialect"), [("plan", "spec"), ("apply", "mashery")])
def test_the_command_deadline_bounds_a_whole_command(command: str, dialect: str, silent: Silent,
                                                     manifests: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """``--timeout`` stays per call (here longer than the command may take); ``--deadline``
    ends the command, apply included, before it wrote anything."""
    extra = ["--auto-approve"] if command == "apply" else []
    code, text, took = run(monkeypatch, capsys, command, *extra, *connection(silent, dialect, "30"),
                           "--deadline", "1", str(manifests))
    assert code == 1, text
    assert "did not finish within its deadline of 1 s" in text and "nothing was written" in text, text
    assert took < 4, took


@pytest.mark.parametrize(("command", "dialect"), [("plan", "spec"), ("apply", "mashery")])
def test_sigterm_ends_a_command_against_a_hung_server(command: str, dialect: str, tmp_path: Path,
                                                      silent: Silent, manifests: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("APIMCTL_")}
    extra = ["--auto-approve"] if command == "apply" else []
    proc = subprocess.Popen([sys.executable, "-m", "apimctl", command, *extra, *connection(silent, dialect, "30"),
                             str(manifests)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, cwd=tmp_path)
    before = silent.accepted
    waited = time.monotonic() + SAFETY
    while silent.accepted == before and proc.poll() is None and time.monotonic() < waited:
        time.sleep(0.02)  # the plan is reading (its loop runs, the handlers are installed)
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    stdout, stderr = proc.communicate(timeout=SAFETY)
    assert proc.returncode == 130, stdout + stderr
    said = "SIGTERM received" if command == "plan" else "nothing was written"
    assert said in stdout + stderr and "Traceback" not in stderr, stdout + stderr
    assert time.monotonic() - sent < 5


EXCHANGE = ["--api-key", "key-hung", "--api-secret", "secret-hung-5678", "--username", "ops",
            "--password", "pw-hung-9012", "--area", "default"]


@pytest.mark.parametrize("dialect", ["spec", "mashery"])
def test_a_token_exchange_that_times_out_fails_the_plan_at_once(dialect: str, manifests: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Every read of the plan waits for the token: the exchange that timed out timed out for
    each of them, and the breaker counts it so. One exchange is sent, not three one after the
    other (three full ``--timeout``s), as a static token fails after one round of reads. The
    area is this test's own: a shared one may still be accepting an earlier test's connections."""
    silent = Silent(drip=False)
    try:
        _one_exchange(dialect, silent, manifests, monkeypatch, capsys)
    finally:
        silent.close()


def _one_exchange(dialect: str, silent: Silent, manifests: Path, monkeypatch: pytest.MonkeyPatch,
                  capsys: pytest.CaptureFixture[str]) -> None:
    before = silent.accepted
    code, text, _ = run(monkeypatch, capsys, "plan", "--url", silent.url, *EXCHANGE, "--qps", "0",
                        "--timeout", "0.3", "--dialect", dialect, str(manifests))
    assert code == 1, text
    assert silent.accepted - before == 1, text
    assert "POST /v3/token" in text and f"127.0.0.1:{silent.port} is unreachable" in text, text
    assert "1 connection attempt in a row failed, for" in text, text
    assert "secret-hung-5678" not in text and "pw-hung-9012" not in text and "Traceback" not in text
