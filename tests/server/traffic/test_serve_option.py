"""``apimctl serve --traffic-port``: the traffic listener beside the management API, in one
process; both stop together; a request head beyond the listener's bound is a 431 with
either HTTP parser."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

# apimctl as if neither httptools nor uvloop were installed: the pure-Python fallback (h11, asyncio)
WITHOUT_C_PARTS = ("import sys; sys.modules.update(httptools=None, uvloop=None); "
                   "from apimctl.cli import main; sys.argv[0] = 'apimctl'; main()")


@pytest.mark.parametrize("start", [["-m", "apimctl"], ["-c", WITHOUT_C_PARTS]], ids=["installed", "pure-python"])
def test_serve_opens_the_traffic_listener(tmp_path: Path, start: list[str]) -> None:
    process = subprocess.Popen(
        [sys.executable, *start, "serve", "--port", "0", "--traffic-port", "0", "--db",
         str(tmp_path / "s.db"), "--operator-token", "op"], stderr=subprocess.PIPE, text=True)
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 30
        while not any(line.startswith("traffic manager on ") for line in lines):
            assert process.stderr is not None and time.monotonic() < deadline
            lines.append(process.stderr.readline())
        api = re.search(r"(http://127\.0\.0\.1:\d+)/v3/rest", "".join(lines))
        traffic = re.search(r"traffic manager on (http://127\.0\.0\.1:\d+)", "".join(lines))
        assert api and traffic
        answer = httpx.get(f"{traffic.group(1)}/v1/x", headers={"Host": "api.example.com"})
        assert (answer.status_code, answer.reason_phrase) == (596, "Service Not Found")  # the platform's phrase
        calls = httpx.get(f"{api.group(1)}/operator/traffic", headers={"Authorization": "Bearer op"}).json()
        assert [(c["path"], c["decidedBy"]) for c in calls] == [("/v1/x", "route")]
        url = httpx.URL(traffic.group(1))
        with socket.create_connection((str(url.host), int(url.port or 80)), timeout=5) as caller:
            caller.sendall(b"GET /v1/x HTTP/1.1\r\nHost: api.example.com\r\n")
            for _ in range(64):  # 1 MiB of header fields, with either parser
                caller.sendall(b"X-Big: " + b"b" * 16384 + b"\r\n")
            assert caller.recv(64).startswith(b"HTTP/1.1 431 ")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)
