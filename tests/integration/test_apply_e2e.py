"""`apimctl apply` end to end against a real reference server (uvicorn on 127.0.0.1).

Every example applies from empty and then plans to zero changes; a second apply writes
nothing; saved plans are refused when stale; failures are partial and summarised; secrets
never show up in any output or saved file. Each test runs against ``apimctl serve`` and
``apimctl serve --dialect mashery`` (the ``dialect`` fixture), with the same manifests: the
client detects the dialect itself.
"""

from __future__ import annotations

import json
import os
import pty
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .apply_support import (
    SECRET_VALUES,
    Runs,
    Server,
    apimctl_env,
    apply_summary,
    expected_objects,
    inventory,
    server,
    write_manifest,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir()
                  if p.is_dir() and (any(p.glob("*.y*ml")) or (p / "base").is_dir()))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, dialect_options: tuple[str, ...]) -> Iterator[Server]:
    """One server for the module per dialect; every test works in an area of its own."""
    with server(tmp_path_factory.mktemp("apply-e2e"), *dialect_options, areas=30) as srv:
        yield srv


@pytest.fixture
def area(shared: Server) -> tuple[Server, str]:
    return shared, shared.fresh_token()


def example_variants(folder: Path) -> list[list[str]]:
    """The apply arguments of an example: the folder, or its base with each overlay."""
    if not (folder / "base").is_dir():
        return [[str(folder)]]
    overlays = sorted(p for p in (folder / "overlays").iterdir() if p.is_dir()) if (folder / "overlays").is_dir() else []
    return [[str(folder / "base")]] + [[str(folder / "base"), "--overlay", str(o)] for o in overlays]


def example_env(folder: Path) -> dict[str, str]:
    """The placeholder variables an example ships in ``example.env``."""
    env: dict[str, str] = {}
    file = folder / "example.env"
    if file.exists():
        for line in file.read_text().splitlines():
            name, sep, value = line.partition("=")
            if sep and not line.lstrip().startswith("#"):
                env[name.strip()] = value.strip()
    return env


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_applies_from_empty_and_converges(area: tuple[Server, str], example: Path) -> None:
    srv, tok = area
    env = example_env(example)
    runs = Runs()
    for args in example_variants(example):
        first = runs.run(srv, "apply", "--auto-approve", *args, env=env, token=tok)
        assert first.returncode == 0, first.stdout + first.stderr
        replan = runs.run(srv, "plan", "--detailed-exitcode", *args, env=env, token=tok)
        assert replan.returncode == 0, replan.stdout + replan.stderr
        writes = srv.writes()
        again = runs.run(srv, "apply", "--auto-approve", "--format", "json", *args, env=env, token=tok)
        assert again.returncode == 0, again.stdout + again.stderr
        assert apply_summary(again.stdout)["summary"]["done"] == 0
        assert srv.writes() == writes  # the second apply wrote nothing
    for value in env.values():
        assert not any(value in out for out in runs.outputs)
    runs.assert_no_secrets()


def test_manifest_applies_from_empty_with_nested_writes(area: tuple[Server, str], tmp_path: Path) -> None:
    srv, tok = area
    folder = write_manifest(tmp_path / "m")
    runs = Runs()
    proc = runs.run(srv, "apply", "--auto-approve", "--format", "json", str(folder), token=tok)
    assert proc.returncode == 0, proc.stderr
    result = apply_summary(proc.stdout)
    assert result["summary"] == {"done": 18, "failed": 0, "skipped": 0, "non_converged": 0}
    # nested writes: a domain, a role, one POST per service tree, one for the package with
    # its plans, one for the maintenance event; and the apply lease's create and release
    assert result["calls"]["writes"] == 7 + 2
    found = inventory(srv, tok)
    assert set(found.values()) == {1}
    assert set(found) == expected_objects()
    assert runs.run(srv, "plan", "--detailed-exitcode", str(folder), token=tok).returncode == 0
    runs.assert_no_secrets()


