"""Storage: durability across restarts, unique keys, concurrent writers; `apimctl serve`."""

from __future__ import annotations

import threading
import warnings
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from apimctl.server import ServerConfig
from apimctl.server.store import Store

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


def test_documents_and_claims_survive_reopening(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store = Store(path)
    with store.write() as txn:
        txn.put("a", "service", "1", {"id": "1", "name": "x"})
        assert txn.claim("a", "member.username", "m1", ["dev"], sticky=True) == []
    with pytest.raises(RuntimeError), store.write() as txn:
        txn.put("a", "service", "2", {"id": "2"})
        raise RuntimeError("rolled back")
    store.close()
    again = Store(path)
    with again.read() as txn:
        assert txn.get("a", "service", "1") == {"id": "1", "name": "x"}
        assert txn.get("a", "service", "2") is None
        assert txn.get("b", "service", "1") is None
    with again.write() as txn:
        txn.release("a", "member.username", "m1")  # sticky keys are never released
        assert txn.claim("a", "member.username", "m2", ["dev"]) == ["dev"]
    again.close()


def test_concurrent_writers_through_uvicorn(tmp_path: Path, uvicorn_runner: Any) -> None:
    config = ServerConfig(db_path=str(tmp_path / "c.db"), tokens={"t": "a"})
    errors: list[str] = []
    with uvicorn_runner(config) as base:
        headers = {"Authorization": "Bearer t"}

        def writer(n: int) -> None:
            with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
                for i in range(10):
                    resp = http.post("/v3/rest/roles", json={"name": f"role {n}-{i}"})
                    if resp.status_code != 200:
                        errors.append(resp.text)
                # everyone races for the same name: exactly one wins
                resp = http.post("/v3/rest/roles", json={"name": "contested"})
                if resp.status_code not in (200, 400):
                    errors.append(resp.text)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with httpx.Client(base_url=base, headers=headers) as http:
            total = http.head("/v3/rest/roles").headers["X-Total-Count"]
            contested = http.get("/v3/rest/roles", params={"filter": "name:contested"}).json()
    assert errors == []
    assert total == "61" and len(contested) == 1
    # a restart sees every committed write
    with uvicorn_runner(config) as base, httpx.Client(base_url=base, headers={"Authorization": "Bearer t"}) as http:
        assert http.head("/v3/rest/roles").headers["X-Total-Count"] == "61"


def test_token_exchange_survives_a_restart(tmp_path: Path) -> None:
    config = ServerConfig(db_path=str(tmp_path / "t.db"), clients={"k": "s"}, users=[("u", "p", "area-1")])
    from apimctl.server import create_app

    with TestClient(create_app(config)) as http:
        form = {"grant_type": "password", "username": "u", "password": "p", "scope": "area-1"}
        assert http.post("/v3/token", data=form, auth=("k", "wrong")).status_code == 401
        assert http.post("/v3/token", data={**form, "password": "x"}, auth=("k", "s")).json()["error"] == "invalid_grant"
        token = http.post("/v3/token", data=form, auth=("k", "s")).json()
        assert token["expires_in"] == 3600 and token["scope"] == "area-1"
    with TestClient(create_app(config)) as http:
        headers = {"Authorization": f"Bearer {token['access_token']}"}
        role = http.post("/v3/rest/services", json={"name": "S"}, headers=headers,
                         params={"fields": "editorHandle"}).json()[0]
        assert role["editorHandle"] == "u"
        renewed = http.post("/v3/token", data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"]},
                            auth=("k", "s")).json()
        assert renewed["access_token"] != token["access_token"]


def test_serve_builds_its_config_and_announces_the_dev_token(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from apimctl.cli import serve

    seen: dict[str, Any] = {}
    monkeypatch.setattr(serve, "_run", lambda listeners, *_: seen.update(host=listeners[0][1], port=listeners[0][2],
                                                                      app=listeners[0][0]))
    runner = CliRunner()
    result = runner.invoke(serve.command, ["--db", str(tmp_path / "x.db"), "--port", "0", "--auto-approve-domains"])
    assert result.exit_code == 0, result.output
    assert "Bearer dev" in result.output and seen["host"] == "127.0.0.1"
    result = runner.invoke(serve.command, ["--db", str(tmp_path / "x.db"), "--token", "nope"])
    assert result.exit_code != 0 and "expected TOKEN=AREA, got 'nope'" in result.output
    result = runner.invoke(serve.command, ["--db", str(tmp_path / "x.db"), "--user", "u:p"])
    assert result.exit_code != 0 and "expected USER:PASSWORD:AREA" in result.output
    config, dev = serve.build_config(str(tmp_path / "y.db"), ("t=a",), ("k:s",), ("u:p:a",), qps=2.0)
    assert not dev and config.tokens == {"t": "a"} and config.users == [("u", "p", "a")] and config.qps == 2.0


def test_works_in_process_through_the_asgi_transport(tmp_path: Path) -> None:
    import asyncio

    from apimctl.server import create_app

    app = create_app(ServerConfig(db_path=str(tmp_path / "asgi.db"), tokens={"t": "a"}))

    async def main() -> list[Any]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://local",
                                     headers={"Authorization": "Bearer t"}) as http:
            created = await asyncio.gather(*(http.post("/v3/rest/roles", json={"name": f"r{i}"}) for i in range(5)))
            assert all(r.status_code == 200 for r in created)
            return (await http.get("/v3/rest/roles")).json()  # type: ignore[no-any-return]

    assert sorted(r["name"] for r in asyncio.run(main())) == ["r0", "r1", "r2", "r3", "r4"]
    app.state.server.close()
