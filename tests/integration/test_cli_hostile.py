"""Hostile input to every command: a clear, located error, the right exit code, no traceback
(with and without ``-v``), nothing half-written and no secret in the output.

Most cases run the real entry point (:func:`apimctl.cli.common.run_guarded`) in-process, in a
scratch directory, so the embedded reference server's files show whether anything was touched.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from apimctl.cli import cli
from apimctl.cli.common import run_guarded

SECRET = "hostile-secret-5e1f0c"
TOKEN = "hostile-token-9b2d44"
MANIFEST = """\
services:
  - name: Weather
    endpoints:
      - name: Forecast
        requestPathAlias: /v2/forecast
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
        systemDomainCredentialSecret: ${HOSTILE_SECRET}
domains: [example.com, example.net]
"""


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``run(*args, env=...)``: apimctl in ``tmp_path`` with the secret set and no APIMCTL_*."""
    import os

    for name in [n for n in os.environ if n.startswith("APIMCTL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOSTILE_SECRET", SECRET)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "weather.yaml").write_text(MANIFEST)

    def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setattr(sys, "argv", ["apimctl", *args])
        capsys.readouterr()
        code = run_guarded(cli)
        captured = capsys.readouterr()
        for name in env or {}:
            monkeypatch.delenv(name)
        return Result(code, captured.out, captured.err)

    return invoke


def check_error(result: Result, *expected: str, code: int = 1) -> None:
    assert result.code == code, result.text
    assert "Traceback" not in result.text
    assert "internal error" not in result.text
    assert SECRET not in result.text and TOKEN not in result.text
    for piece in expected:
        assert piece in result.err, result.err


def untouched(folder: Path) -> bool:
    """Nothing was created: no embedded server database (so no call was made)."""
    return not (folder / ".apimctl").exists()


# --- manifests -------------------------------------------------------------------------------

BAD_INPUTS = {
    "missing.yaml": (None, "missing.yaml: no such file or directory"),
    "emptydir": ("<dir>", "emptydir: no *.yaml or *.yml files"),
    "empty.yaml": ("", "empty.yaml: no objects found"),
    "binary.yaml": (b"\x00\xff\xfe\x80garbage" * 50, "binary.yaml:1:"),
    "invalid.yaml": ("services:\n  - name: A\n    endpoints: [\n", "invalid.yaml:4:1: invalid YAML"),
    "schema.yaml": ("services:\n  - name: X\n    qpsLimitOverall: lots\n",
                    "schema.yaml:3:5: services[0].qpsLimitOverall: must be integer"),
    "dangling.yaml": ("packages:\n  - name: P\n    plans:\n      - name: G\n"
                      "        services: [{name: Nope, endpoints: [X]}]\n",
                      "dangling.yaml:5:21: packages[0].plans[0].services[0].name: unknown service 'Nope'"),
    "unset.yaml": (MANIFEST.replace("HOSTILE_SECRET", "HOSTILE_UNSET_VAR"),
                   "environment variable HOSTILE_UNSET_VAR is not set"),
}


def _write_input(folder: Path, name: str) -> None:
    content = BAD_INPUTS[name][0]
    if content == "<dir>":
        (folder / name).mkdir()
        (folder / name / "notes.txt").write_text("not a manifest")
    elif isinstance(content, bytes):
        (folder / name).write_bytes(content)
    elif content is not None:
        (folder / name).write_text(content)


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
@pytest.mark.parametrize("command", ["validate", "plan", "apply", "drift"])
def test_bad_manifests_are_located_errors_before_any_call(run, tmp_path: Path, command: str, name: str) -> None:
    _write_input(tmp_path, name)
    extra = ["--auto-approve"] if command == "apply" else []
    for verbose in ([], ["-v"]) if command != "validate" else ([],):
        result = run(command, *extra, *verbose, name)
        message = BAD_INPUTS[name][1]
        assert message in result.text, result.text
        check_error(result)
    assert untouched(tmp_path)


# --- options ---------------------------------------------------------------------------------

