"""A signal ends an apply within seconds even when the area hangs: how GitHub's runner cancels
a job (SIGINT, SIGTERM 7.5 s later, SIGKILL 2.5 s after that) must find the summary printed.

The apply is a ``python -m apimctl`` subprocess against a reference server subprocess reached
through :class:`HangAfterLease`, a small HTTP relay that passes every request until the apply
has taken its lease and sent one more write, and from then on holds every request unanswered
(an area that hangs in the middle of an apply). The signal is sent once the relay holds a
request: a step's call is running and will never get its reply.
"""

from __future__ import annotations

import http.client
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from .apply_support import Server, apimctl_env, server, write_manifest

HANG_GUARD = 15.0  # seconds: a guard against a hang, twice what the runner allows


class HangAfterLease:
    """Relays HTTP to ``port`` on 127.0.0.1 until the lease is taken and ``writes`` more writes
    went through; then holds every request (``held`` counts them) until closed."""

    def __init__(self, port: int, writes: int = 1) -> None:
        self.port, self.writes = port, writes
        self.leased = False
        self.held = 0
        self.release = threading.Event()
        self.lock = threading.Lock()
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _relay(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if relay.hangs(self.command, self.path, body):
                    relay.release.wait()
                    self.close_connection = True
                    return
                conn = http.client.HTTPConnection("127.0.0.1", relay.port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                reply = conn.getresponse()
                data = reply.read()
                conn.close()
                self.send_response(reply.status)
                for name, value in reply.getheaders():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _relay

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v3/rest"

    def hangs(self, method: str, path: str, body: bytes) -> bool:
        """Whether this request is held: the lease's POST passes and arms the relay, then
        ``writes`` more writes pass, then nothing does."""
        with self.lock:
            if not self.leased:
                self.leased = method == "POST" and b"apimctl-apply-lease" in body
                return False
            if self.writes <= 0:
                self.held += 1
                return True
            if method != "GET":
                self.writes -= 1
            return False

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def area_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with server(tmp_path_factory.mktemp("hung-apply"), areas=2) as srv:
        yield srv


def _start(srv: Server, relay: HangAfterLease, folder: Path, cwd: Path) -> subprocess.Popen[str]:
    env = apimctl_env(srv, srv.fresh_token(), {"APIMCTL_URL": relay.url, "TERM": "dumb"})
    env.pop("CI", None)
    return subprocess.Popen([sys.executable, "-m", "apimctl", "apply", "--auto-approve", "--parallelism", "1",
                             str(folder)], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_until_held(relay: HangAfterLease, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while relay.held == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert relay.held, "the apply never reached the hung area"


@pytest.mark.slow
def test_sigterm_against_an_area_that_hangs_ends_the_apply_within_seconds(
        area_server: Server, tmp_path: Path) -> None:
    """No new step, the hung call cut after a few seconds, the lease left to expire (the area
    does not answer the release) and said so, the summary printed, exit 130; the runner's
    SIGTERM 7.5 s after its SIGINT would find it gone."""
    relay = HangAfterLease(area_server.port)
    try:
        proc = _start(area_server, relay, write_manifest(tmp_path / "m", services=3), tmp_path)
        try:
            _wait_until_held(relay, proc)
            proc.send_signal(signal.SIGTERM)
            sent = time.monotonic()
            stdout, stderr = proc.communicate(timeout=HANG_GUARD)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    finally:
        relay.close()
    print(f"apply ended {took:.2f} s after SIGTERM")
    assert proc.returncode == 130, stdout + stderr
    assert "SIGTERM received" in stderr and "Traceback" not in stderr, stderr
    assert "Apply interrupted:" in stdout and "Not started:" in stdout, stdout
    assert "cancelled: interrupted" in stdout + stderr, stdout + stderr
    assert "it is left to expire" in stderr and "apimctl unlock " in stderr, stderr


@pytest.mark.slow
def test_a_second_signal_against_an_area_that_hangs_exits_at_once(area_server: Server, tmp_path: Path) -> None:
    relay = HangAfterLease(area_server.port)
    try:
        proc = _start(area_server, relay, write_manifest(tmp_path / "m", services=3), tmp_path)
        try:
            _wait_until_held(relay, proc)
            proc.send_signal(signal.SIGINT)
            time.sleep(0.2)
            proc.send_signal(signal.SIGTERM)
            stdout, stderr = proc.communicate(timeout=HANG_GUARD)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    finally:
        relay.close()
    assert proc.returncode == 130, stdout + stderr
    assert "SIGTERM again: exiting at once" in stderr and "left to expire" in stderr, stderr
    assert "Apply interrupted:" not in stdout and "Traceback" not in stderr, stdout + stderr
