"""Secrets with special characters never reach any output, even from a server that echoes
every request it refuses (body and query, as it received them).

A tiny stdlib HTTP server on 127.0.0.1 lists an empty area and answers every write with a 400
whose message is the raw request body and query. ``plan`` and ``apply`` run through the real
entry point; stdout, stderr, the saved plan and the JSON outputs must hold the secret in none
of the encodings apimctl produces (raw, JSON-escaped, URL/form-encoded, hex, base64).

The servers answer in either dialect (the ``dialect`` fixture, SUPPLEMENT §10): error bodies
with a numeric or a string ``errorCode``, and the ``mashery`` dialect's ``X-Mashery-Error-Code``
and ``X-Error-Detail-Header`` on authentication failures, taken from the reference server's
table of dialects. The client detects the dialect from them.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from apimctl.cli import cli
from apimctl.cli.common import run_guarded
from apimctl.render.style import encodings
from apimctl.server.dialects import dialect_of

SECRETS = {
    "quote": 'pa"ss"word-1',
    "backslash": "C:\\back\\slash\\9",
    "unicode": "gehéim-秘密-☃-x",
    "percent": "100%+plus&amp=1",
    "newline": "first line here\nsecond line here",
    "all": 'q"b\\u%+&\n\u00e9-end/"x',
}

MANIFEST = """\
services:
  - name: Echo
    endpoints:
      - name: Call
        requestPathAlias: /call
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
        systemDomainCredentialSecret: ${ECHO_SECRET}
        systemDomainAuthentication:
          type: httpBasic
          username: svc
          password: ${ECHO_PASSWORD}