BAD_OPTIONS = [
    (["--qps", "-1"], "'--qps': '-1' must be a non-negative number"),
    (["--qps", "nan"], "'--qps': 'nan' must be a non-negative number"),
    (["--qps", "fast"], "'--qps': 'fast' is not a number"),
    (["--timeout", "0"], "'--timeout': '0' must be a positive number"),
    (["--parallelism", "0"], "'--parallelism'"),
    (["--max-deletes", "-1"], "'--max-deletes'"),
    (["--format", "bogus"], "'--format'"),
    (["--target", "foo"], "--target 'foo': expected KIND:NAME"),
    (["--target", "service:"], "--target 'service:': expected KIND:NAME"),
    (["--target", "spaceship:x"], "unknown kind 'spaceship'"),
    (["--ignore", "x"], "ignore target 'x': expected KIND:NAME:FIELD_PATH"),
    (["--ignore", "service:Weather:"], "expected KIND:NAME:FIELD_PATH"),
    (["--url", "example.com"], "--url (APIMCTL_URL): expected http(s)://HOST[:PORT]/v3/rest"),
    (["--url", "ftp://example.com"], "--url (APIMCTL_URL): expected http(s)://"),
    (["--url", "http://u:p@example.com"], "must not carry credentials"),
    (["--url", "http://127.0.0.1:1"], "--url needs credentials"),
    (["--url", "http://127.0.0.1:1", "--api-key", "k"], "missing: --api-secret"),
]


@pytest.mark.parametrize(("options", "message"), BAD_OPTIONS, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
@pytest.mark.parametrize("command", ["plan", "apply", "drift"])
def test_bad_options_fail_before_any_call(run, tmp_path: Path, command: str, options: list[str], message: str) -> None:
    if (command == "apply" and options[0] == "--format") or (command == "drift" and options[0] == "--max-deletes"):
        pytest.skip("not an option of this command")
    extra = ["--auto-approve"] if command == "apply" else []
    check_error(run(command, *extra, *options, "good"), message)
    assert untouched(tmp_path)


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("APIMCTL_QPS", "-3", "'--qps' (from APIMCTL_QPS): '-3' must be a non-negative number"),
    ("APIMCTL_TIMEOUT", "nan", "'--timeout' (from APIMCTL_TIMEOUT)"),
    ("APIMCTL_PARALLELISM", "many", "'--parallelism' (from APIMCTL_PARALLELISM)"),
    ("APIMCTL_PLAN_FORMAT", "yaml", "'--format' (from APIMCTL_PLAN_FORMAT)"),
    ("APIMCTL_PLAN_PRUNE", "maybe", "'--prune' (from APIMCTL_PLAN_PRUNE)"),
    ("APIMCTL_URL", "not a url", "--url (APIMCTL_URL)"),
    ("APIMCTL_PLAN_OVERLAY", "/no/such/overlay", "'--overlay' (from APIMCTL_PLAN_OVERLAY)"),
])
def test_bad_environment_variables_name_the_variable(run, tmp_path: Path, variable: str, value: str,
                                                     message: str) -> None:
    check_error(run("plan", "good", env={variable: value}), message)
    assert untouched(tmp_path)


def test_qps_zero_turns_the_client_side_limit_off(run) -> None:
    result = run("plan", "--qps", "0", "good")
    assert result.code == 0, result.text
    assert "+ create service" in result.out


def test_apply_without_a_terminal_needs_auto_approve(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    check_error(run("apply", "good"), "pass --auto-approve")
    assert untouched(tmp_path)


# --- plan --out ------------------------------------------------------------------------------


@pytest.mark.parametrize("out", ["nodir/plan.json", "afile/plan.json"])
def test_plan_out_into_a_missing_directory_fails_before_planning(run, tmp_path: Path, out: str) -> None:
    (tmp_path / "afile").write_text("x")
    result = run("plan", "--out", out, "good")
    check_error(result, f"cannot save the plan to {out}: directory")
    assert result.out == ""  # no plan printed for a run that failed
    assert untouched(tmp_path)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="open files are listed in /proc")
def test_the_embedded_server_leaves_no_file_open(run, tmp_path: Path) -> None:
    """A command against the embedded server closes its database with the client: a program
    (or a test run) calling apimctl again and again keeps no file of it open."""
    def database_files() -> list[str]:
        out = []
        for fd in Path("/proc/self/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if ".apimctl" in target and str(tmp_path) in target:
                out.append(target)
        return out

    for args in (("apply", "--auto-approve", "good"), ("plan", "good"), ("export", "--out", "out")):
        result = run(*args)
        assert result.code == 0, result.text
        assert database_files() == [], args


def test_plan_out_is_written_whole_and_holds_no_secret(run, tmp_path: Path) -> None:
    result = run("plan", "--out", "saved.json", "good")
    assert result.code == 0, result.text
    saved = (tmp_path / "saved.json").read_text()
    assert json.loads(saved)["steps"] and SECRET not in saved
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".saved")) == []


