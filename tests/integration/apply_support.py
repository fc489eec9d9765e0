"""Shared vocabulary of the apply integration tests: a real reference server in a subprocess
(`python -m apimctl serve` on 127.0.0.1 and a free port), `apimctl` runs as subprocesses, a
small manifest, and an inventory of what the area holds (to count objects and duplicates).

The server runs either dialect (``server(tmp, *dialect_options)``, SUPPLEMENT §10); what the
tests read from it directly goes through helpers that accept both dialects' shapes
(:func:`one`, :func:`error_code`).
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner

from apimctl.cli import cli
from apimctl.cli.common import run_guarded

from .dialect_support import one

OPERATOR = "operator-token-apply-tests"
TOKEN = "apply-token-a"
TOKEN_B = "apply-token-b"
AREA = "area-apply"
SECRET_VALUES = {"FORECAST_SECRET": "fc-s3cr3t-9f8e7d", "BACKEND_PASSWORD": "bk-pa55-1a2b3c"}
OVER_QPS = "ERR_403_DEVELOPER_OVER_QPS"
OVER_RATE = "ERR_403_DEVELOPER_OVER_RATE"
# the error-code header of each dialect (SUPPLEMENT §6 ``spec``, §10.1 ``mashery``)
ERROR_CODE_HEADERS = ("X-Svc-Error-Code", "X-Mashery-Error-Code")


def readable(fd: int, timeout: float) -> bool:
    """Whether ``fd`` (a terminal's side) has something to read within ``timeout`` seconds.
    ``poll`` rather than ``select``, which refuses descriptors numbered 1024 and above."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    return bool(poller.poll(max(0.0, timeout) * 1000))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """A reference server subprocess; ``extra`` are more `apimctl serve` options."""

    tmp: Path
    extra: Sequence[str] = ()
    auto_approve: bool = True
    db: str = ""  # database file name in ``tmp`` (a fresh one per server when empty)
    areas: int = 0  # more areas, each with its own token (see ``fresh_token``)
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    used: int = 0
    _http: httpx.Client | None = None  # one connection pool for the tests' own reads

    @property
    def http(self) -> httpx.Client:
        """The client of the tests' direct calls (one, not a new TLS context per call)."""
        if self._http is None:
            self._http = httpx.Client(timeout=5)
        return self._http

    def fresh_token(self) -> str:
        """The token of an area no test has used yet on this server."""
        self.used += 1
        assert self.used <= self.areas, "start the server with more areas"
        return f"area-token-{self.used}"

    @staticmethod
    def area_of(token: str) -> str:
        """The area a token of :meth:`start` is bound to (the name the server stores)."""
        return AREA if token in (TOKEN, TOKEN_B) else token.replace("area-token-", "area-", 1)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/v3/rest"

    def start(self) -> Server:
        self.port = free_port()
        cmd = [sys.executable, "-m", "apimctl", "serve", "--host", "127.0.0.1", "--port", str(self.port),
               "--db", str(self.tmp / (self.db or f"server-{self.port}.db")), "--operator-token", OPERATOR,
               "--token", f"{TOKEN}={AREA}", "--token", f"{TOKEN_B}={AREA}", *self.extra]
        for i in range(1, self.areas + 1):
            cmd += ["--token", f"area-token-{i}=area-{i}"]
        if self.auto_approve:
            cmd.append("--auto-approve-domains")
        log = open(self.tmp / f"server-{self.port}.log", "wb")  # noqa: SIM115 - kept for the process lifetime
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {(self.tmp / f'server-{self.port}.log').read_text()}")
            try:
                httpx.get(f"{self.base}/operator/calls", headers=self.operator(), timeout=1)
                return self
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError("server did not start")

    def stop(self) -> None:
        if self._http is not None:
            self._http.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def operator(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {OPERATOR}"}

    def calls(self) -> dict[str, Any]:
        reply = self.http.get(f"{self.base}/operator/calls", headers=self.operator())
        reply.raise_for_status()
        data: dict[str, Any] = reply.json()
        return data

    def writes(self) -> int:
        """Management API writes the server has seen (from the operator call counter)."""
        return count_calls(self.calls(), ("POST", "PUT", "DELETE"))

    def get(self, path: str, params: dict[str, str] | None = None, token: str = TOKEN) -> Any:
        """A GET that survives injected faults (tries until it gets a 200)."""
        last = ""
        for _ in range(60):
            try:
                reply = self.http.get(self.url + path, params=params, timeout=3,
                                      headers={"Authorization": f"Bearer {token}"})
            except httpx.TransportError as exc:
                last = repr(exc)
                continue
            if reply.status_code == 200:
                return reply.json()
            last = f"{reply.status_code} {reply.text[:200]}"
            time.sleep(0.2 if reply.status_code == 403 else 0.02)
        raise AssertionError(f"GET {path} kept failing: {last}")

    def fetch(self, path: str, params: dict[str, str] | None = None, token: str = TOKEN) -> dict[str, Any]:
        """One object (``GET /services/{id}``), in either dialect's shape (:func:`one`)."""
        return one(self.get(path, params, token))

    def put(self, path: str, body: Any, token: str = TOKEN) -> None:
        reply = self.http.put(self.url + path, json=body, headers={"Authorization": f"Bearer {token}"})
        assert reply.status_code == 200, reply.text


def error_code(reply: httpx.Response) -> str | None:
    """The platform's error code of a refusal: the dialect's error-code header, else the
    body's ``errorCode`` when it is a string (``mashery``; ``spec`` has the HTTP status)."""
    for name in ERROR_CODE_HEADERS:
        if name in reply.headers:
            return reply.headers[name]
    try:
        body = reply.json()
    except ValueError:
        return None
    code = body.get("errorCode") if isinstance(body, dict) else None
    return code if isinstance(code, str) else None


def throttled_reply(srv: Server, token: str, tries: int = 50) -> httpx.Response:
    """The reply of a call over the server's ``--qps`` limit (calls sent back to back)."""
    for _ in range(tries):
        reply = httpx.get(srv.url + "/domains", timeout=5, headers={"Authorization": f"Bearer {token}"})
        if reply.status_code == 403:
            return reply
    raise AssertionError(f"{tries} calls in a row and none was throttled")


def count_calls(snapshot: Any, methods: Sequence[str], status: str | None = None) -> int:
    """Management API calls of ``methods`` in an operator snapshot (answered ``status`` only,
    when given)."""
    total = 0
    for entry in snapshot.get("calls", []):
        if entry["method"] in methods and str(entry["path"]).startswith("/v3/rest"):
            total += entry["count"] if status is None else entry.get("statuses", {}).get(status, 0)
    return total


@contextmanager
def server(tmp: Path, *extra: str, auto_approve: bool = True, db: str = "", areas: int = 0) -> Iterator[Server]:
    srv = Server(tmp, extra, auto_approve, db, areas).start()
    try:
        yield srv
    finally:
        srv.stop()


@dataclass
class Runs:
    """Every output of every run, to scan for secrets at the end."""

    outputs: list[str] = field(default_factory=list)

    def run(self, srv: Server, *args: str, token: str = TOKEN, timeout: float = 120,
            env: dict[str, str] | None = None, unset: Sequence[str] = (),
            subprocess_: bool = False) -> Completed:
        """Run apimctl: in this process by default (fast), or as ``python -m apimctl``."""
        environ = {k: v for k, v in apimctl_env(srv, token, env).items() if k not in unset}
        if subprocess_:
            proc = subprocess.run(
                [sys.executable, "-m", "apimctl", *args], capture_output=True, text=True, timeout=timeout,
                env=environ, stdin=subprocess.DEVNULL, cwd=srv.tmp,
            )
            done = Completed(proc.returncode, proc.stdout, proc.stderr)
        else:
            done = run_in_process(list(args), environ)
        self.outputs += [done.stdout, done.stderr]
        return done

    def assert_no_secrets(self, *extra_files: Path) -> None:
        texts = [*self.outputs, *(p.read_text() for p in extra_files)]
        for value in SECRET_VALUES.values():
            for text in texts:
                assert value not in text


@dataclass
class Completed:
    returncode: int
    stdout: str
    stderr: str


def run_in_process(args: list[str], environ: dict[str, str]) -> Completed:
    """``apimctl ARGS`` through the real entry point (``run_guarded``), without a new Python."""
    changes: dict[str, str | None] = {k: None for k in os.environ if k not in environ}
    changes.update(environ)
    runner = CliRunner()
    with runner.isolation(input="", env=changes) as (out, err, _):
        argv = sys.argv
        sys.argv = ["apimctl", *args]
        try:
            code = run_guarded(cli)
        finally:
            sys.argv = argv
        return Completed(code, out.getvalue().decode(), err.getvalue().decode())


def apimctl_env(srv: Server, token: str = TOKEN, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("APIMCTL_")}
    env.update({"APIMCTL_URL": srv.url, "APIMCTL_TOKEN": token, "APIMCTL_QPS": "0", "NO_COLOR": "1",
                "COLUMNS": "200", **SECRET_VALUES})
    env.update(extra or {})
    return env


def inventory(srv: Server, token: str = TOKEN) -> Counter[str]:
    """Every object of the area by address; a count above 1 is a duplicate."""
    found: Counter[str] = Counter()
    services = srv.get("/services", {"fields": "id,name,endpoints.name,errorSets.name,endpoints.methods.name",
                                     "limit": "1000"}, token)
    for svc in services:
        found[f"service:{svc['name']}"] += 1
        for ep in svc.get("endpoints") or []:
            found[f"endpoint:{svc['name']}/{ep['name']}"] += 1
            for m in ep.get("methods") or []:
                found[f"method:{svc['name']}/{ep['name']}/{m['name']}"] += 1
        for es in svc.get("errorSets") or []:
            found[f"errorSet:{svc['name']}/{es['name']}"] += 1
    for pkg in srv.get("/packages", {"fields": "id,name,plans.name", "limit": "1000"}, token):
        found[f"package:{pkg['name']}"] += 1
        for plan in pkg.get("plans") or []:
            found[f"plan:{pkg['name']}/{plan['name']}"] += 1
    for role in srv.get("/roles", {"limit": "1000"}, token):
        found[f"role:{role['name']}"] += 1
    for dom in srv.get("/domains", {"limit": "1000"}, token):
        found[f"domain:{dom['domain']}"] += 1
    for ev in srv.get("/scheduledMaintenanceEvents", {"limit": "1000"}, token):
        found[f"maintenanceEvent:{ev['name']}"] += 1
    return found


def write_manifest(folder: Path, services: int = 3, *, secrets: bool = True) -> Path:
    """A small manifest: a domain, a role, ``services`` services (2 endpoints, 1 error set
    each), a package with 2 plans and a maintenance event. Returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["domains: [example.com]", "roles: [Partners]", "services:"]
    for i in range(services):
        lines += [
            f"  - name: Svc{i}",
            "    version: \"1\"",
            "    roles: [Partners]",
            "    errorSets:",
            "      - name: JSON errors",
            "        errorMessages:",
            "          - {id: ERR_403_DEVELOPER_OVER_QPS, status: Too Many Requests, responseBody: slow down}",
            "    endpoints:",
            "      - name: Forecast",
            f"        requestPathAlias: /s{i}/forecast",
            "        trafficManagerDomain: api.example.com",
            "        publicDomains: [api.example.com]",
            "        systemDomains: [backend.example.com]",
            "        errorSet: JSON errors",
            "        cors: {allDomainsEnabled: false, maxAge: 60, domainsAllowed: [\"https://app.example.com\"]}",
            "        methods:",
            "          - name: getForecast",
            "            responseFilters: [{name: public, jsonFilterFields: \"a,b\"}]",
        ]
        if secrets and i == 0:
            lines += [
                "        systemDomainCredentialKey: svc",
                "        systemDomainCredentialSecret: \"${FORECAST_SECRET}\"",
                "        systemDomainAuthentication: {type: httpBasic, username: svc, password: \"${BACKEND_PASSWORD}\"}",
            ]
        lines += [
            "      - name: Alerts",
            f"        requestPathAlias: /s{i}/alerts",
            "        trafficManagerDomain: api.example.com",
            "        publicDomains: [api.example.com]",
            "        systemDomains: [backend.example.com]",
        ]
    lines += [
        "packages:",
        "  - name: Partners",
        "    plans:",
        "      - name: Gold",
        "        qpsLimitCeiling: 10",
        "        roles: [Partners]",
        "        services: [{name: Svc0, endpoints: [Forecast]}]",
        "      - name: Silver",
        f"        services: [{{name: Svc{services - 1}}}]",
        "scheduledMaintenanceEvents:",
        "  - name: Upgrade",
        "    startDateTime: \"2026-12-01T02:00:00Z\"",
        "    endDateTime: \"2026-12-01T04:00:00Z\"",
        "    endpoints: [{service: Svc0, endpoint: Alerts}]",
    ]
    (folder / "main.yaml").write_text("\n".join(lines) + "\n")
    return folder


def expected_objects(services: int = 3) -> set[str]:
    out = {"domain:example.com", "role:Partners", "package:Partners", "plan:Partners/Gold",
           "plan:Partners/Silver", "maintenanceEvent:Upgrade"}
    for i in range(services):
        out |= {f"service:Svc{i}", f"errorSet:Svc{i}/JSON errors", f"endpoint:Svc{i}/Forecast",
                f"endpoint:Svc{i}/Alerts", f"method:Svc{i}/Forecast/getForecast"}
    return out


def apply_summary(stdout: str) -> dict[str, Any]:
    """The summary of an `apply --format json` run: the last line of its stream (one JSON
    object per line: the step events, then the summary)."""
    import json

    lines = stdout.strip().splitlines()
    assert lines, "no output"
    summary: dict[str, Any] = json.loads(lines[-1])
    assert summary["type"] == "summary", summary
    return summary


def killed_run(srv: Server, token: str, args: Sequence[str], writes: int) -> None:
    """``apimctl ARGS`` in a child process of this one (forked: no Python start-up), killed
    with SIGKILL once the server has seen ``writes`` more writes, or when it ends first."""
    before = srv.writes()
    pid = os.fork()
    if pid == 0:  # the child: the real entry point, then out without any clean-up
        code = 1
        try:
            code = run_in_process(list(args), apimctl_env(srv, token)).returncode
        finally:
            os._exit(code)
    deadline = time.monotonic() + 30
    while srv.writes() < before + writes and time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return  # it ended before it was killed
        # no sleep: each look is a call to the server
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
