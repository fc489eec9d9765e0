"""TLS against a reference server signed by a private CA (trustme): refused by default, trusted
with --ca-bundle, REQUESTS_CA_BUNDLE or SSL_CERT_FILE, and --insecure with its warning."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import trustme

from apimctl.cli import cli
from apimctl.cli.common import run_guarded
from apimctl.cli.tls import INSECURE_WARNING

from .inprocess import uvicorn_in_thread

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory, dialect: str) -> Iterator[tuple[str, Path]]:
    """``(url, ca.pem)`` of a reference server of ``dialect`` serving HTTPS on 127.0.0.1."""
    from apimctl.server import ServerConfig, create_app

    folder = tmp_path_factory.mktemp(f"tls-{dialect}")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    cert.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
    cert.private_key_pem.write_to_path(str(folder / "key.pem"))
    app = create_app(ServerConfig(db_path=str(folder / "s.db"), tokens={"t0ken": "area-1"}, dialect=dialect))
    with uvicorn_in_thread(app, ssl_certfile=str(folder / "cert.pem"), ssl_keyfile=str(folder / "key.pem")) as port:
        yield f"https://127.0.0.1:{port}/v3/rest", folder / "ca.pem"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    monkeypatch.chdir(tmp_path)
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "HTTPS_PROXY", "https_proxy",
                 "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)

    def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setattr(sys, "argv", ["apimctl", *args])
        capsys.readouterr()
        code = run_guarded(cli)
        out, err = capsys.readouterr()
        for name in env or {}:
            monkeypatch.delenv(name)
        return code, out, err

    return invoke


def doctor(url: str, *extra: str) -> tuple[str, ...]:
    return ("doctor", "--url", url, "--token", "t0ken", "--timeout", "5", "--no-color", *extra)


def test_a_private_ca_is_refused_by_default(tls_server: tuple[str, Path], run: Run) -> None:
    url, _ = tls_server
    code, out, _ = run(*doctor(url))
    assert code == 1 and out.startswith("FAIL url:") and "certificate" in out.lower()


@pytest.mark.parametrize("how", ["--ca-bundle", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "APIMCTL_CA_BUNDLE"])
def test_the_ca_is_trusted_when_given(tls_server: tuple[str, Path], run: Run, how: str) -> None:
    url, ca = tls_server
    if how == "--ca-bundle":
        code, out, err = run(*doctor(url, "--ca-bundle", str(ca)))
    else:
        code, out, err = run(*doctor(url), env={how: str(ca)})
    assert code == 0, out + err
    assert out.startswith(f"ok   url: {url} answers")


def test_insecure_skips_verification_loudly(tls_server: tuple[str, Path], run: Run) -> None:
    url, _ = tls_server
    code, out, err = run(*doctor(url, "--insecure"))
    assert code == 0, out + err
    assert INSECURE_WARNING in err


def test_a_missing_or_bad_bundle_is_a_usage_error(tls_server: tuple[str, Path], run: Run, tmp_path: Path) -> None:
    url, _ = tls_server
    code, _, err = run(*doctor(url, "--ca-bundle", str(tmp_path / "none.pem")))
    assert code == 1 and "--ca-bundle" in err and "no such file" in err
    (tmp_path / "bad.pem").write_text("not a certificate\n")
    code, _, err = run(*doctor(url, "--ca-bundle", str(tmp_path / "bad.pem")))
    assert code == 1 and "not a PEM file" in err and "Traceback" not in err
    code, _, err = run(*doctor(url, "--insecure", "--ca-bundle", str(tmp_path / "bad.pem")))
    assert code == 1 and "contradict" in err
