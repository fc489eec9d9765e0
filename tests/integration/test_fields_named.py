"""Every command that reads an area names the fields it reads, at every level: real areas (and
``serve --dialect mashery``) honour no nested wildcard such as ``endpoints.*`` and answer
``"endpoints": [{}, {}]`` (SUPPLEMENT §10.10.8). Each command below runs through the command
line against ``apimctl serve`` of both dialects over real sockets, with every request the
management API gets recorded; a ``fields`` holding a nested wildcard fails the test.

The commands that talk to an area: ``apply``, ``plan``, ``drift``, ``export`` (manifests and
``--openapi``), ``init --from-area``, ``lint --live``, ``doctor``, ``unlock``, ``test --url``
and ``call --url`` (``show``, ``validate``, ``render``, ``schema``, ``import`` and the
embedded ``plan --tests`` read none). ``test`` and ``call`` must also place a key where the
endpoint reads it, and ``call --key USERNAME`` use that member's first active key, against
a running server as against the embedded area.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest
from click.testing import CliRunner

from apimctl.cli import cli

from .inprocess import uvicorn_in_thread

TOKEN, OPERATOR = "fields-token", "fields-operator"

MANIFEST = """
domains: [example.com, localhost]
services:
  - name: Shop
    endpoints:
      - name: Orders
        requestPathAlias: /orders
        trafficManagerDomain: shop.example.com
        publicDomains: [shop.example.com]
        systemDomains: [localhost]
        supportedHttpMethods: [get, post]
        apiKeyValueLocations: [request-header]
        apiKeyValueLocationKey: X-Key
        outboundTransportProtocol: http
        methods: [{name: list, sampleJsonResponse: '{"orders": []}'}]
      - name: Catalog
        requestPathAlias: /catalog
        trafficManagerDomain: shop.example.com
        publicDomains: [shop.example.com]
        systemDomains: [localhost]
        apiKeyValueLocations: [request-parameters]
        apiKeyValueLocationKey: key
packages:
  - name: Retail
    plans:
      - name: Basic
        services: [{name: Shop, endpoints: [Orders, Catalog]}]
"""

TESTS = """
consumers:
  - {name: ann, package: Retail, plan: Basic}
calls:
  - name: the key reaches the endpoint's header
    url: http://shop.example.com/orders
    key: ann
    expect: {status: [200, 404, 502, 504]}
  - name: the key reaches the endpoint's query parameter
    url: http://shop.example.com/catalog
    key: ann
    expect: {status: [200, 404, 502, 504]}
