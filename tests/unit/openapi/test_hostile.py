"""Hostile OpenAPI documents through ``apimctl import openapi`` and ``apimctl lint
--openapi-spec``: a ``$ref`` reads only files under the document's folder and fetches nothing
unless a host is allowed; inputs and ``--into`` targets that are not regular files in their
folder are refused at once; alias bombs and duplicate keys are refused where they were
written. Each refusal exits 1 with a located message and no traceback, and never shows what a
refused reference points to."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from apimctl.cli import cli as apimctl_cli

from ...integration.inprocess import entry_point

SECRET = "hunter2-do-not-print"
HEAD = "openapi: 3.0.3\ninfo: {title: Shop, version: '1'}\nservers: [{url: 'https://api.example.com'}]\n"
Run = Callable[..., tuple[int, str, str]]
MANIFEST = Path(__file__).resolve().parents[3] / "examples" / "weather" / "weather.yaml"


def document(schema_ref: str) -> str:
    return HEAD + ("paths:\n  /pets:\n    get:\n      operationId: listPets\n      responses:\n"
                   "        '200':\n          description: ok\n          content:\n"
                   "            application/json:\n"
                   f"              schema: {{$ref: '{schema_ref}'}}\n")


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    return entry_point(monkeypatch, capsys)


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A secret outside the document's folder, in a shape the validator would quote."""
    path = tmp_path / "secret.yaml"
    path.write_text(f"password: {SECRET}\ntype: {SECRET}\n", encoding="utf-8")
    return path


def refused(result: tuple[int, str, str], *fragments: str) -> str:
    code, out, err = result
    assert code == 1, err
    assert SECRET not in out + err and "Traceback" not in err
    assert all(f in err for f in fragments), err
    return err


def write_doc(folder: Path, ref: str) -> Path:
    folder.mkdir(exist_ok=True)
    doc = folder / "openapi.yaml"
    doc.write_text(document(ref), encoding="utf-8")
    return doc


@pytest.mark.parametrize("ref", ["../secret.yaml", "../secret.yaml#/password", "file://{secret}",
                                 "file://{secret}#/type"])
def test_a_ref_outside_the_documents_folder_is_refused_at_the_ref(
        run: Run, tmp_path: Path, secret: Path, ref: str) -> None:
    doc = write_doc(tmp_path / "api", ref.format(secret=secret))
    err = refused(run("import", "openapi", str(doc)), "openapi.yaml:13:", "$ref", "refused",
                  "outside the document's folder")
    refused(run("lint", "--openapi-spec", str(doc), str(MANIFEST)), "refused")
    assert len(err.strip().splitlines()) == 1


def test_a_symlink_in_the_folder_that_leaves_it_is_refused(run: Run, tmp_path: Path,
                                                           secret: Path) -> None:
    api = tmp_path / "api"
    doc = write_doc(api, "schemas/pet.yaml")
    (api / "schemas").symlink_to(tmp_path)
    (tmp_path / "pet.yaml").write_text(f"type: {SECRET}\n", encoding="utf-8")
    refused(run("import", "openapi", str(doc)), "refused", "symbolic link")


def test_a_file_under_the_folder_is_followed(run: Run, tmp_path: Path) -> None:
    api = tmp_path / "api"
    doc = write_doc(api, "schemas/pet.yaml#/Pet")
    (api / "schemas").mkdir()
    (api / "schemas" / "pet.yaml").write_text("Pet: {type: object}\n", encoding="utf-8")
    code, out, err = run("import", "openapi", str(doc))
    assert code == 0, err
    assert "listPets" in out


