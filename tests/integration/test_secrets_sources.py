"""Secrets from every source never reach a line of output, retry and ``-v`` lines included.

A stdlib server on 127.0.0.1 echoes what it receives: its token endpoint answers every other
exchange with a 503 quoting the form and the HTTP Basic header (then a token), its API
answers each list's first read with a 500 quoting the bearer token (then an empty list), and
every write with a 500 quoting the body. The credentials come from a flag, an ``APIMCTL_*``
variable and a profile of ``apimctl.toml`` (its ``${VAR}``); the tokens from the exchange;
the manifest's secret from the environment. ``plan -v`` (text, JSON, Markdown) and ``apply
-v`` (text and JSON) run through the real entry point, and no encoding of any of them (raw,
JSON-escaped, URL/form-encoded, hex, base64) may appear. Error bodies in either dialect (every
format in ``spec``, one of each command in ``mashery``: the dialect changes only the bodies).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from .test_secrets_echo import MANIFEST, error_body, forms, run, send_json

PASSWORD = 'pro"file/pw+1&é'  # from the profile's ${PROFILE_PW}
API_SECRET = "env-secret%2F-9"  # from APIMCTL_API_SECRET
API_KEY = "client-key-77"
FLAG_PASSWORD = "flag-pass\\word-3"  # from --password
MANIFEST_SECRET = "backend-secret-échos"
MANIFEST_PASSWORD = "backend-basic-pw-5"


@dataclass
class Echo:
    """The echoing server's state: tokens issued and lists already refused once."""

    dialect: str
    url: str = ""
    issued: list[str] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)
    token_calls: int = 0
    writes: int = 0
    refuse: bool = False  # the token endpoint refuses every exchange, quoting the form


@pytest.fixture(scope="module")
def echo(dialect: str) -> Iterator[Echo]:
    state = Echo(dialect)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def body(self) -> str:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")

        def do_POST(self) -> None:
            raw = self.body()
            if self.path.startswith("/v3/token"):
                state.token_calls += 1
                if state.refuse:
                    send_json(self, 401, {"error": "invalid_client", "error_description": f"refused {raw}"})
                    return
                if state.token_calls % 2:
                    auth = self.headers.get("Authorization", "")
                    send_json(self, 503, {"error": "unavailable", "error_description": f"got {raw} with {auth}"})
                    return
                token = f"access-{len(state.issued)}-q7x9"
                state.issued += [token, f"refresh-{len(state.issued)}-k2m4"]
                send_json(self, 200, {"token_type": "bearer", "access_token": token,
                                      "refresh_token": state.issued[-1], "expires_in": 3600})
                return
            state.writes += 1  # a 5xx first (retried after a look-up), then a refusal
            status = 500 if state.writes % 2 else 400
            send_json(self, status, error_body(dialect, status, f"failed: {raw}"))

        do_PUT = do_POST

        def do_GET(self) -> None:
            route = self.path.split("?", 1)[0]
            if route == "/v3/rest/services" and route not in state.refused:
                state.refused.add(route)
                auth = self.headers.get("Authorization", "")
                send_json(self, 500, error_body(dialect, 500, f"cannot serve {auth}"))
                return
            send_json(self, 200, [])

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v3/rest"
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def area(echo: Echo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Echo:
    """A fresh run: the lists refuse once again; the manifest, the profile and the variables."""
    echo.refused.clear()
    echo.refuse, echo.token_calls = False, 0
    (tmp_path / "m.yaml").write_text(MANIFEST)
    (tmp_path / "apimctl.toml").write_text(
        f'[profiles.ci]\nurl = "{echo.url}"\napi_key = "${{PROFILE_KEY}}"\nusername = "ops"\n'
        'password = "${PROFILE_PW}"\narea = "area-1"\nqps = 0\n')
    for name, value in {"PROFILE_PW": PASSWORD, "PROFILE_KEY": API_KEY, "APIMCTL_API_SECRET": API_SECRET,
                        "ECHO_SECRET": MANIFEST_SECRET, "ECHO_PASSWORD": MANIFEST_PASSWORD}.items():
        monkeypatch.setenv(name, value)
    return echo


def leaked(text: str, secrets: list[str]) -> list[str]:
    return [form for secret in secrets for form in forms(secret) if form in text]


def test_profile_environment_and_exchange_secrets_in_plan_output(area: Echo, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    outputs = []
    for fmt in ("text", "json", "markdown") if area.dialect == "spec" else ("markdown",):
        area.refused.clear()
        area.token_calls = 0
        code, text = run(tmp_path, monkeypatch, capsys, "plan", "--profile", "ci", "-v", "--timeout", "5",
                         "--format", fmt, "m.yaml")
        assert code == 0, text
        assert "retrying" in text and "503" in text and "500" in text, text  # the echoes were logged
        assert "password=(sensitive)" in text and "Bearer ***" in text, text
        outputs.append(text)
    area.refuse = True  # a refusal quoting the form: the error line
    code, text = run(tmp_path, monkeypatch, capsys, "plan", "--profile", "ci", "m.yaml")
    assert code == 1 and "password=(sensitive)" in text, text
    outputs.append(text)
    everything = "\n".join(outputs)
    secrets = [PASSWORD, API_SECRET, f"{API_KEY}:{API_SECRET}", *area.issued, MANIFEST_SECRET, MANIFEST_PASSWORD]
    assert leaked(everything, secrets) == []
    assert "(sensitive)" in everything


def test_flag_credentials_and_request_bodies_in_apply_lines(area: Echo, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    outputs = []
    for fmt in ("text", "json") if area.dialect == "spec" else ("json",):
        area.refused.clear()
        area.token_calls = 0
        code, text = run(tmp_path, monkeypatch, capsys, "apply", "--profile", "ci", "--password", FLAG_PASSWORD,
                         "-v", "--timeout", "5", "--no-lock", "--auto-approve", "--format", fmt, "m.yaml")
        assert code in (1, 3), text
        assert "failed:" in text and "password=(sensitive)" in text, text  # the echoes were reported ...
        outputs.append(text)
    everything = "\n".join(outputs)
    secrets = [FLAG_PASSWORD, API_SECRET, f"{API_KEY}:{API_SECRET}", *area.issued, MANIFEST_SECRET, MANIFEST_PASSWORD]
    assert leaked(everything, secrets) == []
    assert "(sensitive)" in everything  # ... with the secrets replaced
