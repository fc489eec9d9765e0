"""Running the server and the command line inside the test process: :func:`uvicorn_in_thread`
serves an app on 127.0.0.1 (a free port) in a thread; :func:`entry_point` runs ``apimctl`` as
its console script does (``sys.argv``, ``run_guarded``) and answers (exit code, stdout, stderr)."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest


@contextmanager
def uvicorn_in_thread(app: Any, **options: Any) -> Iterator[int]:
    """``app`` under uvicorn (``options``: more ``uvicorn.Config`` settings, e.g. TLS files) for
    the ``with`` block; yields the port."""
    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="off", **options))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.started, "the server did not start"
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        close_server(app)


def close_server(app: Any) -> None:
    """Close the database connections of the reference server ``app`` is (one per thread that
    served; opened again if it serves once more), so that the apps a test run makes do not hold
    their files open until the garbage collector frees them; another app is left alone."""
    state = getattr(app, "state", None)
    if state is not None and hasattr(state, "server"):
        state.server.close()


def entry_point(monkeypatch: pytest.MonkeyPatch,
                capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``run(*args)``: the real entry point in-process: (exit code, stdout, stderr)."""
    from apimctl.cli import cli
    from apimctl.cli.common import run_guarded

    def invoke(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["apimctl", *args])
        capsys.readouterr()
        code = run_guarded(cli)
        out, err = capsys.readouterr()
        return code, out, err

    return invoke
