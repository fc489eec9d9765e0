"""``apimctl test`` and ``apimctl call`` end to end, in-process: the examples' call tests pass,
failures and bad input exit 1 with the place (file:line[:col]), every report format, both
dialects of the embedded area, a run against a running server (``--url``/``--traffic-url``),
and ``call``'s step-by-step decisions without the key in the output."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import click
import httpx
import pytest
from click.testing import CliRunner

from apimctl.cli import cli

from .inprocess import uvicorn_in_thread

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@contextmanager
def serve_in_thread(app: Any) -> Iterator[str]:
    """``app`` under uvicorn on 127.0.0.1 (a free port) in a thread; yields its base URL."""
    with uvicorn_in_thread(app, timeout_graceful_shutdown=1) as port:
        yield f"http://127.0.0.1:{port}"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), standalone_mode=False, catch_exceptions=False)
    return int(result.return_value or 0), result.stdout, result.stderr


@pytest.mark.parametrize("example", ["weather", "maintenance-window", "public-api", "multi-team", "environments/base"])
def test_the_examples_call_tests_pass(example: str, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = EXAMPLES / example
    envs = [f for f in (folder / "example.env", folder.parent / "example.env") if f.exists()]
    for line in envs[0].read_text().splitlines() if envs else []:  # the placeholder secrets
        if "=" in line and not line.startswith("#"):
            monkeypatch.setenv(*line.split("=", 1))
    code, out, err = invoke("test", str(folder / "tests"), "--manifests", str(folder), "--format", "json")
    report = json.loads(out)
    assert (code, report["failed"]) == (0, 0), out
    assert report["passed"] == len(report["results"]) >= 4
    assert err.startswith("Call checks: ")


MANIFEST = """
domains: [example.com, example.net]
services:
  - name: Shop
    errorSets:
      - name: Plain
        type: text/plain
        errorMessages:
          - {id: ERR_403_DEVELOPER_OVER_QPS, detailHeader: Too fast, responseBody: slow down}
    endpoints:
      - name: Orders
        requestPathAlias: /orders
        trafficManagerDomain: shop.example.com
        publicDomains: [shop.example.com]
        systemDomains: [orders.example.net]
        supportedHttpMethods: [get, post]
        apiKeyValueLocations: [request-header]
        apiKeyValueLocationKey: X-Key
        dropApiKeyFromIncomingCall: true
        outboundTransportProtocol: http
        connectionTimeoutForSystemDomainResponse: 2
        errorSet: Plain
      - name: Catalog
        requestPathAlias: /catalog
        trafficManagerDomain: shop.example.com
        publicDomains: [shop.example.com]
        systemDomains: [catalog.example.net]
        supportedHttpMethods: [get]
        outboundTransportProtocol: http
        outboundRequestTargetPath: /v3/items
        outboundRequestTargetQueryParameters: source=tm
        headersToExcludeFromIncomingCall: [X-Internal]
        allowMissingApiKey: true
        cors: {allDomainsEnabled: false, domainsAllowed: ["https://www.shop.example.com"], maxAge: 30}
scheduledMaintenanceEvents:
  - name: Reindex
    startDateTime: "2030-06-01T01:00:00Z"
    endDateTime: "2030-06-01T02:00:00Z"
    endpoints: [{service: Shop, endpoint: Catalog}]
packages:
  - name: Retail
    plans:
      - name: Basic
        qpsLimitCeiling: 2
        rateLimitCeiling: 0
        services: [{name: Shop, endpoints: [Orders, Catalog]}]
"""

TESTS = """
consumers:
  - {name: ann, package: Retail, plan: Basic}
  - {name: noapikey, package: Retail, plan: Basic, apikey: noapikey}
backends:
  - {address: orders.example.net, echo: true}
  - {address: catalog.example.net, echo: true}
