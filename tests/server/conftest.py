"""Shared fixtures of the reference-server tests.

``server_config`` (a fresh database under ``tmp_path``, one static token per area, a client
and a user for the token exchange, domains auto-approved), ``app`` (the Starlette app),
``client`` (an in-process HTTP client on the server root), ``auth_headers`` (the bearer
header of area ``a``), and :func:`run_uvicorn`, a context manager running a real uvicorn
server on 127.0.0.1 with a free port in a thread and yielding its base URL.
"""

from __future__ import annotations

import socket
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from apimctl.server import ServerConfig, create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

TOKEN, AREA = "token-a", "a"
OTHER_TOKEN, OTHER_AREA = "token-b", "b"
OPERATOR = "operator-token"


@pytest.fixture
def server_config(tmp_path: Path) -> ServerConfig:
    return ServerConfig(
        db_path=str(tmp_path / "server.db"),
        tokens={TOKEN: AREA, OTHER_TOKEN: OTHER_AREA},
        clients={"client": "client-secret"},
        users=[("alice", "alice-password", AREA)],
        auto_approve_domains=True,
        operator_token=OPERATOR,
    )


@pytest.fixture
def app(server_config: ServerConfig) -> Any:
    return create_app(server_config)


@pytest.fixture
def client(app: Any) -> Iterator[httpx.Client]:
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client
    app.state.server.store.close()


@pytest.fixture
def auth_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def run_uvicorn(config: ServerConfig) -> Iterator[str]:
    """A real uvicorn server on 127.0.0.1 in a thread; yields ``http://127.0.0.1:PORT``."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def uvicorn_runner() -> Any:
    """:func:`run_uvicorn`, for tests that cannot import this module by name."""
    return run_uvicorn
