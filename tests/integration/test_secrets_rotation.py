"""Write-only secrets are never silently kept stale.

``systemDomainAuthentication.password`` is never returned by the API, so a plan cannot compare
it: every plan lists it as not comparable, a change of the password alone is sent only with
``--rotate-secrets`` (or ``--rotate KIND:NAME:PATH``), and what the server stores shows it.
Runs the real entry point against a reference server, shared by the module, one per dialect
(``apimctl serve`` and ``apimctl serve --dialect mashery``, the ``dialect`` fixture), each test
in an area of its own; the server's SQLite file tells what it holds.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from apimctl.cli import cli
from apimctl.cli.common import run_guarded
from apimctl.plans.model import WRITE_ONLY_NOTE

from .apply_support import Server, server

ADDRESS = "endpoint:Billing/Charge"
PATH = "systemDomainAuthentication.password"
MANIFEST = """\
services:
  - name: Billing
    endpoints:
      - name: Charge
        requestPathAlias: /charge
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
        systemDomainAuthentication:
          type: httpBasic
          username: billing
          password: ${BILLING_PASSWORD}
domains: [example.com, example.net]
"""
DB = "rotation.db"


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, dialect_options: tuple[str, ...]) -> Iterator[Server]:
    """One server for the module per dialect; every test works in an area of its own."""
    with server(tmp_path_factory.mktemp("rotation"), *dialect_options, db=DB, areas=4) as srv:
        yield srv


@pytest.fixture
def target(shared: Server) -> tuple[Server, str]:
    """The shared server and the token of a fresh area."""
    return shared, shared.fresh_token()


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        target: tuple[Server, str]):
    import os

    for name in [n for n in os.environ if n.startswith("APIMCTL_")]:
        monkeypatch.delenv(name)
    srv, token = target
    monkeypatch.setenv("APIMCTL_URL", srv.url)
    monkeypatch.setenv("APIMCTL_TOKEN", token)
    monkeypatch.setenv("APIMCTL_QPS", "0")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.yaml").write_text(MANIFEST)

    def invoke(password: str, *args: str) -> tuple[int, str, str]:
        monkeypatch.setenv("BILLING_PASSWORD", password)
        monkeypatch.setattr(sys, "argv", ["apimctl", *args])
        capsys.readouterr()
        code = run_guarded(cli)
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return invoke


def stored_passwords(target: tuple[Server, str]) -> list[str]:
    """The systemDomainAuthentication passwords the server holds in the area of ``target``."""
    srv, token = target
    with sqlite3.connect(srv.tmp / DB) as db:
        bodies = [json.loads(row[0])
                  for row in db.execute("SELECT body FROM docs WHERE area = ?", (srv.area_of(token),))]
    found = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            auth = node.get("systemDomainAuthentication")
            if isinstance(auth, dict) and auth.get("password"):
                found.append(auth["password"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for body in bodies:
        walk(body)
    return found


def test_a_password_only_rotation_reaches_the_server_with_rotate_secrets(run, target: tuple[Server, str]) -> None:
    code, out, err = run("old-pass-1111", "apply", "--auto-approve", "m.yaml")
    assert code == 0, out + err
    assert stored_passwords(target) == ["old-pass-1111"]

    # the usual rotation: only the password changes; the plan cannot see it, and says so
    code, out, err = run("new-pass-2222", "plan", "m.yaml")
    assert code == 0, out + err
    assert f"{ADDRESS}:{PATH}: not compared, not sent" in out
    assert WRITE_ONLY_NOTE in out
    assert "No changes" in out
    code, out, err = run("new-pass-2222", "apply", "--auto-approve", "m.yaml")
    assert code == 0 and stored_passwords(target) == ["old-pass-1111"]

    code, out, err = run("new-pass-2222", "plan", "--rotate-secrets", "m.yaml")
    assert f"~ {PATH}: (sensitive)" in out and f"{ADDRESS}:{PATH}: sent by this plan" in out
    assert "new-pass-2222" not in out + err
    code, out, err = run("new-pass-2222", "apply", "--auto-approve", "--rotate-secrets", "m.yaml")
    assert code == 0, out + err
    assert "new-pass-2222" not in out + err
    assert stored_passwords(target) == ["new-pass-2222"]


def test_rotate_names_one_field_and_a_saved_plan_carries_it(run, tmp_path: Path, target: tuple[Server, str]) -> None:
    assert run("first-pass-0001", "apply", "--auto-approve", "m.yaml")[0] == 0
    code, out, err = run("second-pass-0002", "plan", "--rotate", "endpoint:Billing/Other:*", "m.yaml")
    assert code == 0 and "No changes" in out, out + err
    code, out, err = run("second-pass-0002", "plan", "--rotate", f"endpoint:Billing/*:{PATH}",
                         "--out", "rotate.json", "m.yaml")
    assert code == 0, out + err
    saved = json.loads((tmp_path / "rotate.json").read_text())
    assert saved["write_only"] == [{"kind": "endpoint", "key": "Billing/Charge", "address": ADDRESS,
                                    "path": PATH, "sent": True, "note": "sent by this plan"}]
    assert "second-pass-0002" not in (tmp_path / "rotate.json").read_text()
    code, out, err = run("second-pass-0002", "apply", "--auto-approve", "--plan", "rotate.json")
    assert code == 0, out + err
    assert stored_passwords(target) == ["second-pass-0002"]


def test_json_and_markdown_plans_list_write_only_fields(run) -> None:
    _code, out, _ = run("json-pass-3333", "plan", "--format", "json", "m.yaml")
    doc = json.loads(out)
    assert [(w["address"], w["path"], w["sent"]) for w in doc["write_only"]] == [(ADDRESS, PATH, True)]
    assert run("json-pass-3333", "apply", "--auto-approve", "m.yaml")[0] == 0
    _code, out, _ = run("json-pass-3333", "plan", "--format", "json", "m.yaml")
    assert [w["sent"] for w in json.loads(out)["write_only"]] == [False]
    _code, out, _ = run("json-pass-3333", "plan", "--format", "markdown", "m.yaml")
    assert WRITE_ONLY_NOTE in out and f"`{ADDRESS}:{PATH}`: not compared, not sent" in out


def test_rotate_is_checked_and_refused_with_a_saved_plan(run) -> None:
    code, _out, err = run("x-pass-4444", "plan", "--rotate", "endpoint:Billing/Charge", "m.yaml")
    assert code == 1 and "expected KIND:NAME:FIELD_PATH" in err
    code, _out, err = run("x-pass-4444", "plan", "--rotate", "nokind:a:b", "m.yaml")
    assert code == 1 and "unknown kind" in err
    assert run("x-pass-4444", "plan", "--out", "p.json", "m.yaml")[0] == 0
    code, _out, err = run("x-pass-4444", "apply", "--auto-approve", "--rotate-secrets", "--plan", "p.json")
    assert code != 0 and "cannot change a saved --plan" in err
    code, _out, err = run("x-pass-4444", "apply", "--auto-approve", "--repair-duplicates", "--plan", "p.json")
    assert code != 0 and "--repair-duplicates" in err and "cannot change a saved" in err