"""


class _Quiet(ThreadingHTTPServer):
    """The echo servers: a client that hangs up before the answer is sent (it stopped
    retrying) is not what these tests look at, so it is not reported on stderr."""

    def handle_error(self, request: object, client_address: object) -> None:
        pass


def error_body(dialect: str, status: int, message: str, items: list[dict[str, str]] | None = None) -> object:
    """An error body as the dialect writes it: ``errorCode`` the status (``spec``, with the
    ``errors`` items real deployments add, SUPPLEMENT §9) or a string code (``mashery``)."""
    code: object = dialect_of(dialect).code_of(status) if dialect == "mashery" else status
    body: dict[str, object] = {"errorCode": code, "errorMessage": message}
    if items is not None or dialect == "mashery":
        body["errors"] = items or []
    return body


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: object,
              headers: dict[str, str] | None = None) -> None:
    body = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def is_item(path: str) -> bool:
    """``/v3/rest/services/{id}``: an object's address (a list's has an odd number of parts)."""
    parts = [p for p in path.split("?", 1)[0].removeprefix("/v3/rest").split("/") if p]
    return len(parts) % 2 == 0


@pytest.fixture(scope="module")
def echo_server(dialect: str) -> Iterator[str]:
    """Lists are empty, objects unknown; every write is refused with a 400 echoing the body and
    the query."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            if is_item(self.path):
                send_json(self, 404, error_body(dialect, 404, "no such object"))
            else:
                send_json(self, 200, [])

        def _echo(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(size).decode("utf-8", "replace")
            send_json(self, 400, error_body(dialect, 400, f"bad request: {raw} ?{self.path}",
                                            [{"property": "x", "message": raw}]))

        do_POST = do_PUT = do_DELETE = _echo

    server = _Quiet(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v3/rest"
    server.shutdown()
    server.server_close()


def forms(secret: str) -> set[str]:
    """Every encoding of ``secret`` that must not appear (built independently of the redactor)."""
    data = secret.encode()
    out = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
           quote(secret, safe=""), quote_plus(secret), binascii.hexlify(data).decode(),
           binascii.hexlify(data).decode().upper(), base64.b64encode(data).decode(),
           base64.urlsafe_b64encode(data).decode(), base64.b64encode(data).decode().rstrip("=")}
    return {f for f in out if len(f) >= 4}


def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        *args: str) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["apimctl", *args])
    capsys.readouterr()
    code = run_guarded(cli)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_no_encoding_of_a_secret_reaches_any_output(name: str, echo_server: str, dialect: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    secret = SECRETS[name]
    for var in ("APIMCTL_URL", "APIMCTL_TOKEN", "APIMCTL_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ECHO_SECRET", secret)
    monkeypatch.setenv("ECHO_PASSWORD", secret[::-1] + "-pw")
    (tmp_path / "m.yaml").write_text(MANIFEST)
    common = ["--url", echo_server, "--token", "tok-echo-test", "--qps", "0", "--timeout", "5"]
    outputs = []
    for fmt in ("text", "json", "markdown"):
        code, text = run(tmp_path, monkeypatch, capsys, "plan", *common, "--format", fmt, "m.yaml")
        assert code == 0, text
        outputs.append(text)
    code, text = run(tmp_path, monkeypatch, capsys, "plan", *common, "--out", "saved.json", "m.yaml")
    assert code == 0, text
    assert json.loads((tmp_path / "saved.json").read_text())["dialect"] == dialect  # detected from the replies
    outputs += [text, (tmp_path / "saved.json").read_text()]
    for fmt in ("text", "json"):
        for verbose in ([], ["-v"]):
            code, text = run(tmp_path, monkeypatch, capsys, "apply", *common, *verbose, "--no-lock",
                             "--auto-approve", "--format", fmt, "m.yaml")
            assert code in (1, 3), text
            assert "400" in text, text  # the echoing refusal was reported ...
            outputs.append(text)
    code, text = run(tmp_path, monkeypatch, capsys, "apply", *common, "--no-lock", "--auto-approve",
                     "--plan", "saved.json")
    assert code in (1, 3), text
    outputs.append(text)
    everything = "\n".join(outputs)
    for value in (secret, secret[::-1] + "-pw"):
        for form in forms(value):
            assert form not in everything, (name, form)
    assert "(sensitive)" in everything  # ... with the secret replaced


@pytest.mark.parametrize("secret", sorted(SECRETS.values()))
def test_the_redactor_knows_every_encoding(secret: str) -> None:
    assert forms(secret) <= encodings(secret) | {secret}


@pytest.fixture(scope="module")
def echoing_token_server(dialect: str) -> Iterator[str]:
    """A token endpoint that refuses every exchange, echoing the form and the Basic header;
    the API refuses every token, echoing the Authorization header."""
    answers = dialect_of(dialect)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(size).decode("utf-8", "replace")
            auth = self.headers.get("Authorization", "")
            send_json(self, 401, {"error": "invalid_client", "error_description": f"refused {raw} with {auth}"},
                      answers.auth_headers(401, token=True))

        def do_GET(self) -> None:
            auth = self.headers.get("Authorization", "")
            send_json(self, 401, error_body(dialect, 401, f"bad token {auth}"), answers.auth_headers(401))

    server = _Quiet(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v3/rest"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("name", ["quote", "percent", "unicode"])
def test_connection_credentials_never_reach_any_output(name: str, echoing_token_server: str,
                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The token exchange's secret and password, and a bearer token, echoed by a refusing
    server, are scrubbed from the error in every encoding (HTTP Basic included)."""
    secret, password = SECRETS[name], SECRETS[name][::-1] + "-pw"
    for var in ("APIMCTL_URL", "APIMCTL_TOKEN", "APIMCTL_PROFILE", "APIMCTL_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "m.yaml").write_text(MANIFEST.replace("${ECHO_SECRET}", "x").replace("${ECHO_PASSWORD}", "y"))
    monkeypatch.setenv("APIMCTL_API_SECRET", secret)
    code, text = run(tmp_path, monkeypatch, capsys, "plan", "--url", echoing_token_server,
                     "--api-key", "client-key", "--username", "ops", "--password", password,
                     "--area", "area-1", "--qps", "0", "--timeout", "5", "m.yaml")
    assert code == 1 and "refused" in text, text
    basic = base64.b64encode(f"client-key:{secret}".encode()).decode()
    for form in forms(secret) | forms(password) | {basic}:
        assert form not in text, (name, form)
    token = f"tok-{name}-1234"
    code, text = run(tmp_path, monkeypatch, capsys, "plan", "--url", echoing_token_server,
                     "--token", token, "--qps", "0", "--timeout", "5", "m.yaml")
    assert code == 1, text
    assert token not in text, text