def test_updates_and_deletes_converge(area: tuple[Server, str], tmp_path: Path) -> None:
    srv, tok = area
    folder = write_manifest(tmp_path / "m")
    runs = Runs()
    assert runs.run(srv, "apply", "--auto-approve", str(folder), token=tok).returncode == 0
    text = (folder / "main.yaml").read_text()
    text = text.replace("maxAge: 60", "maxAge: 5").replace("qpsLimitCeiling: 10", "qpsLimitCeiling: 20")
    text = text.replace("/s1/alerts", "/s1/alerts-v2").replace("responseBody: slow down", "responseBody: wait")
    (folder / "main.yaml").write_text(text.replace("    endpoints: [{service: Svc0, endpoint: Alerts}]",
                                                   "    endpoints: [{service: Svc1, endpoint: Alerts}]"))
    proc = runs.run(srv, "apply", "--auto-approve", "--format", "json", str(folder), token=tok)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = apply_summary(proc.stdout)
    assert summary["summary"]["done"] >= 5 and not summary["non_converged"]
    assert runs.run(srv, "plan", "--detailed-exitcode", str(folder), token=tok).returncode == 0
    # without the last service and the maintenance event: deletes (pruned)
    smaller = write_manifest(tmp_path / "m2", services=2)
    text = (smaller / "main.yaml").read_text()
    (smaller / "main.yaml").write_text(text[: text.index("scheduledMaintenanceEvents:")])
    writes = srv.writes()
    refused = runs.run(srv, "apply", "--auto-approve", "--prune", "--max-deletes", "1", str(smaller), token=tok)
    assert refused.returncode == 1 and "--max-deletes 1" in refused.stderr
    assert srv.writes() == writes  # refused before anything was written
    proc = runs.run(srv, "apply", "--auto-approve", "--prune", str(smaller), token=tok)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = inventory(srv, tok)
    assert "service:Svc2" not in found and "maintenanceEvent:Upgrade" not in found
    assert runs.run(srv, "plan", "--prune", "--detailed-exitcode", str(smaller), token=tok).returncode == 0
    runs.assert_no_secrets()


def test_stale_saved_plan_is_refused_and_a_fresh_one_applies(area: tuple[Server, str], tmp_path: Path,
                                                              dialect: str) -> None:
    srv, tok = area
    folder = write_manifest(tmp_path / "m")
    runs = Runs()
    assert runs.run(srv, "apply", "--auto-approve", str(folder), token=tok).returncode == 0
    (folder / "main.yaml").write_text((folder / "main.yaml").read_text().replace('version: "1"', 'version: "2"'))
    saved = tmp_path / "plan.json"
    assert runs.run(srv, "plan", "--out", str(saved), str(folder), token=tok).returncode in (0, 2)
    assert json.loads(saved.read_text())["dialect"] == dialect  # detected, not told
    # an out-of-band change to a service the plan touches
    sid = next(s["id"] for s in srv.get("/services", token=tok) if s["name"] == "Svc1")
    srv.put(f"/services/{sid}", {"description": "changed by hand"}, token=tok)
    assert srv.fetch(f"/services/{sid}", {"fields": "id,description"}, token=tok)["description"] == "changed by hand"
    writes = srv.writes()
    stale = runs.run(srv, "apply", "--auto-approve", "--plan", str(saved), token=tok)
    assert stale.returncode == 1
    assert "stale" in stale.stderr and "service:Svc1" in stale.stderr
    assert srv.writes() == writes  # refused before anything was written
    fresh = tmp_path / "fresh.json"
    assert runs.run(srv, "plan", "--out", str(fresh), str(folder), token=tok).returncode in (0, 2)
    proc = runs.run(srv, "apply", "--auto-approve", "--plan", str(fresh), token=tok)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert runs.run(srv, "plan", "--detailed-exitcode", str(folder), token=tok).returncode == 0
    runs.assert_no_secrets(saved, fresh)


def test_saved_plan_needs_its_secret_variables(area: tuple[Server, str], tmp_path: Path, dialect: str) -> None:
    srv, tok = area
    folder = write_manifest(tmp_path / "m")
    runs = Runs()
    saved = tmp_path / "plan.json"
    assert runs.run(srv, "plan", "--out", str(saved), str(folder), token=tok).returncode in (0, 2)
    assert json.loads(saved.read_text())["dialect"] == dialect  # detected in an empty area too
    assert "${FORECAST_SECRET}" in saved.read_text()  # the reference, never the value
    writes = srv.writes()
    proc = runs.run(srv, "apply", "--auto-approve", "--plan", str(saved), unset=("FORECAST_SECRET",), token=tok)
    assert proc.returncode == 1
    assert "FORECAST_SECRET" in proc.stderr and "nothing was written" in proc.stderr
    assert srv.writes() == writes
    proc = runs.run(srv, "apply", "--auto-approve", "--plan", str(saved), token=tok)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert runs.run(srv, "plan", "--detailed-exitcode", str(folder), token=tok).returncode == 0
    runs.assert_no_secrets(saved)


