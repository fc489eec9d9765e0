"""The traffic listener of ``apimctl serve --traffic-port`` against hostile back ends and
callers, over real sockets, in both dialects: a deadline over the whole back-end exchange, a
bound on connections per back end, a cap on answers, a back-end call cancelled when its
caller leaves, redirects kept to the endpoint's system domains, the caller's forwarded
headers dropped, one ``Date`` and one ``Server``; request heads, idle connections and the
number of connections bounded; and a bounded shutdown."""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from .hostile import PUBLIC, Hostile, Serve, populate, start_serve, wait_for

MAX_ANSWER = 1_000_000
OPTIONS = ("--traffic-max-connections", "8", "--traffic-idle-timeout", "0.5", "--backend-connections", "2",
           "--backend-max-answer", str(MAX_ANSWER))


class Setup:
    def __init__(self, serve: Serve, dialect: str, backend: Hostile, other: Hostile) -> None:
        self.serve, self.dialect, self.backend, self.other = serve, dialect, backend, other


@pytest.fixture(scope="module", params=("spec", "mashery"))
def setup(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    dialect = request.param
    with Hostile() as other, Hostile(away=other.url) as backend, \
            start_serve(tmp_path_factory.mktemp("bounds"), dialect, *OPTIONS) as serve:
        populate(serve, dialect, backend, other)
        yield Setup(serve, dialect, backend, other)


def _in(setup: Setup, dialect: str) -> None:
    """Bounds of the connections do not depend on the dialect: the slower of these tests run
    in one dialect each (the other dialect's run is skipped, saying so)."""
    if setup.dialect != dialect:
        pytest.skip(f"dialect-independent, run in the {dialect} dialect")


def _decision(serve: Serve, path: str) -> str:
    """The decisions of the last call of ``path`` in the call log ("" before there is one)."""
    entries = [c for c in serve.calls() if c["path"] == path]
    return " | ".join(step["decision"] for step in entries[-1]["steps"]) if entries else ""


def _traffic_address(serve: Serve) -> tuple[str, int]:
    url = httpx.URL(serve.traffic)
    assert url.host and url.port
    return url.host, url.port


def test_a_dripping_back_end_is_a_504_at_the_deadline(setup: Setup) -> None:
    _in(setup, "spec")
    answer = setup.serve.call("/drip")  # 10 bytes at 0.5 s each; the endpoint allows 2 s in all
    assert answer.status_code == 504
    assert "within 2 s (the whole of it" in _decision(setup.serve, "/drip")


def test_an_endless_answer_is_cut_at_the_cap(setup: Setup) -> None:
    with httpx.stream("GET", f"{setup.serve.traffic}/endless", headers={"Host": PUBLIC}, timeout=15) as answer:
        received = sum(len(part) for part in answer.iter_raw())
    assert answer.status_code == 502
    assert received <= MAX_ANSWER
    assert f"longer than {MAX_ANSWER} bytes" in _decision(setup.serve, "/endless")


def _hold_calls(serve: Serve, count: int) -> tuple[list[threading.Thread], list[int]]:
    statuses: list[int] = []

    def one() -> None:
        statuses.append(serve.call("/hold").status_code)

    threads = [threading.Thread(target=one) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads, statuses


def test_one_back_end_gets_at_most_its_connections_and_others_still_answer(setup: Setup) -> None:
    _in(setup, "mashery")
    backend = setup.backend
    backend.release.clear()
    backend.most_held = 0
    threads, statuses = _hold_calls(setup.serve, 4)
    try:
        # two are held by the back end; the two others find no connection free (502)
        assert wait_for(lambda: sorted(statuses) == [502, 502], 10), statuses
        assert backend.holding == 2
        other = setup.serve.call("/other")  # another back end is not kept waiting
        assert other.status_code == 200, other.text
    finally:
        backend.release.set()
        for thread in threads:
            thread.join(15)
    assert sorted(statuses) == [200, 200, 502, 502]
    assert backend.most_held == 2


def test_a_caller_that_leaves_cancels_its_back_end_call(setup: Setup) -> None:
    backend = setup.backend
    backend.release.clear()
    before = backend.hung_up
    with socket.create_connection(_traffic_address(setup.serve), timeout=5) as caller:
        caller.sendall(f"GET /hold HTTP/1.1\r\nHost: {PUBLIC}\r\n\r\n".encode())
        assert wait_for(lambda: backend.holding == 1)
    # the endpoint would wait 30 s for the answer: the emulator hangs up at once instead
    assert wait_for(lambda: backend.hung_up == before + 1), "the back-end call went on"
    assert wait_for(lambda: backend.holding == 0)
    assert wait_for(lambda: "caller left" in _decision(setup.serve, "/hold"))  # logged as the task unwinds


def _seen(backend: Hostile, before: int) -> list[bytes]:
    return backend.heads[before:]


def test_a_redirect_elsewhere_goes_back_to_the_caller_without_credentials(setup: Setup) -> None:
    before = len(setup.other.heads)
    answer = setup.serve.call("/away", follow_redirects=False)
    assert answer.status_code == 307
    assert answer.headers["location"] == f"{setup.other.url}/landed"
    assert _seen(setup.other, before) == []  # nothing (no credentials, no body) reached the other origin
    assert "not followed" in _decision(setup.serve, "/away")


def test_a_redirect_within_the_system_domain_is_followed_with_credentials(setup: Setup) -> None:
    answer = setup.serve.call("/home", follow_redirects=False)
    assert answer.status_code == 200, answer.text
    seen = dict(answer.json())
    assert seen["authorization"].startswith("Basic ")


def test_the_back_end_reads_only_the_emulators_forwarded_headers(setup: Setup) -> None:
    prefix = "x-svc" if setup.dialect == "spec" else "x-mashery"
    forged = {"X-Svc-Host": "forged.example", "X-Mashery-Host": "forged.example",
              "X-Svc-Message-ID": "forged", "X-Mashery-Message-ID": "forged", "X-Svc-Service-ID": "forged"}
    answer = setup.serve.call("/echo", headers=forged)
    assert answer.status_code == 200, answer.text
    fields: list[list[str]] = answer.json()
    named = [(n, v) for n, v in fields if n.startswith(("x-svc-", "x-mashery-"))]
    assert sorted(n for n, _ in named) == [f"{prefix}-host", f"{prefix}-message-id"]
    assert dict(named)[f"{prefix}-host"] == PUBLIC
    assert dict(named)[f"{prefix}-message-id"] != "forged"


def test_a_forwarded_answer_has_one_date_and_one_server(setup: Setup) -> None:
    answer = setup.serve.call("/echo")
    assert len(answer.headers.get_list("date")) == 1
    assert len(answer.headers.get_list("server")) == 1


def _status_line(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n" not in data:
        part = sock.recv(4096)
        if not part:
            break
        data += part
    return data.split(b"\r\n", 1)[0]


def test_a_request_head_beyond_the_bound_is_a_431(setup: Setup) -> None:
    with socket.create_connection(_traffic_address(setup.serve), timeout=5) as caller:
        caller.sendall(f"GET /echo HTTP/1.1\r\nHost: {PUBLIC}\r\n".encode())
        for _ in range(64):  # 1 MiB of header fields: refused before the head ends
            caller.sendall(b"X-Big: " + b"b" * 16384 + b"\r\n")
        caller.sendall(b"\r\n")
        assert _status_line(caller) == b"HTTP/1.1 431 Request Header Fields Too Large"


def test_an_idle_connection_is_closed(setup: Setup) -> None:
    address = _traffic_address(setup.serve)
    with socket.create_connection(address, timeout=5) as idle, socket.create_connection(address, timeout=5) as slow:
        slow.sendall(f"GET /echo HTTP/1.1\r\nHost: {PUBLIC}\r\n".encode())  # a head that never ends
        assert idle.recv(1) == b""  # closed by the listener (the timeout of 5 s would raise)
        assert slow.recv(1) == b""


def test_connections_beyond_the_bound_are_refused_and_the_api_answers(setup: Setup) -> None:
    opened: list[socket.socket] = []
    try:
        refused = b""
        for _ in range(12):
            sock = socket.create_connection(_traffic_address(setup.serve), timeout=5)
            opened.append(sock)
            sock.setblocking(False)
            time.sleep(0.01)
            try:
                refused = sock.recv(4096)
            except BlockingIOError:
                continue
            break
        assert refused.startswith(b"HTTP/1.1 503"), refused
        assert len(opened) <= 9
        management = httpx.get(f"{setup.serve.api}/v3/rest/services", headers={"Authorization": "Bearer bounds-token"})
        assert management.status_code == 200
    finally:
        for sock in opened:
            sock.close()


def test_sigterm_ends_serve_with_a_call_in_flight(setup: Setup) -> None:
    """The last test of the module: it stops the module's server."""
    _in(setup, "mashery")
    serve, backend = setup.serve, setup.backend
    backend.release.clear()
    before = backend.hung_up
    statuses: list[Any] = []

    def in_flight() -> None:
        try:
            statuses.append(serve.call("/hold").status_code)
        except httpx.HTTPError as exc:
            statuses.append(type(exc).__name__)

    caller = threading.Thread(target=in_flight)
    caller.start()
    assert wait_for(lambda: backend.holding == 1)
    started = time.monotonic()
    serve.process.send_signal(signal.SIGTERM)
    serve.process.wait(timeout=15)  # the hang guard; the grace is 3 s (the back end would hold 30 s)
    print(f"serve exited {time.monotonic() - started:.1f} s after SIGTERM")
    caller.join(15)
    assert wait_for(lambda: backend.hung_up == before + 1)  # the back-end call was cancelled, not left running
    assert statuses == [503]  # told the server stopped, not left hanging
