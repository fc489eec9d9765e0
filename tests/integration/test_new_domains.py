"""A first apply to an area that holds new domains for approval: plan warns before it, and
apply says what to do instead of "Rerun to converge" (a rerun alone changes nothing)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from .inprocess import entry_point, uvicorn_in_thread

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
    from apimctl.server import ServerConfig, create_app

    folder = tmp_path_factory.mktemp(f"domains-{dialect}")
    app = create_app(ServerConfig(db_path=str(folder / "s.db"), tokens={"t0ken": "area-1"},
                                  dialect=dialect, auto_approve_domains=False, operator_token="op"))
    with uvicorn_in_thread(app) as port:
        yield f"http://127.0.0.1:{port}/v3/rest"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.yaml").write_text(MANIFEST)

    return entry_point(monkeypatch, capsys)


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
    # what it says to do works: the operator's approval, then a rerun converges
    assert "POST /operator/areas/AREA/domains/ID/approve" in out and "--operator-token" in out, out
    root = url.removesuffix("/v3/rest")
    domains = httpx.get(f"{url}/domains", params={"fields": "id,domain,status"},
                        headers={"Authorization": "Bearer t0ken"}).json()
    waiting = [d for d in domains if d["domain"] == "example.org"]
    assert waiting and waiting[0]["status"] == "waiting", domains
    approved = httpx.post(f"{root}/operator/areas/area-1/domains/{waiting[0]['id']}/approve",
                          headers={"Authorization": "Bearer op"})
    assert approved.status_code < 300, approved.text
    code, out, err = run("apply", "m.yaml", "--url", url, "--token", "t0ken", "--auto-approve", "--no-color")
    assert code == 0 and "Apply complete" in out, out + err


def test_the_embedded_server_approves_at_once(run: Callable[..., tuple[int, str, str]]) -> None:
    code, _, err = run("plan", "m.yaml", "--url", "embedded")
    assert code == 0 and "is new" not in err
