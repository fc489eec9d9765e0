"""A pull request's call tests cannot make ``apimctl test``, ``plan --tests`` or ``apimctl
call`` print a secret.

The manifests put a secret into ``systemDomainAuthentication.password`` with ``${VAR}``, a
deny-listed variable into another endpoint's password, and a masked environment value into
``outboundRequestTargetQueryParameters``; the test file sends calls to echo back ends and
expects what they cannot get, so every failure quotes what the back end received (the
``Basic`` credentials, the query, a body cut at 200 characters). ``test --url`` and ``call``
talk to a stdlib server that echoes their tokens (``APIMCTL_TEST_TOKEN``, ``--token``,
``APIMCTL_CALL_TOKEN``, ``APIMCTL_CALL_OPERATOR_TOKEN``) raw, JSON-escaped and base64-encoded.
Everything runs through the real entry point (``run_guarded``); stdout and stderr of every
format are searched for every encoding of every planted value, and its beginnings.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, quote_plus

import httpx
import pytest

from apimctl.cli import cli
from apimctl.cli.common import run_guarded

DEPLOY_SECRET = 'Dp"lo\\y/S3cr+et%41&é=x:y@z-9f'
DATABASE_URL = 'postgres://admin:Hu%nt3r&2@db.internal.example.com:5432/prod?ssl=true&x="q"'
GITHUB_TOKEN = 'ghp_Zx9\\Qw"8+/=Lm%2F0pR7sT'
TEST_TOKEN = 'tt-"Tok\\en/+%41=&:9qZ'
FLAG_TOKEN = "ft-Flag+Token/9x=Q&z"
CALL_TOKEN = 'ct-"Call\\Tok/+%42=&:7wY'
OPERATOR_TOKEN = "op-Oper+ator/Tok=3&vK"
PREFIX = 8
"""The shortest beginning of a value looked for (a cut message shows the first characters)."""

MANIFEST = """\
domains: [example.com, example.net]
services:
  - name: Echo
    endpoints:
      - name: Basic
        requestPathAlias: /basic
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [basic.example.net]
        outboundTransportProtocol: http
        apiKeyValueLocations: [request-header]
        apiKeyValueLocationKey: X-Key
        dropApiKeyFromIncomingCall: true
        outboundRequestTargetQueryParameters: "v=${DATABASE_URL}"
        systemDomainAuthentication: {type: httpBasic, username: svc, password: "${DEPLOY_SECRET}"}
      - name: Denied
        requestPathAlias: /denied
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [denied.example.net]
        outboundTransportProtocol: http
        apiKeyValueLocations: [request-header]
        apiKeyValueLocationKey: X-Key
        dropApiKeyFromIncomingCall: true
        systemDomainAuthentication: {type: httpBasic, username: ci, password: "${GITHUB_TOKEN}"}
packages:
  - name: Callers
    plans:
      - {name: Any, services: [{name: Echo, endpoints: [Basic, Denied]}]}
"""

TESTS = """\
consumers:
  - {name: ann, package: Callers, plan: Any}
backends:
  - {address: basic.example.net, echo: true}
  - {address: denied.example.net, echo: true}
calls:
  - name: what the back end received, quoted by every failure
    url: http://api.example.com/basic/PADDING
    key: ann
    expect:
      status: 201
      headers: {Content-Type: {equals: text/plain}}
      body:
        contains: nothing like this
        json: {$.headers.authorization: x, $.query: x, $.path: x}
  - name: the deny-listed variable in a password
    url: http://api.example.com/denied
    key: ann
    expect: {body: {json: {$.headers.authorization: x}, notContains: authorization}}
"""


def leak_forms(secret: str, users: tuple[str, ...] = ("svc", "ci", "ops")) -> set[str]:
    """Every way ``secret`` could show, computed independently of the scrubber."""
    data = secret.encode()
    escaped = (json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1])
    out = {secret, *escaped, quote(secret, safe=""), quote(secret), quote_plus(secret),
           httpx.URL("http://h/?v=" + secret).query.decode()[2:]}
    for encoded in (base64.b64encode(data), base64.urlsafe_b64encode(data),
                    *(base64.b64encode(f"{user}:{secret}".encode()) for user in users)):
        out |= {encoded.decode(), encoded.decode().rstrip("=")}
    out |= {form[:n] for form in (secret, *escaped) for n in range(PREFIX, len(form))}
    return out


def leaked(text: str, *secrets: str) -> list[str]:
    return sorted(form for secret in secrets for form in leak_forms(secret) if form in text)


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["apimctl", *args])
    capsys.readouterr()
    code = run_guarded(cli)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The manifests, the test file (its path padded so that the 200-character cut of the echo
    falls inside the query) and the variables, in ``tmp_path``, the working directory."""
    for name in ("APIMCTL_URL", "APIMCTL_TOKEN", "APIMCTL_PROFILE", "CI"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {"DEPLOY_SECRET": DEPLOY_SECRET, "DATABASE_URL": DATABASE_URL, "GITHUB_TOKEN": GITHUB_TOKEN,
                        "APIMCTL_TEST_TOKEN": TEST_TOKEN}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "echo.yaml").write_text(MANIFEST)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "echo.test.yaml").write_text(TESTS.replace("PADDING", "p" * 120))
    return tmp_path