class _Counting(BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self) -> None:
        type(self).requests.append(self.path)
        if self.path.startswith("/moved"):  # to a host that is not allowed
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{self.server.server_address[1]}/pet.yaml")
            self.end_headers()
            return
        body = b"Pet: {type: object}\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that counts its requests."""
    handler = type("Handler", (_Counting,), {"requests": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", handler.requests
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_an_http_ref_is_not_fetched_unless_its_host_is_allowed(
        run: Run, tmp_path: Path, server: tuple[str, list[str]]) -> None:
    url, requests = server
    doc = write_doc(tmp_path / "api", f"{url}/pet.yaml#/Pet")
    refused(run("import", "openapi", str(doc)), "openapi.yaml:13:", "not fetched", "--allow-ref-host")
    refused(run("lint", "--openapi-spec", str(doc), str(MANIFEST)), "not fetched")
    assert requests == []
    code, out, err = run("import", "openapi", str(doc), "--allow-ref-host", "127.0.0.1")
    assert code == 0, err
    assert requests and "listPets" in out
    code, out, err = run("lint", "--openapi-spec", str(doc), "--allow-ref-host", "127.0.0.1", str(MANIFEST))
    assert "refused" not in err and "openapi.yaml" in out + err, err


def test_a_redirect_to_a_host_that_is_not_allowed_is_not_followed(
        run: Run, tmp_path: Path, server: tuple[str, list[str]]) -> None:
    url, requests = server
    doc = write_doc(tmp_path / "api", f"{url}/moved.yaml#/Pet")
    refused(run("import", "openapi", str(doc), "--allow-ref-host", "127.0.0.1"), "redirected to",
            "not on a host given with --allow-ref-host")
    assert requests == ["/moved.yaml"]


def test_a_ref_to_another_scheme_is_refused(run: Run, tmp_path: Path) -> None:
    doc = write_doc(tmp_path / "api", "ftp://127.0.0.1/pet.yaml#/Pet")
    refused(run("import", "openapi", str(doc)), "refused")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``apimctl`` as a process, so that a hang or a run out of memory fails the test."""
    return subprocess.run([sys.executable, "-m", "apimctl", *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60, check=False)


def test_an_input_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    for spec in (str(fifo), "/dev/zero"):
        done = cli("import", "openapi", spec)
        assert done.returncode == 1 and "not a regular file" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_a_document_on_stdin_is_read() -> None:
    text = document("#/components/schemas/Pet") + "components: {schemas: {Pet: {type: object}}}\n"
    done = CliRunner().invoke(apimctl_cli, ["import", "openapi", "-"], input=text)
    assert done.exit_code == 0, done.output
    assert "listPets" in done.stdout


@pytest.mark.parametrize("kind", ["symlink", "dangling", "device", "fifo"])
def test_an_into_entry_that_leaves_the_folder_or_is_not_a_file_is_refused(
        run: Run, tmp_path: Path, kind: str) -> None:
    doc = write_doc(tmp_path / "api", "#/components/schemas/Pet")
    doc.write_text(doc.read_text() + "components: {schemas: {Pet: {type: object}}}\n")
    held = f"services:\n  - name: Shop\n    description: {SECRET}\n"
    outside = tmp_path / "outside.yaml"
    outside.write_text(held, encoding="utf-8")
    into = tmp_path / "into"
    into.mkdir()
    entry = into / "shop.yaml"
    {"symlink": lambda: entry.symlink_to(outside), "dangling": lambda: entry.symlink_to(tmp_path / "gone.yaml"),
     "device": lambda: entry.symlink_to("/dev/zero"), "fifo": lambda: os.mkfifo(entry)}[kind]()
    if kind in ("symlink", "dangling"):
        code, out, err = run("import", "openapi", str(doc), "--into", str(into))
    else:  # as a process: a read that blocks or never ends fails the test instead of hanging it
        done = cli("import", "openapi", str(doc), "--into", str(into))
        code, out, err = done.returncode, done.stdout, done.stderr
    assert code == 1 and "Traceback" not in err, err
    assert SECRET not in out + err
    assert outside.read_text() == held and not (tmp_path / "gone.yaml").exists()


def test_an_alias_bomb_is_refused(run: Run, tmp_path: Path) -> None:
    levels = ["x-l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    levels += [f"x-l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(HEAD + "paths: {}\n" + "\n".join(levels) + "\n", encoding="utf-8")
    err = refused(run("import", "openapi", str(bomb)), "bomb.yaml:", "YAML aliases expand to more than")
    assert len(err.strip().splitlines()) == 1


def test_duplicate_keys_are_refused_where_the_second_was_written(run: Run, tmp_path: Path) -> None:
    doc = tmp_path / "dup.yaml"
    doc.write_text(HEAD + "paths:\n  /pets:\n    get: {operationId: a, responses: {'200': {description: ok}}}\n"
                   "  /pets:\n    post: {operationId: b, responses: {'200': {description: ok}}}\n",
                   encoding="utf-8")
    refused(run("import", "openapi", str(doc)), "dup.yaml:7:3:", "duplicate key '/pets'",
            "first written at line 5")