# --- apply --plan ----------------------------------------------------------------------------


def _edits() -> dict[str, object]:
    return {
        "truncated": lambda text, data: text[: len(text) // 2],
        "binary": lambda text, data: b"\x80\x81\xff" * 100,
        "list": lambda text, data: [1, 2],
        "other-version": lambda text, data: {**data, "format_version": "9.0"},
        "unknown-kind": lambda text, data: _step(data, 0, kind="spaceship"),
        "unknown-action": lambda text, data: _step(data, 0, action="explode"),
        "create-without-object": lambda text, data: _step(data, 0, desired=None),
        "dangling-depends-on": lambda text, data: _step(data, -1, depends_on=["service:Nope"]),
        "depends-on-a-number": lambda text, data: _step(data, -1, depends_on=7),
        "changes-a-string": lambda text, data: _step(data, 0, changes="x"),
        "step-a-number": lambda text, data: {**data, "steps": [5, *data["steps"]]},
        "steps-a-string": lambda text, data: {**data, "steps": "abc"},
        "duplicate-step": lambda text, data: {**data, "steps": [*data["steps"], data["steps"][0]]},
        "fingerprints-a-string": lambda text, data: {**data, "fingerprints": "x"},
        "id-an-object": lambda text, data: _step(data, 0, id={"a": 1}),
        "key-missing": lambda text, data: _step(data, 0, key=None),
    }


def _step(data: dict, index: int, **changes: object) -> dict:
    steps = [dict(s) for s in data["steps"]]
    steps[index].update(changes)
    return {**data, "steps": steps}


EXPECTED = {
    "truncated": "not a saved plan (invalid JSON",
    "binary": "not a saved plan (not UTF-8 text",
    "list": "not a saved plan (no `steps`)",
    "other-version": "format_version '9.0'; this apimctl reads 1.0",
    "unknown-kind": "steps[0].kind: unknown kind 'spaceship'",
    "unknown-action": "steps[0].action: expected one of create, update, delete",
    "create-without-object": "steps[0].desired: expected the object to create",
    "dangling-depends-on": "depends_on: 'service:Nope' is not a step of this plan",
    "depends-on-a-number": "depends_on: expected an array, got a number",
    "changes-a-string": "steps[0].changes: expected an array",
    "step-a-number": "steps[0]: expected an object, got a number",
    "steps-a-string": "steps: expected an array",
    "duplicate-step": "a second step for domain:example.com",
    "fingerprints-a-string": "fingerprints: expected an object",
    "id-an-object": "steps[0].id: expected a string or null, got an object",
    "key-missing": "steps[0].key: expected a string",
}


@pytest.fixture
def saved_plan(run, tmp_path: Path) -> Path:
    """A plan saved against an empty area in another directory (this one stays untouched)."""
    other = tmp_path / "planned"
    other.mkdir()
    import os

    here = Path.cwd()
    os.chdir(other)
    try:
        result = run("plan", "--out", str(tmp_path / "saved.json"), str(tmp_path / "good"))
    finally:
        os.chdir(here)
    assert result.code == 0, result.text
    return tmp_path / "saved.json"


@pytest.mark.parametrize("edit", sorted(EXPECTED))
def test_a_corrupted_or_edited_saved_plan_is_refused_before_anything(run, tmp_path: Path, saved_plan: Path,
                                                                     edit: str) -> None:
    text = saved_plan.read_text()
    edited = _edits()[edit](text, json.loads(text))
    target = tmp_path / "edited.json"
    if isinstance(edited, bytes):
        target.write_bytes(edited)
    else:
        target.write_text(edited if isinstance(edited, str) else json.dumps(edited))
    for verbose in ([], ["-v"]):
        result = run("apply", "--auto-approve", *verbose, "--plan", "edited.json")
        check_error(result, "edited.json", EXPECTED[edit])
    assert untouched(tmp_path)


def test_a_missing_saved_plan(run, tmp_path: Path) -> None:
    check_error(run("apply", "--auto-approve", "--plan", "missing.json"),
                "missing.json: cannot read the saved plan: No such file or directory")
    assert untouched(tmp_path)


# --- the embedded server's files -------------------------------------------------------------


def _corrupt(folder: Path, how: str) -> None:
    state = folder / ".apimctl"
    if how == "state-a-file":
        state.write_text("x")
        return
    state.mkdir()
    db = state / "local.db"
    if how == "db-a-directory":
        db.mkdir()
    elif how == "db-garbage":
        db.write_bytes(b"SQLite format 3\x00" + b"\x17" * 4000)
    elif how == "db-of-something-else":
        with sqlite3.connect(db) as conn:
            conn.execute("CREATE TABLE areas (x INTEGER)")


@pytest.mark.parametrize(("how", "message"), [
    ("state-a-file", ".apimctl is a file, not the embedded server's directory"),
    ("db-a-directory", "local.db is not a database file"),
    ("db-garbage", "cannot open the embedded server's database"),
    ("db-of-something-else", "not a database of the reference server"),
])
@pytest.mark.parametrize("command", ["plan", "export"])
def test_a_broken_embedded_database_is_a_clear_error(run, tmp_path: Path, command: str, how: str, message: str) -> None:
    _corrupt(tmp_path, how)
    args = ["good"] if command == "plan" else []
    for verbose in ([], ["-v"]):
        check_error(run(command, *verbose, *args), message)


# --- export --out ----------------------------------------------------------------------------


def test_export_out_under_a_file_fails_before_any_call(run, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    check_error(run("export", "--out", "afile/manifests"), "afile is not a directory")
    assert untouched(tmp_path)


def test_export_out_creates_missing_directories(run, tmp_path: Path) -> None:
    assert run("apply", "--auto-approve", "good").code == 0
    result = run("export", "--out", "a/b/c")
    assert result.code == 0, result.text
    assert [p.name for p in (tmp_path / "a" / "b" / "c").iterdir()] == ["apimctl.yaml"]
    assert SECRET not in (tmp_path / "a" / "b" / "c" / "apimctl.yaml").read_text()


# --- servers that answer badly ---------------------------------------------------------------

REPLIES = {
    "html-401": (401, "text/html", b"<html><body>Sign in</body></html>"),
    "not-a-list": (200, "application/json", b'{"a": 1}'),
    "redirect": (302, "text/plain", b""),
}


@pytest.fixture(scope="module")
def bad_server() -> Iterator[str]:
    """A local HTTP server answering every request per the first path segment (REPLIES)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            mode = self.path.strip("/").split("/")[0]
            status, kind, body = REPLIES[mode]
            self.send_response(status)
            self.send_header("Content-Type", kind)
            if status == 302:
                self.send_header("Location", "http://127.0.0.1:9/elsewhere")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

    class Quiet(ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            pass  # a client that hung up early: not what these tests look at (its stderr is)

    server = Quiet(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("mode", "message"), [
    ("html-401", "401 Unauthorized: an HTML page instead of an API reply"),
    ("not-a-list", "unreadable reply: an item without id"),
    ("redirect", "302 Found (redirected to"),
])
@pytest.mark.parametrize("command", ["plan", "drift", "export"])
def test_a_server_answering_nonsense_is_a_clear_error(run, tmp_path: Path, bad_server: str, command: str,
                                                      mode: str, message: str) -> None:
    args = ["good"] if command != "export" else ["--out", "exported"]
    for verbose in ([], ["-v"]):
        result = run(command, *verbose, "--url", f"{bad_server}/{mode}/v3/rest", "--token", TOKEN,
                     "--timeout", "2", *args)
        check_error(result, message)
    assert not (tmp_path / "exported").exists()
    assert untouched(tmp_path)


# --- Ctrl-C ----------------------------------------------------------------------------------


@pytest.fixture
def silent_server() -> Iterator[socket.socket]:
    """A listening socket that never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.settimeout(30)
    yield sock
    sock.close()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("command", ["plan", "apply"])
def test_ctrl_c_exits_130_without_a_traceback(tmp_path: Path, silent_server: socket.socket, command: str) -> None:
    (tmp_path / "weather.yaml").write_text(MANIFEST)
    extra = ["--auto-approve"] if command == "apply" else []
    url = f"http://127.0.0.1:{silent_server.getsockname()[1]}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "apimctl", command, *extra, "-v", "--url", url, "--token", TOKEN,
         "--timeout", "30", "weather.yaml"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        env={"HOSTILE_SECRET": SECRET, "PATH": "/usr/bin:/bin"},
    )
    connection, _ = silent_server.accept()  # the command is running and waiting for a reply
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    connection.close()
    assert proc.returncode == 130, out + err
    assert "Traceback" not in out + err and TOKEN not in out + err and SECRET not in out + err
