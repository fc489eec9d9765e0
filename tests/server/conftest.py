"""Shared fixtures of the reference-server tests.

``server_config`` (a fresh database under ``tmp_path``, one static token per area, a client
and a user for the token exchange, domains auto-approved), ``app`` (the Starlette app),
``client`` (an in-process HTTP client on the server root), ``auth_headers`` (the bearer
header of area ``a``), and :func:`run_uvicorn`, a context manager running a real uvicorn
server on 127.0.0.1 with a free port in a thread (with the server's ``UVICORN_OPTIONS``, as
``apimctl serve`` runs it) and yielding its base URL; for the suite written
from the specification, ``http`` (its in-process server) and ``api`` (a client of area A).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from receiver import PROCEED, Receiver, serve_in_thread
from spec_helpers import TOKEN_A, Api, serve, with_domains

from apimctl.server import UVICORN_OPTIONS, ServerConfig, create_app

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
    app.state.server.close()


@pytest.fixture
def auth_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


@contextmanager
def run_uvicorn(config: ServerConfig) -> Iterator[str]:
    """A real uvicorn server on 127.0.0.1 in a thread; yields ``http://127.0.0.1:PORT``."""
    with serve_in_thread(create_app(config), **UVICORN_OPTIONS) as base_url:
        yield base_url


@pytest.fixture
def uvicorn_runner() -> Any:
    """:func:`run_uvicorn`, for tests that cannot import this module by name."""
    return run_uvicorn


# --- the spec suite's clients (spec_helpers.serve: areas, tokens and users of its own) -------


@pytest.fixture
def http(tmp_path: Path) -> Iterator[httpx.Client]:
    with serve(tmp_path) as test_client:
        yield test_client


@pytest.fixture
def api(request: pytest.FixtureRequest, http: httpx.Client) -> Api:
    """A client of area A; modules that set ``WITH_DOMAINS = True`` get the test domains too."""
    a = Api(http, TOKEN_A)
    if getattr(request.module, "WITH_DOMAINS", False):
        with_domains(a)
    return a


# --- event triggers: one callback receiver per module, reset for every test ----------------


@pytest.fixture(scope="module")
def running_receiver() -> Iterator[Receiver]:
    with Receiver().running() as rec:
        yield rec


@pytest.fixture
def receiver(running_receiver: Receiver) -> Receiver:
    running_receiver.clear()
    running_receiver.replies.clear()
    running_receiver.default = PROCEED
    return running_receiver
