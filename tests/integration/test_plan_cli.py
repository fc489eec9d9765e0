"""`apimctl plan` end to end: the embedded default, a real server over --url (the reference
server on a port of its own, in each dialect, SUPPLEMENT §10, detected by the client), every
format, saved plans, exit codes, errors, and secrets never printed.

The embedded default runs ``python -m apimctl``; against the served areas the commands run
through the real entry point in this process (``run_guarded``, as the apply suites do), and
one test runs ``python -m apimctl`` against each dialect."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from apimctl.plans.model import Plan

from .apply_support import Completed, run_in_process
from .dialect_support import ThreadServer, served_in_thread

MANIFEST = Path(__file__).parents[1] / "scenarios" / "011-secrets" / "manifests" / "weather.yaml"
SECRETS = {"FORECAST_SECRET": "fc-value-7d1e9a", "BACKEND_PASSWORD": "pw-value-3c5b2f"}


def apimctl(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("APIMCTL_")}
    return subprocess.run([sys.executable, "-m", "apimctl", *args], cwd=cwd, capture_output=True,
                          text=True, env={**base, **SECRETS, **(env or {})}, timeout=120)


def assert_no_secrets(*texts: str) -> None:
    for text in texts:
        for value in SECRETS.values():
            assert value not in text


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "manifests").mkdir()
    shutil.copy(MANIFEST, tmp_path / "manifests" / "weather.yaml")
    return tmp_path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, dialect: str) -> Iterator[ThreadServer]:
    """One reference server per dialect for the module; each test works in an area of its own."""
    with served_in_thread(tmp_path_factory.mktemp("plan-cli") / "area.db", dialect, areas=6) as srv:
        yield srv


@dataclass
class Area:
    """A fresh area of the served server, and ``apimctl`` run against it from ``workdir``."""

    srv: ThreadServer
    token: str
    workdir: Path

    @property
    def env(self) -> dict[str, str]:
        return {"APIMCTL_URL": self.srv.url, "APIMCTL_TOKEN": self.token, "APIMCTL_QPS": "0"}

    def run(self, *args: str) -> Completed:
        """``apimctl ARGS`` in this process (the working directory is ``workdir``)."""
        base = {k: v for k, v in os.environ.items() if not k.startswith("APIMCTL_")}
        return run_in_process(list(args), {**base, **SECRETS, **self.env})


@pytest.fixture
def area(served: ThreadServer, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> Area:
    monkeypatch.chdir(workdir)
    return Area(served, served.fresh_token(), workdir)


def test_embedded_default_text_plan(workdir: Path) -> None:
    run = apimctl(workdir, "plan", "manifests", "--no-color")
    assert run.returncode == 0, run.stderr
    assert "Plan: 11 to create, 0 to update, 0 to delete." in run.stdout
    assert run.stderr.count("embedded reference server") == 1
    assert (workdir / ".apimctl" / "local.db").exists()
    assert "(sensitive)" in run.stdout
    assert_no_secrets(run.stdout, run.stderr)


def test_formats_detailed_exitcode_and_saved_plan(area: Area, dialect: str) -> None:
    run = area.run("plan", "manifests", "--format", "json", "--detailed-exitcode", "--out", "plan.json")
    assert run.returncode == 2, run.stderr
    doc = json.loads(run.stdout)
    assert doc["format_version"] and doc["summary"]["create"] == 11
    assert {s["action"] for s in doc["steps"]} == {"create"}
    assert (doc["dialect"], doc["target"]) == (dialect, area.srv.url)  # detected, not told
    saved = (area.workdir / "plan.json").read_text()
    assert "${FORECAST_SECRET}" in saved and "${BACKEND_PASSWORD}" in saved
    assert_no_secrets(run.stdout, run.stderr, saved)
    plan = Plan.from_json(json.loads(saved))
    assert len(plan.steps) == 11 and plan.secret_values == {} and plan.dialect == dialect
    md = area.run("plan", "manifests", "--format", "markdown")
    assert md.returncode == 0 and "create" in md.stdout.lower()
    assert_no_secrets(md.stdout, md.stderr)
    # a saved plan applies only to the area it was made for
    elsewhere = {**json.loads(saved), "target": "https://elsewhere.example/v3/rest"}
    (area.workdir / "other.json").write_text(json.dumps(elsewhere))
    refused = area.run("apply", "--plan", "other.json", "--auto-approve")
    assert refused.returncode == 1
    assert "was made for https://elsewhere.example/v3/rest" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_target_against_the_area(area: Area) -> None:
    run = area.run("plan", "manifests", "--no-color", "--target", "role:Internal")
    assert run.returncode == 0, run.stderr
    assert 'create role "Internal"' in run.stdout and "Plan: 1 to create" in run.stdout
    missing = area.run("plan", "manifests", "--target", "service:Nope")
    assert missing.returncode == 1 and "matches no" in missing.stderr


def test_errors_before_any_call(workdir: Path) -> None:
    bad = apimctl(workdir, "plan", "manifests", "--target", "nonsense")
    assert bad.returncode == 1 and "KIND:NAME" in bad.stderr and "Traceback" not in bad.stderr
    (workdir / "broken").mkdir()
    (workdir / "broken" / "a.yaml").write_text("services:\n  - name: X\n    qpsLimitOverall: lots\n")
    broken = apimctl(workdir, "plan", "broken")
    assert broken.returncode == 1 and "a.yaml:3:" in broken.stderr and "Traceback" not in broken.stderr
    nothing = apimctl(workdir, "plan")
    assert nothing.returncode == 1 and "PATH" in nothing.stderr


def test_apply_then_plan_shows_no_changes(area: Area) -> None:
    applied = area.run("apply", "manifests", "--auto-approve", "--no-color")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    run = area.run("plan", "manifests", "--no-color", "--detailed-exitcode")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "No changes" in run.stdout
    assert_no_secrets(applied.stdout, applied.stderr, run.stdout, run.stderr)


@pytest.mark.slow
def test_plan_against_a_server_url(area: Area) -> None:
    """``python -m apimctl`` with ``--url``: an area with an object the manifests do not have."""
    headers = {"Authorization": f"Bearer {area.token}"}
    httpx.post(f"{area.srv.url}/roles", json={"name": "Visitors"}, headers=headers).raise_for_status()
    # no client-side pacing: at the default 2 calls/s the reads alone take seconds
    run = apimctl(area.workdir, "plan", "manifests", "--no-color", "--url", area.srv.url,
                  env={"APIMCTL_TOKEN": area.token, "APIMCTL_QPS": "0"})
    assert run.returncode == 0, run.stderr
    assert "embedded" not in run.stderr
    assert 'role "Visitors"' in run.stdout and "Plan: 11 to create" in run.stdout
    assert area.token not in run.stdout + run.stderr
    assert_no_secrets(run.stdout, run.stderr)


def test_saved_plan_refuses_literal_secrets_and_directories(area: Area) -> None:
    path = area.workdir / "manifests" / "weather.yaml"
    text = path.read_text().replace("${FORECAST_SECRET}", "literal-fc-value-91c2")
    assert text != path.read_text()
    path.write_text(text)
    run = area.run("plan", "manifests", "--out", "plan.json")
    assert run.returncode == 1
    assert "literal values" in run.stderr and "#systemDomainCredentialSecret" in run.stderr
    assert not (area.workdir / "plan.json").exists()
    assert "literal-fc-value-91c2" not in run.stdout + run.stderr
    run = area.run("plan", "manifests", "--out", "missing-dir/")
    assert run.returncode == 1 and "not a directory" in run.stderr
    assert not (area.workdir / "missing-dir").exists()


@pytest.mark.slow
def test_plans_name_their_area_and_a_saved_plan_applies_only_there(workdir: Path) -> None:
    run = apimctl(workdir, "plan", "manifests", "--format", "json", "--out", "plan.json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["target"].endswith("/.apimctl/local.db)")
    saved = json.loads((workdir / "plan.json").read_text())
    saved["target"] = "https://elsewhere.example/v3/rest"
    (workdir / "other.json").write_text(json.dumps(saved))
    refused = apimctl(workdir, "apply", "--plan", "other.json", "--auto-approve")
    assert refused.returncode == 1
    assert "was made for https://elsewhere.example/v3/rest" in refused.stderr
    assert "Traceback" not in refused.stderr