def test_partial_apply_reports_done_failed_skipped(tmp_path: Path, dialect_options: tuple[str, ...]) -> None:
    folder = write_manifest(tmp_path / "m")
    # domains are not approved on this server: endpoints under them are refused (400)
    with server(tmp_path, *dialect_options, auto_approve=False) as srv:
        runs = Runs()
        proc = runs.run(srv, "apply", "--auto-approve", "--format", "json", str(folder))
        assert proc.returncode == 3, proc.stdout + proc.stderr
        result = apply_summary(proc.stdout)
        done = {o["address"] for o in result["done"]}
        failed = {o["address"]: o["reason"] for o in result["failed"]}
        skipped = {o["address"]: o["reason"] for o in result["skipped"]}
        assert {"domain:example.com", "role:Partners"} <= done
        # the service tree was refused for its endpoints only: the service and its error set
        # are created without them, each endpoint fails naming the property
        assert {"service:Svc0", "errorSet:Svc0/JSON errors"} <= done
        assert "endpoint:Svc0/Forecast" in failed and "endpoint:Svc0/Alerts" in failed
        assert "400" in failed["endpoint:Svc0/Forecast"]
        assert "publicDomains[0].address" in failed["endpoint:Svc0/Forecast"]
        assert "not under an active domain" in failed["endpoint:Svc0/Forecast"]
        assert "plan:Partners/Gold" in skipped and "did not complete" in skipped["plan:Partners/Gold"]
        assert "maintenanceEvent:Upgrade" in skipped
        text = runs.run(srv, "apply", "--auto-approve", str(folder))
        assert text.returncode == 1  # the rerun writes nothing new: only failures
        assert "Failed:" in text.stdout and "Skipped:" in text.stdout
        runs.assert_no_secrets()


def test_refusals_before_anything_is_written(area: tuple[Server, str], tmp_path: Path) -> None:
    srv, tok = area
    folder = write_manifest(tmp_path / "m")
    runs = Runs()
    writes = srv.writes()
    proc = runs.run(srv, "apply", str(folder), token=tok)  # no terminal, no --auto-approve
    assert proc.returncode == 1
    assert "--auto-approve" in proc.stderr
    both = runs.run(srv, "apply", "--auto-approve", "--plan", "x.json", str(folder), token=tok)
    assert both.returncode == 1 and "not both" in both.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = runs.run(srv, "apply", "--auto-approve", "--plan", str(bad), token=tok)
    assert proc.returncode == 1 and "bad.json" in proc.stderr and "Traceback" not in proc.stderr
    missing = runs.run(srv, "apply", "--auto-approve", "--plan", str(tmp_path / "nope.json"), token=tok)
    assert missing.returncode == 1 and "nope.json" in missing.stderr
    assert srv.writes() == writes


def test_subprocess_apply_and_json_summary(area: tuple[Server, str], tmp_path: Path) -> None:
    """The console entry point as CI runs it: `python -m apimctl apply`, no terminal."""
    srv, tok = area
    folder = write_manifest(tmp_path / "m", services=1)
    runs = Runs()
    proc = runs.run(srv, "apply", "--auto-approve", "--format", "json", str(folder), token=tok, subprocess_=True)
    assert proc.returncode == 0, proc.stderr
    assert apply_summary(proc.stdout)["exit_code"] == 0
    lines = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == apply_summary(proc.stdout)["summary"]["done"]  # one plain line per step
    runs.assert_no_secrets()


def test_target_limits_the_apply(area: tuple[Server, str], tmp_path: Path) -> None:
    srv, tok = area
    folder = write_manifest(tmp_path / "m")
    runs = Runs()
    proc = runs.run(srv, "apply", "--auto-approve", "--target", "service:Svc1", str(folder), token=tok)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = inventory(srv, tok)
    assert "service:Svc1" in found and "service:Svc0" not in found and "package:Partners" not in found
    bad = runs.run(srv, "apply", "--auto-approve", "--target", "nonsense", str(folder), token=tok)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr


