"""`apimctl plan` end to end: the embedded default, a real server over --url, every format,
saved plans, exit codes, errors, and secrets never printed."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from apimctl.plans.model import Plan

MANIFEST = Path(__file__).parents[1] / "scenarios" / "011-secrets" / "manifests" / "weather.yaml"
SECRETS = {"FORECAST_SECRET": "fc-value-7d1e9a", "BACKEND_PASSWORD": "pw-value-3c5b2f"}
TOKEN = "plan-cli-token"


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


def test_embedded_default_text_plan(workdir: Path) -> None:
    run = apimctl(workdir, "plan", "manifests", "--no-color")
    assert run.returncode == 0, run.stderr
    assert "Plan: 11 to create, 0 to update, 0 to delete." in run.stdout
    assert run.stderr.count("embedded reference server") == 1
    assert (workdir / ".apimctl" / "local.db").exists()
    assert "(sensitive)" in run.stdout
    assert_no_secrets(run.stdout, run.stderr)


def test_formats_detailed_exitcode_and_saved_plan(workdir: Path) -> None:
    run = apimctl(workdir, "plan", "manifests", "--format", "json", "--detailed-exitcode",
                  "--out", "plan.json")
    assert run.returncode == 2, run.stderr
    doc = json.loads(run.stdout)
    assert doc["format_version"] and doc["summary"]["create"] == 11
    assert {s["action"] for s in doc["steps"]} == {"create"}
    saved = (workdir / "plan.json").read_text()
    assert "${FORECAST_SECRET}" in saved and "${BACKEND_PASSWORD}" in saved
    assert_no_secrets(run.stdout, run.stderr, saved)
    plan = Plan.from_json(json.loads(saved))
    assert len(plan.steps) == 11 and plan.secret_values == {}
    md = apimctl(workdir, "plan", "manifests", "--format", "markdown")
    assert md.returncode == 0 and "create" in md.stdout.lower()
    assert_no_secrets(md.stdout, md.stderr)


def test_target_and_errors(workdir: Path) -> None:
    run = apimctl(workdir, "plan", "manifests", "--no-color", "--target", "role:Internal")
    assert run.returncode == 0, run.stderr
    assert 'create role "Internal"' in run.stdout and "Plan: 1 to create" in run.stdout
    bad = apimctl(workdir, "plan", "manifests", "--target", "nonsense")
    assert bad.returncode == 1 and "KIND:NAME" in bad.stderr and "Traceback" not in bad.stderr
    missing = apimctl(workdir, "plan", "manifests", "--target", "service:Nope")
    assert missing.returncode == 1 and "matches no" in missing.stderr
    (workdir / "broken").mkdir()
    (workdir / "broken" / "a.yaml").write_text("services:\n  - name: X\n    qpsLimitOverall: lots\n")
    broken = apimctl(workdir, "plan", "broken")
    assert broken.returncode == 1 and "a.yaml:3:" in broken.stderr and "Traceback" not in broken.stderr
    nothing = apimctl(workdir, "plan")
    assert nothing.returncode == 1 and "PATH" in nothing.stderr


def test_apply_then_plan_shows_no_changes(workdir: Path) -> None:
    applied = apimctl(workdir, "apply", "manifests", "--auto-approve", "--no-color")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    run = apimctl(workdir, "plan", "manifests", "--no-color", "--detailed-exitcode")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "No changes" in run.stdout
    assert_no_secrets(applied.stdout, applied.stderr, run.stdout, run.stderr)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def server_url(tmp_path: Path) -> Iterator[str]:
    import uvicorn

    from apimctl.server import ServerConfig, create_app

    config = ServerConfig(db_path=str(tmp_path / "server.db"), tokens={TOKEN: "area"},
                          auto_approve_domains=True, object_responses=True)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}/v3/rest"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.mark.slow
def test_plan_against_a_server_url(workdir: Path, server_url: str) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    httpx.post(f"{server_url}/roles", json={"name": "Visitors"}, headers=headers).raise_for_status()
    run = apimctl(workdir, "plan", "manifests", "--no-color", "--url", server_url,
                  env={"APIMCTL_TOKEN": TOKEN})
    assert run.returncode == 0, run.stderr
    assert "embedded" not in run.stderr
    assert 'role "Visitors"' in run.stdout and "Plan: 11 to create" in run.stdout
    assert TOKEN not in run.stdout + run.stderr
    assert_no_secrets(run.stdout, run.stderr)


def test_saved_plan_refuses_literal_secrets_and_directories(workdir: Path) -> None:
    path = workdir / "manifests" / "weather.yaml"
    text = path.read_text().replace("${FORECAST_SECRET}", "literal-fc-value-91c2")
    assert text != path.read_text()
    path.write_text(text)
    run = apimctl(workdir, "plan", "manifests", "--out", "plan.json")
    assert run.returncode == 1
    assert "literal values" in run.stderr and "#systemDomainCredentialSecret" in run.stderr
    assert not (workdir / "plan.json").exists()
    assert "literal-fc-value-91c2" not in run.stdout + run.stderr
    run = apimctl(workdir, "plan", "manifests", "--out", "missing-dir/")
    assert run.returncode == 1 and "not a directory" in run.stderr
    assert not (workdir / "missing-dir").exists()


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
