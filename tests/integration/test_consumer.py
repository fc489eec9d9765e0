"""``apimctl consumer``: a member, an application and a key on a plan, through the management
API of a reference server in both dialects; a second run creates nothing; the calls of the
traffic manager then find the key by the member's username."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from .inprocess import entry_point, uvicorn_in_thread

WEATHER = Path(__file__).resolve().parents[2] / "examples" / "weather"
Run = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory, dialect: str) -> Iterator[str]:
    from apimctl.server import ServerConfig, create_app

    folder = tmp_path_factory.mktemp(f"consumer-{dialect}")
    app = create_app(ServerConfig(db_path=str(folder / "s.db"), tokens={"t0ken": "area-1"},
                                  dialect=dialect, auto_approve_domains=True))
    with uvicorn_in_thread(app) as port:
        yield f"http://127.0.0.1:{port}/v3/rest"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CI", raising=False)
    return entry_point(monkeypatch, capsys)


def test_a_consumer_is_made_once_and_holds_a_key_on_the_plan(url: str, run: Run) -> None:
    conn = ["--url", url, "--token", "t0ken"]
    code, out, err = run("apply", str(WEATHER), "--auto-approve", *conn)
    assert code == 0, out + err
    code, out, err = run("consumer", "alice", "--plan", "Weather Partners/Gold", *conn)
    assert code == 0, out + err
    assert "Consumer alice:" in out and "created member, application, key." in out, out
    code, again, err = run("consumer", "alice", "--plan", "Weather Partners/Gold", *conn)
    assert code == 0 and "created nothing (all of it existed)." in again, again + err
    auth = {"Authorization": "Bearer t0ken"}
    members = httpx.get(f"{url}/members", params={"fields": "id,username"}, headers=auth).json()
    alice = [m for m in members if m["username"] == "alice"]
    assert len(alice) == 1
    keys = httpx.get(f"{url}/packageKeys", params={"fields": "id,apikey,status,plan.name"}, headers=auth).json()
    assert [k["plan"]["name"] for k in keys] == ["Gold"] and keys[0]["status"] == "active"
    assert keys[0]["apikey"] not in out + again  # the key's value is never printed


@pytest.mark.parametrize(("plan", "said"), [
    ("Weather Partners/Silver", "package 'Weather Partners' has no plan 'Silver' (its plans: Gold)"),
    ("Nobody/Gold", "the area has no package 'Nobody'"),
    ("Gold", "plan key 'Gold' must be PARENT/NAME"),
    ("", "--plan PACKAGE/PLAN is required")])
def test_a_plan_the_area_lacks_is_refused_with_nothing_made(url: str, run: Run, plan: str, said: str) -> None:
    assert run("apply", str(WEATHER), "--auto-approve", "--url", url, "--token", "t0ken")[0] == 0
    code, out, err = run("consumer", "bob", "--plan", plan, "--url", url, "--token", "t0ken")
    assert code == 1, out + err
    assert said in err and "Traceback" not in err, err
    members = httpx.get(f"{url}/members", params={"fields": "username"},
                        headers={"Authorization": "Bearer t0ken"}).json()
    assert "bob" not in [m["username"] for m in members]