calls:
  - name: the catalog is forwarded to its target path and query, without excluded headers
    url: http://shop.example.com/catalog/shoes?size=9
    headers: {X-Internal: secret, X-Public: ok}
    origin: https://www.shop.example.com
    expect:
      status: 200
      headers: {Access-Control-Allow-Origin: https://www.shop.example.com}
      body:
        json: {$.path: /v3/items/shoes, $.query: size=9&source=tm, "$.headers['x-public']": ok}
        contains: x-public
        notContains: x-internal
  - name: this check of the excluded header can fail
    url: http://shop.example.com/catalog
    headers: {X-Internal: secret}
    expect: {body: {notContains: '"path"'}}
  - name: a pre-flight from another site is refused
    method: OPTIONS
    url: http://shop.example.com/catalog
    origin: https://evil.example.org
    headers: {Access-Control-Request-Method: GET}
    expect: {status: 403, decidedBy: cors, headers: {Access-Control-Allow-Origin: {absent: true}}}
  - name: during the reindex the catalog answers 503
    url: http://shop.example.com/catalog
    at: "2030-06-01T01:30:00Z"
    expect: {status: 503, decidedBy: maintenance}
  - name: the key goes in a header and is dropped on the way
    url: http://shop.example.com/orders/7?x=1
    key: ann
    expect:
      status: 200
      decidedBy: return
      body:
        json: {$.path: /orders/7, $.query: x=1}
        contains: '"method": "GET"'
      headers:
        Content-Type: {matches: ^application/json}
        X-Key: {absent: true}
  - name: two a second
    url: http://shop.example.com/orders
    key: ann
    after: 1
    repeat: 3
    expect:
      status: 403
      decidedBy: limits
      headers: {X-Error-Detail-Header: Too fast, Retry-After: {present: true}}
      body: {equals: slow down}
"""

SLOW = """
consumers:
  - {name: bob, package: Retail, plan: Basic}
backends:
  - {address: orders.example.net, delay: 2, body: {late: true}}
calls:
  - name: a back end slower than the endpoint's timeout
    url: http://shop.example.com/orders
    key: bob
    expect: {status: 504, decidedBy: forward}
  - name: this expectation fails
    url: http://shop.example.com/orders
    key: bob
    after: 1
    expect: {status: 200, body: {json: {$.late: true}}}
"""


@pytest.fixture
def files(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "shop.yaml").write_text(MANIFEST)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.test.yaml").write_text(TESTS)
    (tmp_path / "t" / "b.test.yaml").write_text(SLOW)
    yield tmp_path


@pytest.mark.parametrize("dialect", ["spec", "mashery"])
def test_a_run_with_failures_and_its_reports(files: Path, dialect: str) -> None:
    base = ["test", str(files / "t"), "--manifests", str(files / "m"), "--dialect", dialect]
    code, out, _ = invoke(*base)
    lines = out.splitlines()
    assert code == 1
    a, b = files / "t" / "a.test.yaml", files / "t" / "b.test.yaml"
    assert [line.split(":")[0] for line in lines if not line.startswith(" ")][:-1] == [
        f"PASS {a}", f"FAIL {a}", f"PASS {a}", f"PASS {a}", f"PASS {a}", f"PASS {a}", f"PASS {b}", f"FAIL {b}"]
    assert lines[1] == f"FAIL {a}:20: this check of the excluded header can fail -> 200"
    assert lines[2].startswith("     body: expected not to contain '\"path\"', got '{")
    assert lines[6].startswith(f"PASS {a}:34: the key goes in a header")
    assert lines[9] == f"FAIL {b}:11: this expectation fails -> 504"
    assert "status: expected 200, got 504" in lines[10]
    assert lines[-2].startswith("     decided by forward: refused: no answer from")
    assert lines[-1] == "Call checks: 6 passed, 2 failed: this check of the excluded header can fail; this expectation fails"
    if dialect == "spec":
        _, junit, _ = invoke(*base, "--format", "junit")
        suites = ElementTree.fromstring(junit)
        assert (suites.get("tests"), suites.get("failures")) == ("8", "2")
        assert len(suites.findall(".//failure")) == 2
    else:
        report = files / "report.md"
        _, out, err = invoke(*base, "--format", "markdown", "--output", str(report))
        assert (out, err) == ("", "Call checks: 6 passed, 2 failed: this check of the excluded header can fail; "
                                  "this expectation fails\n")
        assert report.read_text().startswith("### Call checks: 6 passed, 2 failed")
        assert "| this expectation fails |" in report.read_text()


def test_bad_test_files_are_reported_with_their_place(tmp_path: Path) -> None:
    (tmp_path / "bad.test.yaml").write_text(
        "calls:\n  - name: x\n    url: ftp://nope\n    key: nobody\n    expect: {status: two}\n")
    (tmp_path / "worse.test.yaml").write_text(
        "calls:\n  - name: y\n    url: http://a.example.com/\n    key: ghost\n    expect:\n"
        "      headers: {X: {matches: '('}}\n")
    code, out, err = invoke("test", str(tmp_path))
    assert (code, out) == (1, "")
    assert f"{tmp_path / 'bad.test.yaml'}:3:10: calls[0].url: 'ftp://nope' does not match" in err
    assert f"{tmp_path / 'bad.test.yaml'}:5:22: calls[0].expect.status: 'two' is not valid" in err
    assert f"{tmp_path / 'worse.test.yaml'}:4:10: calls[0].key: no consumer 'ghost' in this file" in err
    assert "calls[0].expect.headers.X: not a regular expression" in err
    code, _, err = invoke("test", str(tmp_path / "missing.test.yaml"))
    assert code == 1 and "no such file or directory" in err


def test_against_a_running_server(tmp_path: Path) -> None:
    from apimctl.server import ServerConfig, create_app
    from apimctl.server.traffic import create_traffic_app

    app = create_app(ServerConfig(db_path=str(tmp_path / "s.db"), tokens={"tok-1": "a"}, auto_approve_domains=True,
                                  operator_token="op-1"))
    (tmp_path / "m.yaml").write_text(MANIFEST.replace("orders.example.net", "localhost").replace(
        "catalog.example.net", "localhost").replace(
        "domains: [example.com, example.net]", "domains: [example.com, localhost]"))
    (tmp_path / "r.test.yaml").write_text(
        "consumers: [{name: cy, package: Retail, plan: Basic}]\ncalls:\n"
        "  - {name: keyless, url: 'http://shop.example.com/orders', expect: {status: 403,"
        " headers: {X-Svc-Error-Code: ERR_403_NOT_AUTHORIZED}}}\n"
        "  - {name: keyed, url: 'http://shop.example.com/orders', key: cy, expect: {status: [502, 404, 200]}}\n")
    with serve_in_thread(app) as api, serve_in_thread(create_traffic_app(app)) as traffic:
        env = {"APIMCTL_URL": api, "APIMCTL_TOKEN": "tok-1"}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            code, out, err = invoke("apply", str(tmp_path / "m.yaml"), "--auto-approve", "--qps", "0", "--no-lock")
            assert code == 0, out + err
        finally:
            for k, v in old.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
        code, out, _ = invoke("test", str(tmp_path / "r.test.yaml"), "--url", api, "--token", "tok-1",
                              "--traffic-url", traffic, "--format", "json")
        report: dict[str, Any] = json.loads(out)
        assert (code, report["passed"]) == (0, 2), out
        members = httpx.get(f"{api}/v3/rest/members", headers={"Authorization": "Bearer tok-1"}).json()
        assert members == []  # the consumer was deleted afterwards
        code, out, _ = invoke("call", "GET", "http://shop.example.com/orders", "--key", "not-a-key",
                              "--traffic-url", traffic, "--url", api, "--token", "tok-1", "--operator-token", "op-1")
        assert out.splitlines()[:5] == [
            "route: Shop/Orders", "transport: http", "maintenance: none scheduled now",
            "key: refused: key in header X-Key unknown to the area (ERR_403_DEVELOPER_INACTIVE)",
            "answer: 403 (decided by key)"]
    app.state.server.close()


def test_call_prints_each_decision_and_never_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from apimctl.cli.emulator import open_emulator

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CI", raising=False)
    code, out, err = invoke("apply", str(EXAMPLES / "weather"), "--auto-approve")
    assert code == 0, out + err
    emulator = open_emulator(".apimctl/local.db", "local")

    async def consumer() -> None:
        async with httpx.AsyncClient(transport=emulator.management, base_url="http://e/v3/rest",
                                     headers={"Authorization": f"Bearer {emulator.token}"}) as api:
            packages = (await api.get("/packages", params={"fields": "id,plans"})).json()
            member = (await api.post("/members", json={"username": "dee", "email": "d@example.com",
                                                        "displayName": "D", "externalId": "d",
                                                        "passwdNew": "pw-dee-123456"})).json()[0]
            app = (await api.post(f"/members/{member['id']}/applications",
                                  json={"name": "A", "username": "dee"})).json()[0]
            await api.post(f"/applications/{app['id']}/packageKeys", json={
                "apikey": "dee-secret-key-value", "package": {"id": packages[0]["id"]},
                "plan": {"id": packages[0]["plans"][0]["id"]}})

    asyncio.run(consumer())
    emulator.close()
    code, out, _ = invoke("call", "GET", "https://api.example.com/v2/forecast?city=x", "--key", "dee",
                          "--backend", "backend.example.net=http://127.0.0.1:9")
    assert code == 0
    assert out.splitlines()[:6] == [
        "route: Weather/Forecast", "transport: https", "maintenance: none scheduled now",
        "key: found in query api_key, plan Gold", "entitlement: ok",
        "limits: 1 of 10 per second; 1 of 100000 per day"]
    assert "forward: refused: no connection to https://backend.example.net/v2/forecast" in out
    assert "answer: 502 (decided by forward)" in out
    assert "dee-secret-key-value" not in out
    code, out, _ = invoke("call", "GET", "https://api.example.com/v2/forecast", "--format", "json")
    assert json.loads(out)["decidedBy"] == "key"
    with pytest.raises(click.BadParameter, match="expected http"):
        invoke("call", "GET", "not a url")


def test_plan_appends_the_call_checks(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(files)
    monkeypatch.delenv("CI", raising=False)
    code, out, _ = invoke("plan", str(files / "m"), "--format", "markdown", "--tests", str(files / "t"))
    assert code == 1  # a call check failed
    plan, _, checks = out.partition("### Call checks: ")
    assert "Shop" in plan
    assert checks.startswith("6 passed, 2 failed: this check of the excluded header can fail; this expectation fails")
    assert "| this expectation fails | `" in checks


@contextmanager
def recording_server() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 (a free port) answering 200 to any GET; yields its
    address (host:port) and the paths it received."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    received: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            received.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "8")
            self.end_headers()
            self.wfile.write(b"recorded")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


INTERNAL = """
domains: [example.com, example.net, 127.0.0.1]
services:
  - name: Internal
    endpoints:
      - name: Admin
        requestPathAlias: /admin
        trafficManagerDomain: gw.example.com
        publicDomains: [gw.example.com]
        systemDomains: ["{address}"]
        supportedHttpMethods: [get]
        outboundTransportProtocol: http
packages:
  - name: Staff
    plans:
      - name: All
        services: [{name: Internal, endpoints: [Admin]}]
"""
CONSUMER = "consumers: [{name: c, package: Staff, plan: All}]\n"


@pytest.mark.parametrize("dialect", ["spec", "mashery"])
def test_embedded_calls_reach_only_the_back_ends_the_test_file_declares(tmp_path: Path, dialect: str) -> None:
    with recording_server() as (address, received):
        (tmp_path / "m.yaml").write_text(INTERNAL.replace("{address}", address))
        call = (CONSUMER + "calls:\n  - name: the admin page\n    url: http://gw.example.com/admin/keys\n"
                "    key: c\n    headers: {X-Forwarded-For: 10.0.0.1}\n    expect: {status: 200, body: {equals: recorded}}\n")
        (tmp_path / "undeclared.test.yaml").write_text(call)
        code, out, _ = invoke("test", str(tmp_path / "undeclared.test.yaml"), "--manifests", str(tmp_path / "m.yaml"),
                              "--dialect", dialect)
        assert code == 1
        assert received == []  # named only by the manifest's system domain: never called
        assert "status: expected 200, got 502" in out
        assert (f"decided by forward: refused: back end {address} is not declared in the test file's backends; "
                "declare it with a url to allow calls (ERR_502_BAD_GATEWAY)") in out
        (tmp_path / "declared.test.yaml").write_text(
            f"backends:\n  - {{address: '{address}', url: 'http://{address}'}}\n" + call)
        code, out, _ = invoke("test", str(tmp_path / "declared.test.yaml"), "--manifests", str(tmp_path / "m.yaml"),
                              "--dialect", dialect)
        assert code == 0, out
        assert [path.partition("?")[0] for path in received] == ["/admin/keys"]


def test_a_header_pattern_that_backtracks_without_end_fails_its_call(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from apimctl.calltests import patterns

    monkeypatch.setattr(patterns, "MATCH_SECONDS", 0.05)
    (tmp_path / "m.yaml").write_text(INTERNAL.replace("{address}", "admin.example.net"))
    (tmp_path / "r.test.yaml").write_text(
        "backends:\n  - {address: admin.example.net, headers: {X-Run: " + "a" * 32 + "!}}\n"
        + CONSUMER + "calls:\n  - name: a catastrophic pattern\n    url: http://gw.example.com/admin\n    key: c\n"
        "    expect: {headers: {X-Run: {matches: '^(a|aa)+$'}}}\n"
        "  - name: a plain one\n    url: http://gw.example.com/admin\n    key: c\n"
        "    expect: {headers: {X-Run: {matches: 'a{32}!$'}}}\n")
    code, out, _ = invoke("test", str(tmp_path / "r.test.yaml"), "--manifests", str(tmp_path / "m.yaml"))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"FAIL {tmp_path / 'r.test.yaml'}:5: a catastrophic pattern -> 200"
    assert lines[1] == ("     header X-Run: matching '^(a|aa)+$' took more than 0.05 s (a pattern that backtracks "
                        "without end, such as (a+)+ or (a|aa)+: simplify it)")
    assert lines[-2].startswith(f"PASS {tmp_path / 'r.test.yaml'}:9: a plain one")


@contextmanager
def served(tmp_path: Path, dialect: str) -> Iterator[tuple[str, str]]:
    """``apimctl serve --traffic-port`` in a process of its own (token ``tok-1``, operator token
    ``op-1``); yields the URLs of its management API and of its traffic listener."""
    import re
    import signal
    import subprocess
    import sys
    import time

    process = subprocess.Popen(
        [sys.executable, "-m", "apimctl", "serve", "--port", "0", "--traffic-port", "0", "--db", str(tmp_path / "s.db"),
         "--token", "tok-1=a", "--operator-token", "op-1", "--auto-approve-domains", "--dialect", dialect],
        stderr=subprocess.PIPE, text=True)
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 30
        while not any(line.startswith("traffic manager on ") for line in lines):
            assert process.stderr is not None and time.monotonic() < deadline and process.poll() is None
            lines.append(process.stderr.readline())
        api = re.search(r"(http://127\.0\.0\.1:\d+)/v3/rest", "".join(lines))
        traffic = re.search(r"traffic manager on (http://127\.0\.0\.1:\d+)", "".join(lines))
        assert api and traffic
        yield api.group(1), traffic.group(1)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)


@pytest.mark.parametrize("dialect", ["spec", "mashery"])
def test_decided_by_against_a_running_server_with_the_operator_token(
        tmp_path: Path, dialect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from apimctl.errors import ApimctlError

    with recording_server() as (address, received), served(tmp_path, dialect) as (api, traffic):
        (tmp_path / "m.yaml").write_text(INTERNAL.replace("{address}", address))
        with monkeypatch.context() as env:
            env.setenv("APIMCTL_URL", api)
            env.setenv("APIMCTL_TOKEN", "tok-1")
            env.delenv("CI", raising=False)
            code, out, err = invoke("apply", str(tmp_path / "m.yaml"), "--auto-approve", "--qps", "0", "--no-lock")
            assert code == 0, out + err
        tests = tmp_path / "r.test.yaml"
        tests.write_text(CONSUMER + "calls:\n"
                         "  - {name: keyless, url: 'http://gw.example.com/admin', expect: {decidedBy: key}}\n"
                         "  - {name: keyed, url: 'http://gw.example.com/admin', key: c,"
                         " expect: {status: 200, decidedBy: return, body: {equals: recorded}}}\n"
                         "  - {name: elsewhere, url: 'http://nowhere.example.com/x', expect: {decidedBy: route}}\n"
                         "  - {name: wrong step, url: 'http://gw.example.com/admin', key: c, repeat: 2,"
                         " expect: {decidedBy: limits}}\n")
        remote = ("test", str(tests), "--url", api, "--token", "tok-1", "--traffic-url", traffic)
        code, out, _ = invoke(*remote, "--operator-token", "op-1", "--format", "json")
        report: dict[str, Any] = json.loads(out)
        assert code == 1
        assert [(r["name"], r["passed"], r["decidedBy"]) for r in report["results"]] == [
            ("keyless", True, "key"), ("keyed", True, "return"), ("elsewhere", True, "route"),
            ("wrong step", False, "return")]
        assert report["results"][3]["failures"][0] == "decidedBy: expected limits, got return"
        assert len(received) == 3
        with monkeypatch.context() as env:  # the option's variable, as call's
            env.setenv("APIMCTL_TEST_OPERATOR_TOKEN", "op-1")
            code, out, _ = invoke(*remote, "--format", "json")
            assert [r["decidedBy"] for r in json.loads(out)["results"]] == ["key", "return", "route", "return"]
        code, out, _ = invoke(*remote)
        assert code == 1
        assert ("     decidedBy: give --operator-token to read the decisions of a running server "
                "(its /operator/traffic)") in out.splitlines()
        with pytest.raises(ApimctlError, match=r"cannot read the decisions of the calls: .*/operator/traffic "
                                               r"refuses the operator token \(401\)"):
            invoke(*remote, "--operator-token", "not-it")
    with pytest.raises(click.UsageError, match="--operator-token goes with --url"):
        invoke("test", str(tests), "--operator-token", "op-1")