PLANTED = (DEPLOY_SECRET, DATABASE_URL, GITHUB_TOKEN, TEST_TOKEN)


def test_no_report_of_test_or_plan_tests_shows_a_planted_value(planted: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    outputs = {}
    for fmt, dialect in (("text", "spec"), ("json", "mashery"), ("junit", "spec"), ("markdown", "mashery")):
        code, out = run(monkeypatch, capsys, "test", "t", "--manifests", "m", "--format", fmt, "--dialect", dialect)
        assert code == 1 and "Call checks: 0 passed, 2 failed" in out, out
        outputs[f"test {fmt}"] = out
    for fmt in ("text", "markdown", "json"):
        code, out = run(monkeypatch, capsys, "plan", "m", "--tests", "t", "--format", fmt)
        assert code == 1 and "Call checks: 0 passed, 2 failed" in out, out
        outputs[f"plan {fmt}"] = out
    for where, out in outputs.items():
        assert leaked(out, *PLANTED) == [], where
    report = json.loads(outputs["test json"].split("\nCall checks:")[0])
    failures = " ".join(f for r in report["results"] for f in r["failures"])
    assert "got \"Basic (sensitive)\"" in failures  # the echo's credentials were quoted, masked
    assert 'body $.query: expected "x", got "v=(sensitive)"' in failures  # the query's shape shows
    assert "Basic (sensitive)" in outputs["test text"] and "(sensitive)" in outputs["plan markdown"]


@pytest.fixture
def echo_server() -> Iterator[str]:
    """Echoes the ``Authorization`` it gets: a 500 for the list of services (raw, JSON-escaped,
    base64 of the token and of ``ops:token``), the call log of ``/operator/traffic`` (a
    decision quoting it), and every other request (the traffic listener) as JSON."""

    def forms(auth: str) -> dict[str, str]:
        token = auth.partition(" ")[2]
        return {"seen": auth, "b64": base64.b64encode(token.encode()).decode(),
                "basic": base64.b64encode(f"ops:{token}".encode()).decode()}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def send(self, status: int, payload: object) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            auth = self.headers.get("Authorization", "")
            if self.path.startswith("/v3/rest/services"):
                self.send(500, {"errorCode": 500, "errorMessage": f"cannot serve {json.dumps(forms(auth))}"})
            elif self.path.startswith("/operator/traffic"):
                self.send(200, [{"method": "GET", "path": "/call", "host": "api.example.com", "decidedBy": "echo",
                                 "steps": [{"step": "echo", "decision": json.dumps(forms(auth))}]}])
            else:
                self.send(200, {"path": self.path, "headers": dict(self.headers), "forms": forms(auth)})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_tokens_of_test_and_call_never_show(echo_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("APIMCTL_TEST_TOKEN", TEST_TOKEN)
    monkeypatch.setenv("APIMCTL_CALL_TOKEN", CALL_TOKEN)
    monkeypatch.setenv("APIMCTL_CALL_OPERATOR_TOKEN", OPERATOR_TOKEN)
    (tmp_path / "r.test.yaml").write_text("calls:\n  - {name: any, url: 'http://api.example.com/call', "
                                          "expect: {status: 200}}\n")
    remote = ["--url", echo_server, "--traffic-url", echo_server]
    outputs = {}
    code, outputs["test APIMCTL_TEST_TOKEN"] = run(monkeypatch, capsys, "test", "r.test.yaml", *remote)
    assert code == 1 and "reading the services" in outputs["test APIMCTL_TEST_TOKEN"]
    code, outputs["test --token"] = run(monkeypatch, capsys, "test", "r.test.yaml", *remote, "--token", FLAG_TOKEN)
    assert code == 1 and "reading the services" in outputs["test --token"]
    code, outputs["call --key"] = run(monkeypatch, capsys, "call", "GET", "http://api.example.com/call", "--key", "k",
                                      *remote)
    assert code == 1 and "reading the services" in outputs["call --key"]
    for fmt in ("text", "json"):
        code, outputs[f"call {fmt}"] = run(monkeypatch, capsys, "call", "GET", "http://api.example.com/call",
                                           "--format", fmt, "-i", *remote)
        assert code == 0 and "echo" in outputs[f"call {fmt}"]
    for where, out in outputs.items():
        assert leaked(out, TEST_TOKEN, FLAG_TOKEN, CALL_TOKEN, OPERATOR_TOKEN) == [], where
        assert "(sensitive)" in out, where