def test_bare_object_responses(tmp_path: Path) -> None:
    """Servers that answer single objects bare (not as one-element arrays) work the same.
    (The ``mashery`` dialect always answers them bare: every ``mashery`` case covers it.)"""
    folder = write_manifest(tmp_path / "m")
    with server(tmp_path, "--object-responses") as srv:
        runs = Runs()
        proc = runs.run(srv, "apply", "--auto-approve", str(folder))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert set(inventory(srv)) == expected_objects()
        assert runs.run(srv, "plan", "--detailed-exitcode", str(folder)).returncode == 0


def run_on_terminal(srv: Server, token: str, args: list[str], answer: bytes) -> tuple[int, str]:
    """Run `python -m apimctl ARGS` on a pseudo-terminal, answering the confirmation."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: becomes apimctl
        os.execve(sys.executable, [sys.executable, "-m", "apimctl", *args],
                  {**apimctl_env(srv, token), "TERM": "xterm"})
    out, sent = b"", False
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        if not sent and b"Apply these changes?" in out:
            os.write(fd, answer)
            sent = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_terminal_shows_the_plan_and_asks(area: tuple[Server, str], tmp_path: Path) -> None:
    srv, tok = area
    folder = write_manifest(tmp_path / "m", services=1)
    writes = srv.writes()
    code, text = run_on_terminal(srv, tok, ["apply", str(folder)], b"n\n")
    assert code == 1 and "Apply these changes?" in text and "Apply cancelled" in text
    assert 'create service "Svc0"' in text  # the plan was shown
    assert srv.writes() == writes
    code, text = run_on_terminal(srv, tok, ["apply", str(folder)], b"y\n")
    assert code == 0, text
    assert "Apply complete" in text
    assert all(value not in text for value in SECRET_VALUES.values())
    assert "service:Svc0" in inventory(srv, tok)


def test_renames_apply_from_a_saved_plan_with_references_to_the_new_names(
        area: tuple[Server, str], tmp_path: Path) -> None:
    """previousNames: a saved plan is not stale because the renamed objects still carry their
    old names, and plans and maintenance events may already name them by the new ones
    (down to the methods of a renamed endpoint of a renamed service)."""
    srv, tok = area
    folder = write_manifest(tmp_path / "m")
    runs = Runs()
    assert runs.run(srv, "apply", "--auto-approve", str(folder), token=tok).returncode == 0
    before = inventory(srv, tok)
    text = (folder / "main.yaml").read_text()
    text = text.replace("  - name: Svc0\n", "  - name: Weather\n    previousNames: [Svc0]\n")
    text = text.replace("      - name: Forecast\n        requestPathAlias: /s0/",
                        "      - name: Outlook\n        previousNames: [Forecast]\n        requestPathAlias: /s0/")
    text = text.replace("services: [{name: Svc0, endpoints: [Forecast]}]",
                        "services: [{name: Weather, endpoints: [{name: Outlook, undefinedMethodsAllowed: false, "
                        "methods: [getForecast]}]}]")
    text = text.replace("endpoints: [{service: Svc0, endpoint: Alerts}]",
                        "endpoints: [{service: Weather, endpoint: Outlook}, {service: Weather, endpoint: Alerts}]")
    (folder / "main.yaml").write_text(text)
    saved = tmp_path / "plan.json"
    assert runs.run(srv, "plan", "--out", str(saved), str(folder), token=tok).returncode in (0, 2)
    proc = runs.run(srv, "apply", "--auto-approve", "--format", "json", "--plan", str(saved), token=tok)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not apply_summary(proc.stdout)["failed"]
    after = inventory(srv, tok)
    assert "service:Weather" in after and "endpoint:Weather/Outlook" in after and "service:Svc0" not in after
    assert sum(after.values()) == sum(before.values())  # renamed in place: nothing created or deleted
    assert runs.run(srv, "plan", "--detailed-exitcode", str(folder), token=tok).returncode == 0
    runs.assert_no_secrets(saved)
