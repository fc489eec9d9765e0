"""``apimctl validate`` and ``apimctl schema`` end to end: output formats, summary, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from apimctl.cli import cli
from apimctl.render.problems import render_github, render_text, summary

from ..manifests.corpus_cases import DOMAINS, SERVICE

ROOT = Path(__file__).resolve().parents[3]
BAD = DOMAINS + SERVICE + "        cors: {maxAge: soon}\n        systemDomainCredentialSecret: plain\n"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), standalone_mode=False, catch_exceptions=False)
    return int(result.return_value or 0), result.stdout, result.stderr


def test_valid_prints_summary_only(workdir) -> None:
    workdir({"m.yaml": DOMAINS + SERVICE})
    code, out, err = invoke("validate", "m.yaml")
    assert (code, out, err) == (0, "", "valid: 1 file, 4 objects\n")


def test_invalid_text(workdir) -> None:
    workdir({"m.yaml": BAD})
    code, out, err = invoke("validate", "m.yaml")
    assert code == 1
    assert out.splitlines() == [
        "m.yaml:10:16: services[0].endpoints[0].cors.maxAge: must be integer",
        "m.yaml:11:9: services[0].endpoints[0].systemDomainCredentialSecret: warning: secret written as a "
        "literal value; write it as ${ENV_VAR} so it stays out of version control",
    ]
    assert err == "1 error, 1 warning in 1 file\n"


def test_invalid_json(workdir) -> None:
    workdir({"m.yaml": BAD})
    code, out, _ = invoke("validate", "--format", "json", "m.yaml")
    body = json.loads(out)
    assert code == 1
    assert body["format_version"] == "1.0"
    assert body["valid"] is False
    assert body["summary"] == {"errors": 1, "warnings": 1, "files": 1, "objects": 4}
    assert body["problems"][0] == {"file": "m.yaml", "line": 10, "column": 16,
                                   "path": "services[0].endpoints[0].cors.maxAge",
                                   "message": "must be integer", "severity": "error"}


def test_invalid_github(workdir) -> None:
    workdir({"m.yaml": BAD})
    _, out, _ = invoke("validate", "--format=github", "m.yaml")
    assert out.splitlines()[0] == ("::error file=m.yaml,line=10,col=16,title=apimctl validate::"
                                   "services[0].endpoints[0].cors.maxAge: must be integer")
    assert out.splitlines()[1].startswith("::warning file=m.yaml,line=11,col=9,")


def test_overlay_option(workdir) -> None:
    workdir({"m.yaml": DOMAINS + SERVICE, "prod/o.yaml": "services:\n  - {name: Weather, qpsLimitOverall: -5}\n"})
    code, out, err = invoke("validate", "m.yaml", "--overlay", "prod")
    assert code == 1
    assert out == "prod/o.yaml:2:21: services[0].qpsLimitOverall: must be at least 0 (got -5)\n"
    assert err == "1 error in 2 files\n"


def test_counts_in_summary(workdir) -> None:
    workdir({"d/a.yaml": DOMAINS + SERVICE, "d/b.yaml": "roles: [A, B]\n"})
    assert invoke("validate", "d") == (0, "", "valid: 2 files, 6 objects\n")


@pytest.mark.slow
def test_process_exit_codes_and_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tmp_path / "ok.yaml").write_text(DOMAINS + SERVICE)
    run = [sys.executable, "-m", "apimctl", "validate"]
    ok = subprocess.run([*run, "ok.yaml"], cwd=tmp_path, capture_output=True, text=True, check=False)
    bad = subprocess.run([*run, "bad.yaml"], cwd=tmp_path, capture_output=True, text=True, check=False)
    none = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert (ok.returncode, bad.returncode, none.returncode) == (0, 1, 1)
    assert bad.stdout.startswith("bad.yaml:1:1: not UTF-8 text (byte 0x89)")
    assert "give at least one PATH" in none.stderr
    assert "Traceback" not in bad.stderr + none.stderr


def test_schema_command_prints_the_shipped_schema() -> None:
    code, out, _ = invoke("schema")
    schema = json.loads(out)
    assert code == 0
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema == json.loads((ROOT / "schemas" / "manifest.schema.json").read_text())


def test_schema_plan_prints_the_shipped_plan_schema() -> None:
    code, out, _ = invoke("schema", "--plan")
    assert code == 0
    assert out == (ROOT / "schemas" / "plan.schema.json").read_text()
    jsonschema.Draft202012Validator.check_schema(json.loads(out))


def test_renderers_escape_and_count() -> None:
    from apimctl.errors import Problem

    problem = Problem("a,b:c.yaml", 3, 4, "x", "50% done\nnext", "warning")
    assert render_github(problem) == "::warning file=a%2Cb%3Ac.yaml,line=3,col=4,title=apimctl validate::x: 50%25 done%0Anext"
    assert render_text(Problem("d", 0, 0, "", "no files")) == "d: no files"
    assert summary([problem], files=1, objects=3) == "valid: 1 file, 3 objects, 1 warning"
    assert summary([], files=0, objects=0) == "valid: 0 files, 0 objects"


def test_allow_missing_vars_turns_unset_variables_into_warnings(workdir, monkeypatch) -> None:
    monkeypatch.delenv("UNSET_BACKEND_SECRET", raising=False)
    workdir({"m.yaml": DOMAINS + SERVICE + "        systemDomainCredentialSecret: ${UNSET_BACKEND_SECRET}\n"})
    code, out, _ = invoke("validate", "m.yaml")
    assert code == 1 and "environment variable UNSET_BACKEND_SECRET is not set" in out
    code, out, err = invoke("validate", "--allow-missing-vars", "m.yaml")
    assert code == 0 and err == "valid: 1 file, 4 objects, 1 warning\n"
    assert out == ("m.yaml:10:39: services[0].endpoints[0].systemDomainCredentialSecret: warning: environment "
                   "variable UNSET_BACKEND_SECRET is not set (checked with its reference in place)\n")
