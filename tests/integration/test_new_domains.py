"""A first apply to an area that holds new domains for approval: plan warns before it, and
apply says what to do instead of "Rerun to converge" (a rerun alone changes nothing)."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from apimctl.cli import cli
from apimctl.cli.common import run_guarded

MANIFEST = """\
services:
  - name: Hello
    endpoints:
      - name: World
        requestPathAlias: /hello
        trafficManagerDomain: api.example.org
        publicDomains: [api.example.org]
        systemDomains: [backend.example.org]
        supportedHttpMethods: [get]
domains: [example.org]
"""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory, dialect: str) -> Iterator[str]:
    """A reference server of ``dialect`` that holds new domains as waiting (no auto-approval)."""
    import uvicorn

    from apimctl.server import ServerConfig, create_app

    folder = tmp_path_factory.mktemp(f"domains-{dialect}")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    app = create_app(ServerConfig(db_path=str(folder / "s.db"), tokens={"t0ken": "area-1"},
                                  dialect=dialect, auto_approve_domains=False))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.started
    try:
        yield f"http://127.0.0.1:{port}/v3/rest"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.yaml").write_text(MANIFEST)

    def invoke(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["apimctl", *args])
        capsys.readouterr()
        code = run_guarded(cli)
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def test_plan_warns_and_apply_says_what_to_do(url: str, run: Callable[..., tuple[int, str, str]]) -> None:
    code, _, err = run("plan", "m.yaml", "--url", url, "--token", "t0ken")
    assert code == 0, err
    assert ("Warning: domain example.org is new: the area holds it as waiting until an operator "
            "approves it, and refuses endpoint Hello/World until then") in err
    code, out, err = run("apply", "m.yaml", "--url", url, "--token", "t0ken", "--auto-approve",
                         "--no-color")
    assert code == 3, out + err
    assert "Warning: domain example.org is new" in err  # said before the first write too
    assert "A rerun cannot converge yet: the new domain example.org waits for approval" in out
    assert "Rerun to converge" not in out


def test_the_embedded_server_approves_at_once(run: Callable[..., tuple[int, str, str]]) -> None:
    code, _, err = run("plan", "m.yaml", "--url", "embedded")
    assert code == 0 and "is new" not in err