"""


@dataclass
class Recorded:
    """The requests the management API got: (method, path, query pairs)."""

    requests: list[tuple[str, str, list[tuple[str, str]]]] = field(default_factory=list)

    def wildcards(self) -> list[str]:
        """The requests whose ``fields`` name a nested wildcard (``x.*``, ``x.*.y``)."""
        out = []
        for method, path, query in self.requests:
            for name, value in query:
                if name == "fields" and any("*" in f and f.strip() != "*" for f in value.split(",")):
                    out.append(f"{method} {path}?fields={value}")
        return out

    def paths(self) -> set[str]:
        return {path for _, path, _ in self.requests}


class Recorder:
    """An ASGI app recording each HTTP request before handing it to ``app``."""

    def __init__(self, app: Any, recorded: Recorded) -> None:
        self.app = app
        self.recorded = recorded

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
            self.recorded.requests.append((scope["method"], scope["path"], query))
        await self.app(scope, receive, send)


@dataclass
class Served:
    api: str  # .../v3/rest
    traffic: str
    recorded: Recorded


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, dialect: str) -> Iterator[Served]:
    from apimctl.server import ServerConfig, create_app
    from apimctl.server.traffic import create_traffic_app

    folder = tmp_path_factory.mktemp(f"fields-{dialect}")
    app = create_app(ServerConfig(db_path=str(folder / "area.db"), tokens={TOKEN: "area"},
                                  auto_approve_domains=True, operator_token=OPERATOR, dialect=dialect))
    recorded = Recorded()
    with uvicorn_in_thread(Recorder(app, recorded), timeout_graceful_shutdown=1) as api, \
            uvicorn_in_thread(create_traffic_app(app), timeout_graceful_shutdown=1) as traffic:
        yield Served(f"http://127.0.0.1:{api}/v3/rest", f"http://127.0.0.1:{traffic}", recorded)
    app.state.server.close()


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), standalone_mode=False, catch_exceptions=False, env=env)
    return int(result.return_value or 0), result.stdout, result.stderr


def _member_with_key(served: Served, username: str, key: str) -> None:
    """A member of ``username`` with an active key of Retail/Basic, made through the API."""
    async def make() -> None:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=served.api, headers=auth) as api:
            packages = (await api.get("/packages", params={"fields": "id,name,plans.id,plans.name"})).json()
            member = (await api.post("/members", json={
                "username": username, "email": f"{username}@example.com", "displayName": username,
                "externalId": username, "passwdNew": "pw-fields-123456"})).json()
            member = member[0] if isinstance(member, list) else member
            app = (await api.post(f"/members/{member['id']}/applications",
                                  json={"name": "A", "username": username})).json()
            app = app[0] if isinstance(app, list) else app
            reply = await api.post(f"/applications/{app['id']}/packageKeys", json={
                "apikey": key, "status": "active", "package": {"id": packages[0]["id"]},
                "plan": {"id": packages[0]["plans"][0]["id"]}})
            assert reply.status_code < 300, reply.text

    asyncio.run(make())


def test_every_command_that_reads_an_area_names_its_fields(served: Served, tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "m.yaml").write_text(MANIFEST)
    (tmp_path / "t.test.yaml").write_text(TESTS)
    area = ("--url", served.api, "--token", TOKEN)
    manifests = str(tmp_path / "m")

    code, out, err = run("apply", manifests, *area, "--auto-approve")
    assert code == 0, out + err
    for args in (("plan", manifests, *area), ("drift", manifests, *area),
                 ("export", *area, "--out", str(tmp_path / "x")),
                 ("export", *area, "--openapi", "--out", str(tmp_path / "o")),
                 ("init", str(tmp_path / "repo"), "--from-area", *area),
                 ("doctor", *area), ("unlock", *area, "--force")):
        code, out, err = run(*args)
        assert code in (0, 2), f"{args[0]}: {out}{err}"
    code, out, err = run("lint", "--live", *area)
    assert code in (0, 1) and f"in {served.api} (" in err, out + err  # 1: findings, not a failure

    # the call tests place each consumer's key where its endpoint reads it (header, query)
    code, out, err = run("test", str(tmp_path / "t.test.yaml"), "--url", served.api, "--token", TOKEN,
                         "--traffic-url", served.traffic, "--format", "json")
    report = json.loads(out)
    assert (code, report["passed"]) == (0, 2), out + err

    # call --key USERNAME: the member's first active key, placed in the endpoint's header
    _member_with_key(served, "dee", "dee-key-value-77")
    code, out, err = run("call", "GET", "http://shop.example.com/orders", "--key", "dee",
                         "--traffic-url", served.traffic, *area, "--operator-token", OPERATOR)
    assert code == 0, out + err
    key_line = next(line for line in out.splitlines() if line.startswith("key:"))
    assert key_line == "key: found in header X-Key, plan Basic", out
    assert "dee-key-value-77" not in out

    assert {"/v3/rest/services", "/v3/rest/packages", "/v3/rest/members"} <= served.recorded.paths()
    assert served.recorded.wildcards() == []
    # and every read of the management API names its fields
    assert [f"{p}?{q}" for m, p, q in served.recorded.requests
            if m == "GET" and p.startswith("/v3/rest/") and "fields" not in dict(q)] == []


def test_call_with_a_key_needs_the_management_api(served: Served) -> None:
    result = CliRunner().invoke(cli, ["call", "GET", "http://shop.example.com/orders", "--key", "dee",
                                      "--traffic-url", served.traffic])
    assert result.exit_code == 2 and "--key with --traffic-url needs --url" in result.output
